// The AArch64 tiles for quantized weights, included by one file per level:
// quant_tiles_neon.cc (baseline Advanced SIMD), quant_tiles_neon_dotprod.cc (+dotprod) and
// quant_tiles_neon_i8mm.cc (+dotprod+i8mm), each compiled with its own -march. Everything
// here is in an unnamed namespace, so each of those files keeps a private copy compiled with
// its own flags (an inline function with external linkage could be the one the linker keeps
// for a CPU without the instructions; see act_format.h).
//
// A weight row is read one unit at a time (a block of 32 for Q8_0 / Q4_0 / Q5_0 / IQ4_NL, a
// super-block of 256 for Q4_K / Q5_K / Q6_K) as vectors of 16 signed 8-bit codes, each
// vector's sum of products with the activation codes scaled by an integer (the K-quants'
// sub-block scales). Those sums are exact in 32-bit integers on every level:
//   baseline  SMULL/SMLAL2 into int16 (|w·a| ≤ 128·127, two of them < 2^15), then SADALP
//   dotprod   SDOT: four int8 products into each int32 lane
//   i8mm      SMMLA: two weight rows × two tokens at once (8 bytes each, a 2×2 int32 result);
//             the rows and tokens left over go through SDOT
// so the float step that follows (per output and unit, one fused multiply-add in a fixed
// order) sees the same integers whatever the level and the tile shape, and every output is
// the same bits on the three levels and in every tile.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/act_format.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kquant_scales.h"
#include "kernels/cpu/tile_dispatch.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu {
namespace {  // NOLINT(google-build-namespaces): one private copy per including file

inline float neon_fp16(uint16_t h) {
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

// acc + the products of 16 signed bytes, summed in groups into four int32 lanes.
inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t a) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, w, a);
#else
  return vpadalq_s16(acc, vmlal_high_s8(vmull_s8(vget_low_s8(w), vget_low_s8(a)), w, a));
#endif
}

inline int8x16_t low_nibbles(uint8x16_t v) {
  return vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F)));
}
inline int8x16_t high_nibbles(uint8x16_t v) { return vreinterpretq_s8_u8(vshrq_n_u8(v, 4)); }

// 0x10 in byte j where bit `first + j` of the little-endian word at qh is set (the fifth bits
// of Q5_0, for elements first..first+15 with first 0 or 16).
inline uint8x16_t fifth_bits16(const uint8_t* qh, int first) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  bits >>= first;
  const uint8x16_t spread = vcombine_u8(vdup_n_u8(static_cast<uint8_t>(bits)),
                                        vdup_n_u8(static_cast<uint8_t>(bits >> 8)));
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  return vandq_u8(vtstq_u8(spread, vld1q_u8(kBit)), vdupq_n_u8(0x10));
}

// ---- formats: a unit's codes, scales and the float step ----

// Blocks of 32 with one fp16 scale: y = Σ_b dw_b·dx_b·Σ w·a.
template <typename Block>
struct Blocks32Base {
  static constexpr int kCols = 32, kChunks = 2;
  static constexpr bool kScaled = false;
  using Act = Q8x32Row;
  struct Unit {
    int8x16_t c[2];
    int32_t sc[2];  // unused (kScaled is false)
    float d;
  };
  static Act act(const uint8_t* x, int64_t cols) { return q8x32_row(x, cols); }
  static const int8_t* act_codes(const Act& a, int64_t u) { return a.qs + 32 * u; }
  static const Block& block(const uint8_t* row, int64_t u) {
    return reinterpret_cast<const Block*>(row)[u];
  }
  static float finish(float acc, int32_t isum, const Unit& w, const Act& a, int64_t u) {
    return std::fma(static_cast<float>(isum), w.d * a.d[u], acc);
  }
};

struct Q8_0Format : Blocks32Base<BlockQ8_0> {
  static void load(const uint8_t* row, int64_t u, Unit& out) {
    const BlockQ8_0& b = block(row, u);
    out.c[0] = vld1q_s8(b.qs);
    out.c[1] = vld1q_s8(b.qs + 16);
    out.d = neon_fp16(b.d);
  }
};

