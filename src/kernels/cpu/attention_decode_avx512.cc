// Fused attention for decode-sized tasks (a few query rows of one KV head) over an F16,
// BF16 or Q8_0 head-major cache, AVX-512. Compiled with the AVX-512 flags; called only when
// cpu_isa_supported(kAvx512).
//
// The general path (attention.cc) converts each chunk of keys and values into float rows
// and hands them to separate score / softmax / accumulate pieces, which pays off when a
// prompt's 64 query rows share the conversion. A decoding sequence has one token, so its
// task is one or two query rows (GQA group) and the conversion and the calls were most of
// the work: here a pass over the keys converts each key and value once, in registers, for
// up to two rows, and keeps the softmax state and the output rows in the task's scratch.
// Same arithmetic contract as the general path (float, online softmax over chunks of
// kAttnKeys positions, exp from exp_avx2.h), checked by the same tests against the
// double-precision reference.
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

// How the cache stores a head: 16-bit floats, or Q8_0 blocks (an F16 scale, 32 int8).
enum class KvKind { kF16, kBf16, kQ8_0 };

template <KvKind kKind>
constexpr size_t head_bytes(int64_t dim) {
  return kKind == KvKind::kQ8_0 ? static_cast<size_t>(dim / 32 * 34) : static_cast<size_t>(2 * dim);
}

// Values 16·i .. 16·i + 15 of the head row at `row`, as floats: the 16-bit floats, or a
// Q8_0 row's int8 values without their block's scale (q8_scale), which the callers apply
// once per block of 32 instead of once per value.
template <KvKind kKind>
inline __m512 load16(const uint8_t* row, int i) {
  if constexpr (kKind == KvKind::kQ8_0) {
    const uint8_t* block = row + (i / 2) * 34;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + 16 * (i % 2)));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
  } else {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32 * i));
    if constexpr (kKind == KvKind::kBf16)
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    else
      return _mm512_cvtph_ps(h);
  }
}

// The F16 scale of the Q8_0 block holding values 32·b .. 32·b + 31 of the row at `row`.
inline float q8_scale(const uint8_t* row, int b) {
  uint16_t bits;
  std::memcpy(&bits, row + b * 34, 2);
  return _cvtsh_ss(bits);
}

