// Fused attention for prompt-sized tasks (up to 64 query rows of one KV head) over a
// head-major cache of F32, F16, BF16 or Q8_0, AVX-512. Compiled with the AVX-512 flags;
// called only when cpu_isa_supported(kAvx512).
//
// Long prompts spend most of their time here: attention grows with the square of the
// prompt, the matrices only linearly (at 4,096 tokens of a 0.6B shape it is over a third of
// the work). So the layout is chosen for the multiply-adds, with the query rows as the
// vector lanes everywhere:
//   - the task's queries are transposed once (dims × rows), so a chunk's scores are
//     broadcast key values times query vectors: sixteen rows' scores per instruction, no
//     horizontal sums;
//   - the online softmax then runs across rows too (a chunk's max, exp, sum are vertical);
//   - the outputs stay transposed (dims × rows), each updated by broadcast values times a
//     vector of sixteen rows' probabilities, and are transposed back once at the end.
// A chunk of keys and values is converted to float once for all of a task's rows. Same
// arithmetic contract as the general path (float, online softmax over chunks of kAttnKeys
// positions); the same tests hold both to the double-precision reference.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

static_assert(kAttnKeys == 16, "a chunk is sixteen keys");
constexpr int kLanes = 16;  // query rows per vector

// n (≤ kAttnKeys) consecutive head rows of `dim` values at src as float rows out[j·dim + d];
// rows n.. are zero. The rows lie back to back (a chunk never crosses a block).
void load_rows(GgmlType dtype, const uint8_t* src, int n, int64_t dim, float* out) {
  const int64_t count = n * dim;
  switch (dtype) {
    case GgmlType::F32:
      std::memcpy(out, src, static_cast<size_t>(count) * sizeof(float));
      break;
    case GgmlType::F16:
      for (int64_t i = 0; i < count; i += 16)
        _mm512_storeu_ps(
            out + i,
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i))));
      break;
    case GgmlType::BF16:
      for (int64_t i = 0; i < count; i += 16) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
        _mm512_storeu_ps(out + i,
                         _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)));
      }
      break;
    default:  // Q8_0: a head is whole blocks of 32 (a 2-byte F16 scale, 32 int8)
      for (int64_t i = 0; i < count; i += 32) {
        const uint8_t* block = src + (i / 32) * 34;
        uint16_t bits;
        std::memcpy(&bits, block, 2);
        const __m512 scale = _mm512_set1_ps(_cvtsh_ss(bits));
        for (int h = 0; h < 2; ++h) {
          const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + 16 * h));
          _mm512_storeu_ps(out + i + 16 * h,
                           _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), scale));
        }
      }
      break;
  }
  std::fill(out + count, out + kAttnKeys * dim, 0.0f);
}

// Asks for one chunk's keys and values ahead of use: blocks lie wherever the block manager
// put them, so the hardware cannot guess the next one.
void prefetch_chunk(const uint8_t* k, const uint8_t* v, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(k + off), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(v + off), _MM_HINT_T1);
  }
}