struct Q4_0Format : Blocks32Base<BlockQ4_0> {
  static void load(const uint8_t* row, int64_t u, Unit& out) {  // nibble − 8
    const BlockQ4_0& b = block(row, u);
    const uint8x16_t q = vld1q_u8(b.qs);
    out.c[0] = vsubq_s8(low_nibbles(q), vdupq_n_s8(8));
    out.c[1] = vsubq_s8(high_nibbles(q), vdupq_n_s8(8));
    out.d = neon_fp16(b.d);
  }
};

struct Q5_0Format : Blocks32Base<BlockQ5_0> {
  static void load(const uint8_t* row, int64_t u, Unit& out) {  // 5-bit code − 16
    const BlockQ5_0& b = block(row, u);
    const uint8x16_t q = vld1q_u8(b.qs);
    const uint8x16_t lo = vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), fifth_bits16(b.qh, 0));
    const uint8x16_t hi = vorrq_u8(vshrq_n_u8(q, 4), fifth_bits16(b.qh, 16));
    out.c[0] = vsubq_s8(vreinterpretq_s8_u8(lo), vdupq_n_s8(16));
    out.c[1] = vsubq_s8(vreinterpretq_s8_u8(hi), vdupq_n_s8(16));
    out.d = neon_fp16(b.d);
  }
};

struct IQ4_NLFormat : Blocks32Base<BlockIQ4_NL> {
  static void load(const uint8_t* row, int64_t u, Unit& out) {  // the grid's signed values
    const BlockIQ4_NL& b = block(row, u);
    const int8x16_t grid = vld1q_s8(kIq4nlValues);
    const uint8x16_t q = vld1q_u8(b.qs);
    out.c[0] = vqtbl1q_s8(grid, vandq_u8(q, vdupq_n_u8(0x0F)));
    out.c[1] = vqtbl1q_s8(grid, vshrq_n_u8(q, 4));
    out.d = neon_fp16(b.d);
  }
};

// The K-quants' super-blocks: 256 columns in 16 chunks of 16, each chunk with its own scale,
// against activations quantized per 256.
struct Super256Base {
  static constexpr int kCols = 256, kChunks = 16;
  static constexpr bool kScaled = true;
  using Act = Q8x256Row;
  static Act act(const uint8_t* x, int64_t cols) { return q8x256_row(x, cols); }
  static const int8_t* act_codes(const Act& a, int64_t u) { return a.qs + 256 * u; }
};

// Q4_K and Q5_K: y = Σ_sb dx·(d·Σ_j sc_j·Σ u·a − dmin·Σ_j m_j·Σ_{32 of j} a), u the unsigned
// code of sub-block j (32 columns: chunks 2j and 2j + 1).
template <bool kQ5>
struct K45Format : Super256Base {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;
  struct Unit {
    int8x16_t c[16];
    int32_t sc[16];
    int16x8_t mins;
    float d, dmin;
  };
  static void load(const uint8_t* row, int64_t u, Unit& out) {
    const Block& b = reinterpret_cast<const Block*>(row)[u];
    uint8_t sc[8], mn[8];
    unpack_k4_scales(b.scales, sc, mn);
    for (int j = 0; j < 16; ++j) out.sc[j] = sc[j / 2];
    out.mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mn)));
    out.d = neon_fp16(b.d);
    out.dmin = neon_fp16(b.dmin);
    // Sub-block 2g: low nibbles of qs[32g..32g+31]; sub-block 2g + 1: their high nibbles.
    for (int g = 0; g < 4; ++g) {
      const uint8x16_t raw0 = vld1q_u8(b.qs + 32 * g), raw1 = vld1q_u8(b.qs + 32 * g + 16);
      out.c[4 * g] = low_nibbles(raw0);
      out.c[4 * g + 1] = low_nibbles(raw1);
      out.c[4 * g + 2] = high_nibbles(raw0);
      out.c[4 * g + 3] = high_nibbles(raw1);
    }
    if constexpr (kQ5) {  // bit j of qh[l]: the fifth bit of element l of sub-block j
      const uint8x16_t qh0 = vld1q_u8(b.qh), qh1 = vld1q_u8(b.qh + 16);
      for (int j = 0; j < 8; ++j) {
        const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << j)), five = vdupq_n_u8(0x10);
        out.c[2 * j] =
            vorrq_s8(out.c[2 * j], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(qh0, bit), five)));
        out.c[2 * j + 1] =
            vorrq_s8(out.c[2 * j + 1], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(qh1, bit), five)));
      }
    }
  }
  static float finish(float acc, int32_t isum, const Unit& w, const Act& a, int64_t u) {
    const int16x8_t sums = vld1q_s16(a.sums32 + 8 * u);  // Σ a over each sub-block
    const int32_t msum = vaddvq_s32(
        vmlal_high_s16(vmull_s16(vget_low_s16(w.mins), vget_low_s16(sums)), w.mins, sums));
    const float dx = a.d[u];
    acc = std::fma(static_cast<float>(isum), w.d * dx, acc);
    return std::fma(static_cast<float>(-msum), w.dmin * dx, acc);
  }
};