// Lane j of the result = the sum of the 16 lanes of v[j], j < 8.
inline __m256 sum_lanes8(const __m512 (&v)[8]) {
  __m256 h[8];
  for (int j = 0; j < 8; ++j) h[j] = _mm256_add_ps(_mm512_castps512_ps256(v[j]), high_half(v[j]));
  const __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(h[0], h[1]), _mm256_hadd_ps(h[2], h[3]));
  const __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(h[4], h[5]), _mm256_hadd_ps(h[6], h[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

// Asks, into L2, for row j (of kAttnKeys) of a chunk's keys or values.
template <size_t kHeadBytes>
inline void prefetch_row(const uint8_t* chunk, int j) {
  for (size_t off = 0; off < kHeadBytes; off += 64)
    _mm_prefetch(reinterpret_cast<const char*>(chunk + j * kHeadBytes + off), _MM_HINT_T1);
}

// R (1 or 2) rows of D16·16 dimensions against positions 0..last[r] of one head. The
// softmax state (m, l) and the unnormalized output rows acc (R × dim) are the caller's,
// zero-initialized; the caller divides by l. `after`: the chunk read next once this is done.
//
// Memory: a chunk's block lies anywhere, so the hardware cannot guess the next one. Each
// key and value row asks for the same row of the chunk after it — the next chunk of this
// head, or `after` on the last — so the requests go out spread over the chunk's work, one
// chunk ahead. Measured on eight sequences × 28 layers (a harness alternating the variants,
// two threads), against asking for the whole next chunk at the start of each chunk and
// for nothing across tasks: 1.42-1.58x at 48 and 144 positions (19-21 → 26-34 GB/s).
// Spreading alone gave 1.26-1.44x; asking two chunks ahead ran slower than one, and into
// L1 slower than into L2. In the engine (Q4_K_M 0.6B, one process alternating the variants
// every step or two): eight sequences' steps +3.8-5.7 % at 16+64 positions and +9.9-11.8 %
// at 16+256, one sequence's +0.6-2.4 %.
template <int R, int D16, KvKind kKind>
void decode_rows(const float* q, const PagedKvView& kv, int64_t head, const int32_t* last,
                 const AttnChunkRef& after, float* m, float* l, float* acc) {
  constexpr int64_t kDim = 16 * D16;
  constexpr size_t kHeadBytes = head_bytes<kKind>(kDim);
  int32_t n_pos = 0;
  for (int r = 0; r < R; ++r) n_pos = std::max(n_pos, last[r] + 1);
  alignas(64) float p[R][kAttnKeys];
  for (int64_t p0 = 0; p0 < n_pos; p0 += kAttnKeys) {
    const int n = static_cast<int>(std::min<int64_t>(kAttnKeys, n_pos - p0));
    // A chunk lies in one block (block_size is a multiple of kAttnKeys): one run of keys.
    const size_t at = kv.offset(head, p0);
    const uint8_t* keys = kv.k + at;
    const uint8_t* values = kv.v + at;
    AttnChunkRef ahead = after;
    if (p0 + kAttnKeys < n_pos) {
      const size_t next = kv.offset(head, p0 + kAttnKeys);
      ahead = {kv.k + next, kv.v + next};
    }

    // Scores of eight keys at a time: each key converted once, for every row.
    __m256 s8[R][2];
    for (int g = 0; g < 2; ++g) {
      __m512 dot[R][8];
      for (int j = 0; j < 8; ++j) {
        for (int r = 0; r < R; ++r) dot[r][j] = _mm512_setzero_ps();
        if (ahead.k != nullptr) prefetch_row<kHeadBytes>(ahead.k, 8 * g + j);
        if (8 * g + j >= n) continue;
        const uint8_t* key = keys + (8 * g + j) * kHeadBytes;
        if constexpr (kKind == KvKind::kQ8_0) {  // a block's int8 dot, then its scale
          for (int b = 0; b < D16 / 2; ++b) {
            const __m512 k0 = load16<kKind>(key, 2 * b), k1 = load16<kKind>(key, 2 * b + 1);
            const __m512 scale = _mm512_set1_ps(q8_scale(key, b));
            for (int r = 0; r < R; ++r) {
              const float* qb = q + r * kDim + 32 * b;
              const __m512 t = _mm512_fmadd_ps(_mm512_loadu_ps(qb + 16), k1,
                                               _mm512_mul_ps(_mm512_loadu_ps(qb), k0));
              dot[r][j] = _mm512_fmadd_ps(t, scale, dot[r][j]);
            }
          }
        } else {
          for (int d = 0; d < D16; ++d) {
            const __m512 kd = load16<kKind>(key, d);
            for (int r = 0; r < R; ++r)
              dot[r][j] = _mm512_fmadd_ps(_mm512_loadu_ps(q + r * kDim + 16 * d), kd, dot[r][j]);
          }
        }
      }
      for (int r = 0; r < R; ++r) s8[r][g] = sum_lanes8(dot[r]);
    }

    // Online softmax per row over the positions it may see.
    for (int r = 0; r < R; ++r) {
      const int visible = static_cast<int>(std::clamp<int64_t>(last[r] + 1 - p0, 0, n));
      if (visible == 0) {  // nothing new for this row
        for (int j = 0; j < kAttnKeys; ++j) p[r][j] = 0.0f;
        continue;
      }
      const __mmask16 seen = static_cast<__mmask16>((1u << visible) - 1);
      const __m512 s = join(s8[r][0], s8[r][1]);
      const float m_new = std::max(m[r], _mm512_mask_reduce_max_ps(seen, s));
      // 0 on the first chunk (m was −∞); exactly 1, without the call, when the maximum
      // stays, as it mostly does deep into a context.
      const float corr = m_new == m[r] ? 1.0f : std::exp(m[r] - m_new);
      const __m512 x = _mm512_sub_ps(s, _mm512_set1_ps(m_new));
      const __m512 e = exp16(x);
      const __m512 pr = _mm512_maskz_mov_ps(seen, e);
      _mm512_store_ps(p[r], pr);
      l[r] = l[r] * corr + _mm512_reduce_add_ps(pr);
      m[r] = m_new;
      if (corr != 1.0f)
        for (int d = 0; d < D16; ++d)
          _mm512_storeu_ps(
              acc + r * kDim + 16 * d,
              _mm512_mul_ps(_mm512_loadu_ps(acc + r * kDim + 16 * d), _mm512_set1_ps(corr)));
    }

    // acc += Σ_j p_j · v_j, each value row converted once for every row.
    __m512 o[R][D16];
    for (int r = 0; r < R; ++r)
      for (int d = 0; d < D16; ++d) o[r][d] = _mm512_loadu_ps(acc + r * kDim + 16 * d);
    for (int j = 0; j < n; ++j) {
      const uint8_t* value = values + j * kHeadBytes;
      if (ahead.v != nullptr) prefetch_row<kHeadBytes>(ahead.v, j);
      if constexpr (kKind == KvKind::kQ8_0) {  // the block's scale folded into p_j
        for (int b = 0; b < D16 / 2; ++b) {
          const __m512 v0 = load16<kKind>(value, 2 * b), v1 = load16<kKind>(value, 2 * b + 1);
          const float scale = q8_scale(value, b);
          for (int r = 0; r < R; ++r) {
            const __m512 c = _mm512_set1_ps(p[r][j] * scale);
            o[r][2 * b] = _mm512_fmadd_ps(c, v0, o[r][2 * b]);
            o[r][2 * b + 1] = _mm512_fmadd_ps(c, v1, o[r][2 * b + 1]);
          }
        }
      } else {
        for (int d = 0; d < D16; ++d) {
          const __m512 vd = load16<kKind>(value, d);
          for (int r = 0; r < R; ++r)
            o[r][d] = _mm512_fmadd_ps(_mm512_set1_ps(p[r][j]), vd, o[r][d]);
        }
      }
    }
    if (ahead.v != nullptr)  // a short last chunk: the rows its loop did not ask for
      for (int j = n; j < kAttnKeys; ++j) prefetch_row<kHeadBytes>(ahead.v, j);
    for (int r = 0; r < R; ++r)
      for (int d = 0; d < D16; ++d) _mm512_storeu_ps(acc + r * kDim + 16 * d, o[r][d]);
  }
}

template <int D16, KvKind kKind>
void decode_task(const float* q, int rows, const PagedKvView& kv, int64_t head, const int32_t* last,
                 const AttnChunkRef& next, float* out) {
  constexpr int64_t kDim = 16 * D16;
  const size_t first = kv.offset(head, 0);
  for (int r0 = 0; r0 < rows; r0 += 2) {
    const int n = std::min(2, rows - r0);
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float* acc = out + r0 * kDim;  // accumulate in place, normalize at the end
    std::fill(acc, acc + n * kDim, 0.0f);
    // After a pair of rows, the next pair starts again at this head's first chunk.
    const AttnChunkRef after = r0 + 2 < rows ? AttnChunkRef{kv.k + first, kv.v + first} : next;
    if (n == 2)
      decode_rows<2, D16, kKind>(q + r0 * kDim, kv, head, last + r0, after, m, l, acc);
    else
      decode_rows<1, D16, kKind>(q + r0 * kDim, kv, head, last + r0, after, m, l, acc);
    for (int r = 0; r < n; ++r) {
      const float inv = 1.0f / l[r];  // ≥ 1: the row's maximum contributes exp(0)
      for (int64_t d = 0; d < kDim; ++d) acc[r * kDim + d] *= inv;
    }
  }
}

template <KvKind kKind>
bool decode_for_type(const float* q, int rows, const PagedKvView& kv, int64_t head, int64_t dim,
                     const int32_t* last, const AttnChunkRef& next, float* out) {
  switch (dim) {
    case 16:
      if (kKind == KvKind::kQ8_0) return false;  // a Q8_0 head is whole blocks of 32
      decode_task<1, kKind>(q, rows, kv, head, last, next, out);
      return true;
    case 32:
      decode_task<2, kKind>(q, rows, kv, head, last, next, out);
      return true;
    case 64:
      decode_task<4, kKind>(q, rows, kv, head, last, next, out);
      return true;
    case 128:
      decode_task<8, kKind>(q, rows, kv, head, last, next, out);
      return true;
    default:
      return false;
  }
}

bool attn_decode(const float* q, int rows, const PagedKvView& kv, int64_t head, int64_t dim,
                 const int32_t* last, const AttnChunkRef& next, float* out) {
  if (rows < 1 || rows > kAttnDecodeRows || kv.block_size % kAttnKeys != 0 ||
      !kv.heads_contiguous(dim))
    return false;
  switch (kv.dtype) {
    case GgmlType::F16:
      return decode_for_type<KvKind::kF16>(q, rows, kv, head, dim, last, next, out);
    case GgmlType::BF16:
      return decode_for_type<KvKind::kBf16>(q, rows, kv, head, dim, last, next, out);
    case GgmlType::Q8_0:
      return decode_for_type<KvKind::kQ8_0>(q, rows, kv, head, dim, last, next, out);
    default:
      return false;
  }
}

}  // namespace

void fill_avx512_attention_decode_kernels(CpuKernels& k) { k.attn_decode = attn_decode; }

}  // namespace duet::cpu
