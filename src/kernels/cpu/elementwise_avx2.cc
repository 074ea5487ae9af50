// AVX2 element-wise ops (RMSNorm, SwiGLU, add, RoPE rotation). They are a few percent of a
// forward pass, so the AVX-512 path uses these too. Compiled with -mavx2 -mfma -mf16c;
// called only when cpu_isa_supported(kAvx2).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/exp_avx2.h"
#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

// RMSNorm with the reference's arithmetic: the sum of squares in double (each float
// square is exact in double), y = float(x · inv) · w. Only the summation order differs.
void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= dim; i += 8) {
      const __m256 v = _mm256_loadu_ps(xr + i);
      const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
      const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      acc0 = _mm256_fmadd_pd(lo, lo, acc0);
      acc1 = _mm256_fmadd_pd(hi, hi, acc1);
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, _mm256_add_pd(acc0, acc1));
    double ss = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (int64_t j = i; j < dim; ++j) ss += static_cast<double>(xr[j]) * xr[j];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
    const __m256d vinv = _mm256_set1_pd(inv);
    for (i = 0; i + 8 <= dim; i += 8) {
      const __m256 v = _mm256_loadu_ps(xr + i);
      const __m128 lo =
          _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), vinv));
      const __m128 hi =
          _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), vinv));
      const __m256 n = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
      _mm256_storeu_ps(yr + i, _mm256_mul_ps(n, _mm256_loadu_ps(w + i)));
    }
    for (; i < dim; ++i) yr[i] = static_cast<float>(xr[i] * inv) * w[i];
  }
}

// out = g / (1 + e^−g) · up
void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void add_inplace(float* x, const float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) x[i] += y[i];
}

void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* x0p = x + h * head_dim;
    float* x1p = x0p + half;
    int64_t i = 0;
    for (; i + 8 <= half; i += 8) {
      const __m256 x0 = _mm256_loadu_ps(x0p + i), x1 = _mm256_loadu_ps(x1p + i);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(x0p + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
      _mm256_storeu_ps(x1p + i, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
    }
    for (; i < half; ++i) {
      const float x0 = x0p[i], x1 = x1p[i];
      x0p[i] = x0 * cos[i] - x1 * sin[i];
      x1p[i] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

}  // namespace

void fill_avx2_elementwise_kernels(CpuKernels& k) {
  k.rmsnorm = rmsnorm;
  k.swiglu = swiglu;
  k.add_inplace = add_inplace;
  k.rope_rotate = rope_rotate;
}

}  // namespace duet::cpu
