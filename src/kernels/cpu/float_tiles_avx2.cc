// AVX2 kernels for float weights (F32, F16, BF16): 8-wide FMAs against float activations,
// F16 widened by VCVTPH2PS, BF16 by a 16-bit shift. Compiled with -mavx2 -mfma -mf16c;
// called only when cpu_isa_supported(kAvx2). The last cols % 8 columns are summed in
// scalar code, so no load reaches past a row.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/tile_dispatch.h"

namespace duet::cpu {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

struct F32Load {
  static __m256 load(const uint8_t* row, int64_t c) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row + 4 * c));
  }
  static float one(const uint8_t* row, int64_t c) {
    float v;
    std::memcpy(&v, row + 4 * c, 4);
    return v;
  }
};
struct F16Load {
  static __m256 load(const uint8_t* row, int64_t c) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * c)));
  }
  static float one(const uint8_t* row, int64_t c) { return _cvtsh_ss(load_u16(row + 2 * c)); }
};
struct Bf16Load {  // bf16 is the top half of a float
  static __m256 load(const uint8_t* row, int64_t c) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * c)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float one(const uint8_t* row, int64_t c) {
    const uint32_t bits = static_cast<uint32_t>(load_u16(row + 2 * c)) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
};

template <typename L>
struct FloatKernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    const float* xr[NT];
    for (int t = 0; t < NT; ++t) xr[t] = reinterpret_cast<const float*>(x + t * xs);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      __m256 wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = L::load(w + r * ws, c);
      for (int t = 0; t < NT; ++t) {
        const __m256 xv = _mm256_loadu_ps(xr[t] + c);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) {
        float tail = 0.0f;
        for (int64_t i = c; i < cols; ++i) tail += L::one(w + r * ws, i) * xr[t][i];
        y[t * ldy + r] = hsum(acc[r][t]) + tail;
      }
  }
};

}  // namespace

void fill_avx2_float_kernels(CpuKernels& k) {
  k.f32 = {ActFormat::kF32, dispatch_tile<FloatKernel<F32Load>>};
  k.f16 = {ActFormat::kF32, dispatch_tile<FloatKernel<F16Load>>};
  k.bf16 = {ActFormat::kF32, dispatch_tile<FloatKernel<Bf16Load>>};
}

}  // namespace duet::cpu