// Q6_K: y = Σ_sb d·dx·Σ_k sc_k·Σ (q − 32)·a over sub-blocks k of 16 (chunk k); see
// ref::dequant_q6_k for where the 4 + 2 bits of each code live.
struct K6Format : Super256Base {
  struct Unit {
    int8x16_t c[16];
    int32_t sc[16];
    float d;
  };
  static void load(const uint8_t* row, int64_t u, Unit& out) {
    const BlockQ6_K& b = reinterpret_cast<const BlockQ6_K*>(row)[u];
    out.d = neon_fp16(b.d);
    for (int k = 0; k < 16; ++k) out.sc[k] = b.scales[k];
    const uint8x16_t nib = vdupq_n_u8(0x0F), two = vdupq_n_u8(0x30);
    const int8x16_t offset = vdupq_n_s8(32);
    for (int h = 0; h < 2; ++h)
      for (int s = 0; s < 2; ++s) {  // l = 16s..16s + 15 of each 32 of half h
        const uint8x16_t ql0 = vld1q_u8(b.ql + 64 * h + 16 * s);
        const uint8x16_t ql1 = vld1q_u8(b.ql + 64 * h + 32 + 16 * s);
        const uint8x16_t qh = vld1q_u8(b.qh + 32 * h + 16 * s);
        // Elements 128h + 32p + l: ql's low (p = 0, 1) or high (p = 2, 3) nibbles, qh's bits
        // 2p..2p + 1 on top.
        const uint8x16_t q[4] = {
            vorrq_u8(vandq_u8(ql0, nib), vandq_u8(vshlq_n_u8(qh, 4), two)),
            vorrq_u8(vandq_u8(ql1, nib), vandq_u8(vshlq_n_u8(qh, 2), two)),
            vorrq_u8(vshrq_n_u8(ql0, 4), vandq_u8(qh, two)),
            vorrq_u8(vshrq_n_u8(ql1, 4), vandq_u8(vshrq_n_u8(qh, 2), two)),
        };
        for (int p = 0; p < 4; ++p)
          out.c[8 * h + 2 * p + s] = vsubq_s8(vreinterpretq_s8_u8(q[p]), offset);
      }
  }
  static float finish(float acc, int32_t isum, const Unit& w, const Act& a, int64_t u) {
    return std::fma(static_cast<float>(isum), w.d * a.d[u], acc);
  }
};

// ---- the integer sums of a unit, and the tile ----

// Σ over the unit of w·a for one row and one token (scaled per chunk where F says so).
template <typename F>
inline int32_t unit_sum(const typename F::Unit& w, const int8_t* a) {
  int32x4_t sum = vdupq_n_s32(0);
  for (int c = 0; c < F::kChunks; ++c) {
    const int8x16_t av = vld1q_s8(a + 16 * c);
    if constexpr (F::kScaled)
      sum = vmlaq_n_s32(sum, dot16(vdupq_n_s32(0), w.c[c], av), w.sc[c]);
    else
      sum = dot16(sum, w.c[c], av);
  }
  return vaddvq_s32(sum);
}