// RG groups of sixteen query rows (rows ≤ 16·RG; the rest are padding that sees nothing)
// against positions 0..last[r] of one KV head, D16·16 dimensions.
template <int RG, int D16>
void prefill_task(const float* q, int rows, const PagedKvView& kv, int64_t head,
                  const int32_t* last, float* out) {
  constexpr int kDim = 16 * D16;
  constexpr int kRows = kLanes * RG;
  // Queries: dimension d of row 16·g + i at qt[g][d][i]; the unnormalized outputs likewise.
  alignas(64) float qt[RG][kDim][kLanes];
  alignas(64) float acct[RG][kDim][kLanes];
  alignas(64) float keys[kAttnKeys * kDim], values[kAttnKeys * kDim];
  alignas(64) int32_t lastp[kRows];

  int32_t first_pos = last[0], n_pos = 0;
  for (int r = 0; r < kRows; ++r) {
    lastp[r] = r < rows ? last[r] : -1;  // padding rows see no position
    for (int d = 0; d < kDim; ++d)
      qt[r / kLanes][d][r % kLanes] = r < rows ? q[r * kDim + d] : 0.0f;
    if (r < rows) {
      first_pos = std::min(first_pos, last[r]);
      n_pos = std::max(n_pos, last[r] + 1);
    }
  }
  std::memset(acct, 0, sizeof(acct));
  __m512 m[RG], l[RG];
  __m512i lastv[RG];
  for (int g = 0; g < RG; ++g) {
    m[g] = _mm512_set1_ps(-INFINITY);
    l[g] = _mm512_setzero_ps();
    lastv[g] = _mm512_load_si512(lastp + kLanes * g);
  }

  const size_t head_bytes = ggml_row_bytes(kv.dtype, kDim);
  for (int64_t p0 = 0; p0 < n_pos; p0 += kAttnKeys) {
    const int n = static_cast<int>(std::min<int64_t>(kAttnKeys, n_pos - p0));
    const size_t at = kv.offset(head, p0);
    if (p0 + kAttnKeys < n_pos) {
      const size_t next = kv.offset(head, p0 + kAttnKeys);
      prefetch_chunk(kv.k + next, kv.v + next,
                     head_bytes * std::min<size_t>(kAttnKeys, n_pos - p0 - kAttnKeys));
    }
    load_rows(kv.dtype, kv.k + at, n, kDim, keys);
    load_rows(kv.dtype, kv.v + at, n, kDim, values);

    // One group of sixteen rows at a time, its scores, softmax and outputs in registers,
    // so that what the group touches (its queries and outputs, 8 KiB each at 128
    // dimensions, and the chunk's keys and values) stays in L1.
    const bool masking = p0 + kAttnKeys - 1 > first_pos;  // some row cannot see all of it
    for (int g = 0; g < RG; ++g) {
      // Scores: a broadcast key value times sixteen rows' queries, d in order.
      __m512 s[kAttnKeys];
      for (int j = 0; j < kAttnKeys; ++j) s[j] = _mm512_setzero_ps();
      for (int d = 0; d < kDim; ++d) {
        const __m512 qv = _mm512_load_ps(qt[g][d]);
        for (int j = 0; j < kAttnKeys; ++j)
          s[j] = _mm512_fmadd_ps(_mm512_set1_ps(keys[j * kDim + d]), qv, s[j]);
      }

      // The online softmax across the rows. A row whose last position is before key j
      // gets −∞ there (exactly 0 after the exp); a row that has seen nothing yet keeps
      // m = −∞, and subtracts 0 instead so that no −∞ − −∞ appears.
      __mmask16 seen[kAttnKeys];
      __m512 mx = m[g];
      for (int j = 0; j < kAttnKeys; ++j) {
        seen[j] = masking ? _mm512_cmp_epi32_mask(_mm512_set1_epi32(static_cast<int32_t>(p0 + j)),
                                                  lastv[g], _MM_CMPINT_LE)
                          : static_cast<__mmask16>(0xffff);
        mx = _mm512_mask_max_ps(mx, seen[j], mx, s[j]);
      }
      const __mmask16 none = _mm512_cmp_ps_mask(mx, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
      const __m512 shift = _mm512_mask_mov_ps(mx, none, _mm512_setzero_ps());
      const __m512 corr = exp16(_mm512_sub_ps(m[g], shift));  // ~0 on a row's first chunk
      __m512 sum = _mm512_setzero_ps();
      for (int j = 0; j < kAttnKeys; ++j) {
        s[j] = _mm512_maskz_mov_ps(seen[j], exp16(_mm512_sub_ps(s[j], shift)));
        sum = _mm512_add_ps(sum, s[j]);
      }
      l[g] = _mm512_fmadd_ps(l[g], corr, sum);
      m[g] = mx;

      // acct[d] ← acct[d]·corr + Σ_j values[j][d] · p_j, eight dimensions at a time.
      for (int d0 = 0; d0 < kDim; d0 += 8) {
        __m512 a[8];
        for (int i = 0; i < 8; ++i) a[i] = _mm512_mul_ps(_mm512_load_ps(acct[g][d0 + i]), corr);
        for (int j = 0; j < kAttnKeys; ++j)
          for (int i = 0; i < 8; ++i)
            a[i] = _mm512_fmadd_ps(_mm512_set1_ps(values[j * kDim + d0 + i]), s[j], a[i]);
        for (int i = 0; i < 8; ++i) _mm512_store_ps(acct[g][d0 + i], a[i]);
      }
    }
  }

  // Normalized and transposed back: out[r·dim + d]. A real row has seen position 0 at
  // least, so its l ≥ 1 (its maximum contributes exp(0)).
  for (int g = 0; g < RG; ++g) {
    const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), l[g]);
    const int lanes = std::min(kLanes, rows - kLanes * g);
    for (int d = 0; d < kDim; ++d) {
      alignas(64) float v[kLanes];
      _mm512_store_ps(v, _mm512_mul_ps(_mm512_load_ps(acct[g][d]), inv));
      for (int i = 0; i < lanes; ++i) out[(kLanes * g + i) * kDim + d] = v[i];
    }
  }
}

template <int D16>
void prefill_for_dim(const float* q, int rows, const PagedKvView& kv, int64_t head,
                     const int32_t* last, float* out) {
  switch ((rows + kLanes - 1) / kLanes) {
    case 1:
      return prefill_task<1, D16>(q, rows, kv, head, last, out);
    case 2:
      return prefill_task<2, D16>(q, rows, kv, head, last, out);
    case 3:
      return prefill_task<3, D16>(q, rows, kv, head, last, out);
    default:
      return prefill_task<4, D16>(q, rows, kv, head, last, out);
  }
}

bool attn_prefill(const float* q, int rows, const PagedKvView& kv, int64_t head, int64_t dim,
                  const int32_t* last, float* out) {
  if (rows < 1 || rows > kAttnPrefillRows || kv.block_size % kAttnKeys != 0 ||
      !kv.heads_contiguous(dim))
    return false;
  switch (kv.dtype) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
      break;
    default:
      return false;
  }
  switch (dim) {
    case 64:
      prefill_for_dim<4>(q, rows, kv, head, last, out);
      return true;
    case 128:
      prefill_for_dim<8>(q, rows, kv, head, last, out);
      return true;
    default:
      return false;
  }
}

}  // namespace

void fill_avx512_attention_prefill_kernels(CpuKernels& k) { k.attn_prefill = attn_prefill; }

}  // namespace duet::cpu
