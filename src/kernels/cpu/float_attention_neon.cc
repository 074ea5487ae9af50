// Advanced SIMD (baseline ARMv8-A, every AArch64 CPU) kernels for float weights (F32, F16,
// BF16: 4-wide FMAs against float activations, F16 widened by FCVTL, BF16 by a 16-bit shift)
// and the attention pieces (contracts in kernel_table.h; the plain versions are in
// attention_scalar.cc). Every NEON level uses these. The softmax's exp stays the scalar one.
#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/half.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/tile_dispatch.h"

namespace duet::cpu {
namespace {

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

struct F32Load {
  static float32x4_t load(const uint8_t* row, int64_t c) {
    return vreinterpretq_f32_u8(vld1q_u8(row + 4 * c));
  }
  static float one(const uint8_t* row, int64_t c) {
    float v;
    std::memcpy(&v, row + 4 * c, 4);
    return v;
  }
};
struct F16Load {
  static float32x4_t load(const uint8_t* row, int64_t c) {
    return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(row + 2 * c)));
  }
  static float one(const uint8_t* row, int64_t c) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(load_u16(row + 2 * c)))), 0);
  }
};
struct Bf16Load {  // bf16 is the top half of a float
  static float32x4_t load(const uint8_t* row, int64_t c) {
    return vreinterpretq_f32_u32(vshll_n_u16(vreinterpret_u16_u8(vld1_u8(row + 2 * c)), 16));
  }
  static float one(const uint8_t* row, int64_t c) { return bf16_to_float(load_u16(row + 2 * c)); }
};

// y[t][r] = Σ_c W[r][c]·X[t][c]: per output two 4-lane FMA chains over 8 columns a step,
// added and reduced in a fixed order, then the last cols % 8 columns one fused multiply-add
// at a time, so no load reaches past a row and no output depends on the tile shape.
template <typename L>
struct FloatTile {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    float32x4_t acc[NR][NT][2];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      float32x4_t xv[NT][2];
      for (int t = 0; t < NT; ++t) {
        const float* xt = reinterpret_cast<const float*>(x + t * xs) + c;
        xv[t][0] = vld1q_f32(xt);
        xv[t][1] = vld1q_f32(xt + 4);
      }
      for (int r = 0; r < NR; ++r) {
        const float32x4_t w0 = L::load(w + r * ws, c), w1 = L::load(w + r * ws, c + 4);
        for (int t = 0; t < NT; ++t) {
          acc[r][t][0] = vfmaq_f32(acc[r][t][0], w0, xv[t][0]);
          acc[r][t][1] = vfmaq_f32(acc[r][t][1], w1, xv[t][1]);
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float* xt = reinterpret_cast<const float*>(x + t * xs);
      for (int r = 0; r < NR; ++r) {
        float sum = vaddvq_f32(vaddq_f32(acc[r][t][0], acc[r][t][1]));
        for (int64_t i = c; i < cols; ++i) sum = std::fma(L::one(w + r * ws, i), xt[i], sum);
        y[t * ldy + r] = sum;
      }
    }
  }
};

// ---- attention pieces ----

void f16_to_f32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(x + i))));
  for (; i < n; ++i)
    out[i] = vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(x[i]))), 0);
}

// FCVTN rounds to nearest even (the default FPCR mode), as float_to_fp16 does, with
// overflow to infinity and subnormal results kept.
void f32_to_f16(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  for (; i < n; ++i)
    out[i] = vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(x[i]))), 0);
}

void bf16_to_f32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    vst1q_f32(out + i, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(x + i), 16)));
  for (; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(out + i, &bits, 4);
  }
}

// Four keys at a time against one query row: 4-lane partial sums over d, reduced in a fixed
// order, then the tail; a score's arithmetic does not depend on nq.
void attn_scores(const float* q, int64_t nq, const float* k, int64_t dim, float* s) {
  for (int64_t i = 0; i < nq; ++i) {
    const float* qi = q + i * dim;
    for (int j = 0; j < kAttnKeys; j += 4) {
      float32x4_t a[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f),
                          vdupq_n_f32(0.0f)};
      int64_t d = 0;
      for (; d + 4 <= dim; d += 4) {
        const float32x4_t qv = vld1q_f32(qi + d);
        for (int u = 0; u < 4; ++u) a[u] = vfmaq_f32(a[u], qv, vld1q_f32(k + (j + u) * dim + d));
      }
      for (int u = 0; u < 4; ++u) {
        float sum = vaddvq_f32(a[u]);
        for (int64_t t = d; t < dim; ++t) sum = std::fma(qi[t], k[(j + u) * dim + t], sum);
        s[i * kAttnKeys + j + u] = sum;
      }
    }
  }
}

void attn_accumulate(const float* p, int64_t nq, const float* v, int64_t dim, const float* corr,
                     float* acc) {
  for (int64_t i = 0; i < nq; ++i) {
    const float* pi = p + i * kAttnKeys;
    float* a = acc + i * dim;
    const float32x4_t c = vdupq_n_f32(corr[i]);
    int64_t d = 0;
    for (; d + 16 <= dim; d += 16) {  // four independent FMA chains
      float32x4_t a4[4];
      for (int u = 0; u < 4; ++u) a4[u] = vmulq_f32(vld1q_f32(a + d + 4 * u), c);
      for (int j = 0; j < kAttnKeys; ++j) {
        const float* vj = v + j * dim + d;
        for (int u = 0; u < 4; ++u) a4[u] = vfmaq_n_f32(a4[u], vld1q_f32(vj + 4 * u), pi[j]);
      }
      for (int u = 0; u < 4; ++u) vst1q_f32(a + d + 4 * u, a4[u]);
    }
    for (; d + 4 <= dim; d += 4) {
      float32x4_t a0 = vmulq_f32(vld1q_f32(a + d), c);
      for (int j = 0; j < kAttnKeys; ++j) a0 = vfmaq_n_f32(a0, vld1q_f32(v + j * dim + d), pi[j]);
      vst1q_f32(a + d, a0);
    }
    for (; d < dim; ++d) {
      float sum = a[d] * corr[i];
      for (int j = 0; j < kAttnKeys; ++j) sum = std::fma(pi[j], v[j * dim + d], sum);
      a[d] = sum;
    }
  }
}

}  // namespace

void fill_neon_float_kernels(CpuKernels& k) {
  k.f32 = {ActFormat::kF32, dispatch_tile<FloatTile<F32Load>>};
  k.f16 = {ActFormat::kF32, dispatch_tile<FloatTile<F16Load>>};
  k.bf16 = {ActFormat::kF32, dispatch_tile<FloatTile<Bf16Load>>};
  k.f16_to_f32 = f16_to_f32;
  k.f32_to_f16 = f32_to_f16;
  k.bf16_to_f32 = bf16_to_f32;
  k.attn_scores = attn_scores;
  k.attn_accumulate = attn_accumulate;
}

}  // namespace duet::cpu
