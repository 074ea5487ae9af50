// AVX-512 kernels for float weights (F32, F16, BF16). Compiled with AVX-512 flags and
// called only when cpu_isa_supported(kAvx512) (kAvx512Bf16 for the VDPBF16PS kernel).
//
// F32/F16 weights meet float activations in 16-wide FMAs (F16 widened by VCVTPH2PS), so
// the only error is float rounding. BF16 weights either widen to float the same way, or,
// with AVX512_BF16, meet activations rounded to bf16 in VDPBF16PS (32 products per
// instruction; the activation rounding costs up to 2^-8 relative per element).
// Column tails use masked loads, which never touch memory past the row.
// GCC 12 warns about the deliberately undefined pass-through operands inside its own
// AVX-512 intrinsics (fixed in GCC 13); the warning is about the header, not this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/tile_dispatch.h"

namespace duet::cpu {
namespace {

inline __mmask16 tail_mask16(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}
inline __mmask32 tail_mask32(int64_t left) {
  return left >= 32 ? static_cast<__mmask32>(0xFFFFFFFFu)
                    : static_cast<__mmask32>((1u << left) - 1);
}

// load(): 16 full values; load(m): the values under mask m, zero elsewhere. Plain loads in
// the main loop matter: GCC treats a masked load as possibly reading the accumulators and
// then keeps them in memory.
struct F32Load {
  static __m512 load(const uint8_t* row, int64_t c) { return _mm512_loadu_ps(row + 4 * c); }
  static __m512 load(const uint8_t* row, int64_t c, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, row + 4 * c);
  }
};
struct F16Load {
  static __m512 load(const uint8_t* row, int64_t c) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * c)));
  }
  static __m512 load(const uint8_t* row, int64_t c, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * c));
  }
};
struct Bf16Load {  // bf16 is the top half of a float
  static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 load(const uint8_t* row, int64_t c) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * c)));
  }
  static __m512 load(const uint8_t* row, int64_t c, __mmask16 m) {
    return widen(_mm256_maskz_loadu_epi16(m, row + 2 * c));
  }
};

// The full-width loop and the masked tail are written out separately (see F32Load).
template <typename L>
struct FloatKernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      __m512 wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = L::load(w + r * ws, c);
      for (int t = 0; t < NT; ++t) {
        const __m512 xv = _mm512_loadu_ps(x + t * xs + 4 * c);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
      }
    }
    if (c < cols) {
      const __mmask16 m = tail_mask16(cols - c);
      __m512 wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = L::load(w + r * ws, c, m);
      for (int t = 0; t < NT; ++t) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * xs + 4 * c);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

// ---- AVX512_BF16 ----

void to_bf16(const float* x, int64_t cols, uint8_t* out) {
  for (int64_t c = 0; c < cols; c += 16) {
    const __mmask16 m = tail_mask16(cols - c);
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + c));  // nearest even
    _mm256_mask_storeu_epi16(out + 2 * c, m, (__m256i)h);
  }
}

struct Bf16DotKernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      __m512bh wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = (__m512bh)_mm512_loadu_si512(w + r * ws + 2 * c);
      for (int t = 0; t < NT; ++t) {
        const __m512bh xv = (__m512bh)_mm512_loadu_si512(x + t * xs + 2 * c);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wv[r], xv);
      }
    }
    if (c < cols) {
      const __mmask32 m = tail_mask32(cols - c);
      __m512bh wv[NR];
      for (int r = 0; r < NR; ++r)
        wv[r] = (__m512bh)_mm512_maskz_loadu_epi16(m, w + r * ws + 2 * c);
      for (int t = 0; t < NT; ++t) {
        const __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(m, x + t * xs + 2 * c);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wv[r], xv);
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

}  // namespace

void fill_avx512_float_kernels(CpuKernels& k, bool bf16_dot) {
  k.f32 = {ActFormat::kF32, dispatch_tile<FloatKernel<F32Load>>};
  k.f16 = {ActFormat::kF32, dispatch_tile<FloatKernel<F16Load>>};
  if (bf16_dot) {
    k.bf16 = {ActFormat::kBf16, dispatch_tile<Bf16DotKernel>};
    k.to_bf16 = to_bf16;
  } else {
    k.bf16 = {ActFormat::kF32, dispatch_tile<FloatKernel<Bf16Load>>};
  }
}

}  // namespace duet::cpu
