// AVX-512 attention scores (the other attention pieces are the AVX2 ones). Compiled with
// the AVX-512 flags; called only when cpu_isa_supported(kAvx512).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

// Four keys against NQ query rows: sixteen-lane partial sums over d, folded to eight lanes
// and then one horizontal-add tree for the four keys. With 32 registers, four rows share
// each key load (prefill runs 64 query rows a task). A score's arithmetic does not depend
// on which rows went with it.
template <int NQ>
void scores_four_keys(const float* q, const float* k, int64_t dim, float* s) {
  __m512 a[NQ][4];
  for (int i = 0; i < NQ; ++i)
    for (int u = 0; u < 4; ++u) a[i][u] = _mm512_setzero_ps();
  int64_t d = 0;
  for (; d + 16 <= dim; d += 16) {
    __m512 kv[4];
    for (int u = 0; u < 4; ++u) kv[u] = _mm512_loadu_ps(k + u * dim + d);
    for (int i = 0; i < NQ; ++i) {
      const __m512 qv = _mm512_loadu_ps(q + i * dim + d);
      for (int u = 0; u < 4; ++u) a[i][u] = _mm512_fmadd_ps(qv, kv[u], a[i][u]);
    }
  }
  for (int i = 0; i < NQ; ++i) {
    __m256 h8[4];
    for (int u = 0; u < 4; ++u)
      h8[u] = _mm256_add_ps(_mm512_castps512_ps256(a[i][u]),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a[i][u]), 1)));
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(h8[0], h8[1]), _mm256_hadd_ps(h8[2], h8[3]));
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
    for (; i + 4 <= nq; i += 4)
      scores_four_keys<4>(q + i * dim, k + j * dim, dim, s + i * kAttnKeys + j);
    for (; i < nq; ++i) scores_four_keys<1>(q + i * dim, k + j * dim, dim, s + i * kAttnKeys + j);
  }
}

}  // namespace

void fill_avx512_attention_kernels(CpuKernels& k) { k.attn_scores = attn_scores; }

}  // namespace duet::cpu
