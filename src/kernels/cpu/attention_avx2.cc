// AVX2 + FMA versions of the attention pieces (contracts in kernel_table.h; the plain
// versions are in attention_scalar.cc). The AVX-512 paths use these too: attention is a
// small share of a forward pass at ordinary context lengths. Compiled with -mavx2 -mfma
// -mf16c; called only when cpu_isa_supported(kAvx2).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/exp_avx2.h"
#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

static_assert(kAttnKeys == 16, "a chunk of scores is two 8-float vectors");

// e^x with inputs below −87 (including −∞, a masked score) giving exactly 0, where exp8
// would give ~1e-38; the callers never pass more than 0.
inline __m256 exp_ps(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  return _mm256_andnot_ps(underflow, exp8(x));
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

void f16_to_f32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(x[i]);
}

void f32_to_f16(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

void bf16_to_f32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) {
    const __m128i w = _mm_cvtsi32_si128(static_cast<int>(static_cast<uint32_t>(x[i]) << 16));
    out[i] = _mm_cvtss_f32(_mm_castsi128_ps(w));
  }
}

// Keys as rows: four keys at a time, their dots with one or two query rows in eight-lane
// partial sums over d, then one horizontal-add tree for the four. Two rows share each key
// load; a score's arithmetic is the same whether its row went alone or in a pair.
template <int NQ>
void scores_four_keys(const float* q, const float* k, int64_t dim, float* s) {
  __m256 a[NQ][4];
  for (int i = 0; i < NQ; ++i)
    for (int u = 0; u < 4; ++u) a[i][u] = _mm256_setzero_ps();
  int64_t d = 0;
  for (; d + 8 <= dim; d += 8) {
    __m256 kv[4];
    for (int u = 0; u < 4; ++u) kv[u] = _mm256_loadu_ps(k + u * dim + d);
    for (int i = 0; i < NQ; ++i) {
      const __m256 qv = _mm256_loadu_ps(q + i * dim + d);
      for (int u = 0; u < 4; ++u) a[i][u] = _mm256_fmadd_ps(qv, kv[u], a[i][u]);
    }
  }
  for (int i = 0; i < NQ; ++i) {
    // [a0 a1 a2 a3] → the four sums in one vector.
    const __m256 h =
        _mm256_hadd_ps(_mm256_hadd_ps(a[i][0], a[i][1]), _mm256_hadd_ps(a[i][2], a[i][3]));
    alignas(16) float out[4];
    _mm_store_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
    for (int u = 0; u < 4; ++u) {
      float tail = 0.0f;
      for (int64_t t = d; t < dim; ++t) tail += q[i * dim + t] * k[u * dim + t];
      s[i * kAttnKeys + u] = out[u] + tail;
    }
  }
}

void attn_scores(const float* q, int64_t nq, const float* k, int64_t dim, float* s) {
  for (int j = 0; j < kAttnKeys; j += 4) {
    int64_t i = 0;
    for (; i + 2 <= nq; i += 2)
      scores_four_keys<2>(q + i * dim, k + j * dim, dim, s + i * kAttnKeys + j);
    if (i < nq) scores_four_keys<1>(q + i * dim, k + j * dim, dim, s + i * kAttnKeys + j);
  }
}

float attn_exp_sum(float* s, float m) {
  const __m256 vm = _mm256_set1_ps(m);
  const __m256 e0 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s), vm));
  const __m256 e1 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + 8), vm));
  _mm256_storeu_ps(s, e0);
  _mm256_storeu_ps(s + 8, e1);
  return hsum(_mm256_add_ps(e0, e1));
}

void attn_accumulate(const float* p, int64_t nq, const float* v, int64_t dim, const float* corr,
                     float* acc) {
  for (int64_t i = 0; i < nq; ++i) {
    const float* pi = p + i * kAttnKeys;
    float* a = acc + i * dim;
    const __m256 c = _mm256_set1_ps(corr[i]);
    int64_t d = 0;
    for (; d + 64 <= dim; d += 64) {  // eight vectors: eight independent FMA chains
      __m256 acc8[8];
      for (int k = 0; k < 8; ++k) acc8[k] = _mm256_mul_ps(_mm256_loadu_ps(a + d + 8 * k), c);
      for (int j = 0; j < kAttnKeys; ++j) {
        const __m256 b = _mm256_broadcast_ss(pi + j);
        const float* vj = v + j * dim + d;
        for (int k = 0; k < 8; ++k)
          acc8[k] = _mm256_fmadd_ps(b, _mm256_loadu_ps(vj + 8 * k), acc8[k]);
      }
      for (int k = 0; k < 8; ++k) _mm256_storeu_ps(a + d + 8 * k, acc8[k]);
    }
    for (; d + 32 <= dim; d += 32) {  // four vectors of the row at a time
      __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(a + d), c);
      __m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(a + d + 8), c);
      __m256 a2 = _mm256_mul_ps(_mm256_loadu_ps(a + d + 16), c);
      __m256 a3 = _mm256_mul_ps(_mm256_loadu_ps(a + d + 24), c);
      for (int j = 0; j < kAttnKeys; ++j) {
        const __m256 b = _mm256_broadcast_ss(pi + j);
        const float* vj = v + j * dim + d;
        a0 = _mm256_fmadd_ps(b, _mm256_loadu_ps(vj), a0);
        a1 = _mm256_fmadd_ps(b, _mm256_loadu_ps(vj + 8), a1);
        a2 = _mm256_fmadd_ps(b, _mm256_loadu_ps(vj + 16), a2);
        a3 = _mm256_fmadd_ps(b, _mm256_loadu_ps(vj + 24), a3);
      }
      _mm256_storeu_ps(a + d, a0);
      _mm256_storeu_ps(a + d + 8, a1);
      _mm256_storeu_ps(a + d + 16, a2);
      _mm256_storeu_ps(a + d + 24, a3);
    }
    for (; d + 8 <= dim; d += 8) {
      __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(a + d), c);
      for (int j = 0; j < kAttnKeys; ++j)
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(pi + j), _mm256_loadu_ps(v + j * dim + d), a0);
      _mm256_storeu_ps(a + d, a0);
    }
    for (; d < dim; ++d) {
      float sum = a[d] * corr[i];
      for (int j = 0; j < kAttnKeys; ++j) sum += pi[j] * v[j * dim + d];
      a[d] = sum;
    }
  }
}

}  // namespace

void fill_avx2_attention_kernels(CpuKernels& k) {
  k.f16_to_f32 = f16_to_f32;
  k.f32_to_f16 = f32_to_f16;
  k.bf16_to_f32 = bf16_to_f32;
  k.attn_scores = attn_scores;
  k.attn_exp_sum = attn_exp_sum;
  k.attn_accumulate = attn_accumulate;
}

}  // namespace duet::cpu