#if defined(__ARM_FEATURE_MATMUL_INT8)
inline int8x16_t zip_low64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
inline int8x16_t zip_high64(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
#endif

template <typename F, int NR, int NT>
inline void unit_sums(const typename F::Unit (&w)[NR], const int8_t* const (&a)[NT],
                      int32_t (&isum)[NR][NT]) {
  int r = 0;
#if defined(__ARM_FEATURE_MATMUL_INT8)
  if constexpr (NR >= 2 && NT >= 2) {
    for (; r + 2 <= NR; r += 2) {
      // Rows r and r + 1 interleaved by 8 bytes: SMMLA's 2×8 left operand.
      int8x16_t wz[F::kChunks][2];
      int32x4_t scale[F::kChunks];
      for (int c = 0; c < F::kChunks; ++c) {
        wz[c][0] = zip_low64(w[r].c[c], w[r + 1].c[c]);
        wz[c][1] = zip_high64(w[r].c[c], w[r + 1].c[c]);
        if constexpr (F::kScaled)
          scale[c] = vcombine_s32(vdup_n_s32(w[r].sc[c]), vdup_n_s32(w[r + 1].sc[c]));
      }
      int t = 0;
      for (; t + 2 <= NT; t += 2) {
        int32x4_t sum = vdupq_n_s32(0);  // [r·t, r·(t+1), (r+1)·t, (r+1)·(t+1)]
        for (int c = 0; c < F::kChunks; ++c) {
          const int8x16_t a0 = vld1q_s8(a[t] + 16 * c), a1 = vld1q_s8(a[t + 1] + 16 * c);
          if constexpr (F::kScaled) {
            int32x4_t m = vmmlaq_s32(vdupq_n_s32(0), wz[c][0], zip_low64(a0, a1));
            m = vmmlaq_s32(m, wz[c][1], zip_high64(a0, a1));
            sum = vmlaq_s32(sum, m, scale[c]);
          } else {
            sum = vmmlaq_s32(sum, wz[c][0], zip_low64(a0, a1));
            sum = vmmlaq_s32(sum, wz[c][1], zip_high64(a0, a1));
          }
        }
        isum[r][t] = vgetq_lane_s32(sum, 0);
        isum[r][t + 1] = vgetq_lane_s32(sum, 1);
        isum[r + 1][t] = vgetq_lane_s32(sum, 2);
        isum[r + 1][t + 1] = vgetq_lane_s32(sum, 3);
      }
      for (; t < NT; ++t) {
        isum[r][t] = unit_sum<F>(w[r], a[t]);
        isum[r + 1][t] = unit_sum<F>(w[r + 1], a[t]);
      }
    }
  }
#endif
  for (; r < NR; ++r)
    for (int t = 0; t < NT; ++t) isum[r][t] = unit_sum<F>(w[r], a[t]);
}

template <typename F>
struct NeonQuantTile {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    typename F::Act act[NT];
    for (int t = 0; t < NT; ++t) act[t] = F::act(x + t * xs, cols);
    float acc[NR][NT] = {};
    for (int64_t u = 0; u < cols / F::kCols; ++u) {
      typename F::Unit units[NR];
      for (int r = 0; r < NR; ++r) F::load(w + r * ws, u, units[r]);
      const int8_t* codes[NT];
      for (int t = 0; t < NT; ++t) codes[t] = F::act_codes(act[t], u);
      int32_t isum[NR][NT];
      unit_sums<F, NR, NT>(units, codes, isum);
      for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t)
          acc[r][t] = F::finish(acc[r][t], isum[r][t], units[r], act[t], u);
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = acc[r][t];
  }
};

// The formats above into a table (the others keep their scalar tiles).
inline void fill_neon_quant_tiles(CpuKernels& k) {
  k.q8_0 = {ActFormat::kQ8x32, dispatch_tile<NeonQuantTile<Q8_0Format>>};
  k.q4_0 = {ActFormat::kQ8x32, dispatch_tile<NeonQuantTile<Q4_0Format>>};
  k.q5_0 = {ActFormat::kQ8x32, dispatch_tile<NeonQuantTile<Q5_0Format>>};
  k.iq4_nl = {ActFormat::kQ8x32, dispatch_tile<NeonQuantTile<IQ4_NLFormat>>};
  k.q4_k = {ActFormat::kQ8x256, dispatch_tile<NeonQuantTile<K45Format<false>>>};
  k.q5_k = {ActFormat::kQ8x256, dispatch_tile<NeonQuantTile<K45Format<true>>>};
  k.q6_k = {ActFormat::kQ8x256, dispatch_tile<NeonQuantTile<K6Format>>};
}

}  // namespace
}  // namespace duet::cpu
