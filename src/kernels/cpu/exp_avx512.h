// e^x over sixteen lanes for the AVX-512 kernels, and the two half-vector helpers it needs.
// Only for files compiled with the AVX-512 flags (AVX512F without DQ: halves through the
// double-precision casts); `static` for the reason exp_avx2.h gives.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/exp_avx2.h"

namespace duet::cpu {

// [lo, hi] as one vector, and the upper half of one.
static inline __m512 join(__m256 lo, __m256 hi) {
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}
static inline __m256 high_half(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

// exp8 on each half: the same bits as the AVX2 kernels' softmax, lane for lane. (On a CPU
// that splits 512-bit work into two 256-bit halves anyway, as Zen 4 does, it costs the same
// as a 512-bit polynomial.)
static inline __m512 exp16(__m512 x) {
  return join(exp8(_mm512_castps512_ps256(x)), exp8(high_half(x)));
}

}  // namespace duet::cpu
