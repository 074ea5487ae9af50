// AVX2 kernels for quantized weights, and the activation quantizers. Compiled with
// -mavx2 -mfma -mf16c; called only when cpu_isa_supported(kAvx2). Uses nothing from
// headers that could be emitted out of line (see act_format.h).
//
// VPMADDUBSW multiplies unsigned codes by signed activations into int16 pairs. Signed
// codes (Q8_0, Q4_0 after −8, Q5_0 after −16, the IQ4 grid values) go through the sign trick: |w| ·
// (a with w's sign), which is the same product and keeps every pair within int16 (2·128·127 <
// 2^15). For K-quants the codes are unsigned (≤ 63) and VPMADDWD multiplies in the sub-block
// scales, so a super-block is summed in integers before one float step.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kquant_scales.h"
#include "kernels/cpu/tile_dispatch.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu {
namespace {

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}
inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// ---- activation quantizers: byte-identical to kernels_scalar.cc ----

inline __m256i quantize8(__m256 v, __m256 id) {
  v = _mm256_mul_ps(v, id);
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(v);  // round to nearest even (default MXCSR)
}

// Quantizes 32 floats with scale id into 32 bytes at out; returns their sum.
inline int quantize32(const float* x, __m256 id, int8_t* out, int* half_sums) {
  __m256i q[4];
  for (int i = 0; i < 4; ++i) q[i] = quantize8(_mm256_loadu_ps(x + 8 * i), id);
  const __m256i packed =
      _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  // packs work per 128-bit lane; put the 4-byte groups back in element order.
  const __m256i ordered =
      _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), ordered);
  half_sums[0] = hsum_i32(_mm256_add_epi32(q[0], q[1]));
  half_sums[1] = hsum_i32(_mm256_add_epi32(q[2], q[3]));
  return half_sums[0] + half_sums[1];
}

void to_q8x32(const float* x, int64_t cols, uint8_t* out) {
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  float* s = d + cols / 32;
  for (int64_t b = 0; b < cols / 32; ++b) {
    const float* xb = x + b * 32;
    __m256 m = abs_ps(_mm256_loadu_ps(xb));
    for (int i = 1; i < 4; ++i) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(xb + 8 * i)));
    const float amax = hmax(m);
    const __m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    int halves[2];
    const int sum = quantize32(xb, id, qs + b * 32, halves);
    d[b] = amax / 127.0f;
    s[b] = d[b] * static_cast<float>(sum);
  }
}

void to_q8x256(const float* x, int64_t cols, uint8_t* out) {
  const Q8x256Offsets o = q8x256_offsets(cols);
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + o.d);
  auto* bsums = reinterpret_cast<int16_t*>(out + o.bsums);
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float* xb = x + b * 256;
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 32; ++i) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(xb + 8 * i)));
    const float amax = hmax(m);
    const __m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    d[b] = amax / 127.0f;
    for (int j = 0; j < 8; ++j) {
      int halves[2];
      quantize32(xb + 32 * j, id, qs + b * 256 + 32 * j, halves);
      bsums[b * 16 + 2 * j] = static_cast<int16_t>(halves[0]);
      bsums[b * 16 + 2 * j + 1] = static_cast<int16_t>(halves[1]);
    }
    // Σ|a| of each 16 codes: VPSADBW of the absolute codes adds eight bytes per qword, and
    // qwords 0 and 2 then hold a 16's sum. Those are below 2^31 with zero high halves, so
    // the 32-bit max (AVX2 has no 64-bit one) keeps the largest.
    __m256i most = _mm256_setzero_si256();
    for (int i = 0; i < 8; ++i) {
      const __m256i v = _mm256_abs_epi8(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + b * 256 + 32 * i)));
      const __m256i sad = _mm256_sad_epu8(v, _mm256_setzero_si256());
      most = _mm256_max_epi32(most, _mm256_add_epi64(sad, _mm256_shuffle_epi32(sad, 0x4E)));
    }
    alignas(32) int64_t largest[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(largest), most);
    fill_q8x256_sums(out, cols, b, std::max(largest[0], largest[2]) <= kFits16MaxAbsSum);
  }
}

// ---- Q8_0 and Q4_0: y = Σ_b dw_b·dx_b·Σ w·a over blocks of 32 ----

struct Q8_0Codes {
  using Block = BlockQ8_0;
  static __m256i load(const Block& b) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
  }
};
struct Q4_0Codes {
  using Block = BlockQ4_0;
  static __m256i load(const Block& b) {  // nibble − 8: elements 0..15 low, 16..31 high
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    const __m256i both =
        _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1);
    return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
  }
};

// The low nibbles of a 32-element block's 16 bytes for elements 0..15, the high ones for
// 16..31.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 0x10 in byte j where bit j of the little-endian word at qh is set (Q5_0 / Q5_1's fifth
// bits). Byte j takes byte j / 8 of the word (the shuffle indexes within each 128-bit half,
// where the broadcast word repeats) and keeps its bit j % 8.
inline __m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// IQ4_NL / IQ4_XS: 32 indices into the grid become its signed values.
inline __m256i iq4_values(const uint8_t* qs) {
  const __m256i grid =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  return _mm256_shuffle_epi8(grid, nibbles32(qs));
}

struct Q5_0Codes {
  using Block = BlockQ5_0;
  static __m256i load(const Block& b) {  // 5-bit code − 16
    return _mm256_sub_epi8(_mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)),
                           _mm256_set1_epi8(16));
  }
};
struct IQ4_NLCodes {
  using Block = BlockIQ4_NL;
  static __m256i load(const Block& b) { return iq4_values(b.qs); }
};

template <typename C>
struct Blocks32Kernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    using Block = typename C::Block;
    Q8x32Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x32_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < cols / 32; ++b) {
      __m256i wq[NR], wabs[NR];
      __m256 dw[NR];
      for (int r = 0; r < NR; ++r) {
        const Block& blk = reinterpret_cast<const Block*>(w + r * ws)[b];
        wq[r] = C::load(blk);
        wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);  // |w|; |−128| reads as 128 unsigned
        dw[r] = _mm256_set1_ps(fp16(blk.d));
      }
      for (int t = 0; t < NT; ++t) {
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t].qs + b * 32));
        const __m256 dx = _mm256_set1_ps(a[t].d[b]);
        for (int r = 0; r < NR; ++r) {
          const __m256i pairs = _mm256_maddubs_epi16(wabs[r], _mm256_sign_epi8(av, wq[r]));
          const __m256i dot = _mm256_madd_epi16(pairs, ones);
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw[r], dx), acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]);
  }
};

// ---- Q4_1 and Q5_1: y = Σ_b (dw_b·dx_b·Σ u·a + m_b·s_b), u the unsigned code ----

struct Q4_1Codes {
  using Block = BlockQ4_1;
  static __m256i load(const Block& b) { return nibbles32(b.qs); }
};
struct Q5_1Codes {
  using Block = BlockQ5_1;
  static __m256i load(const Block& b) { return _mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)); }
};

template <typename C>
struct OffsetBlocks32Kernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    using Block = typename C::Block;
    Q8x32Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x32_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    float offsets[NR][NT] = {};
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < cols / 32; ++b) {
      __m256i wq[NR];
      __m256 dw[NR];
      float m[NR];
      for (int r = 0; r < NR; ++r) {
        const Block& blk = reinterpret_cast<const Block*>(w + r * ws)[b];
        wq[r] = C::load(blk);  // 0..31: VPMADDUBSW's unsigned operand as it is
        dw[r] = _mm256_set1_ps(fp16(blk.d));
        m[r] = fp16(blk.m);
      }
      for (int t = 0; t < NT; ++t) {
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t].qs + b * 32));
        const __m256 dx = _mm256_set1_ps(a[t].d[b]);
        for (int r = 0; r < NR; ++r) {
          const __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(wq[r], av), ones);
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw[r], dx), acc[r][t]);
          // One explicit FMA: left to the compiler, -mfma contracts this in some tile
          // shapes and not in others, and outputs would depend on the tiling.
          offsets[r][t] = _mm_cvtss_f32(
              _mm_fmadd_ss(_mm_set_ss(m[r]), _mm_set_ss(a[t].s[b]), _mm_set_ss(offsets[r][t])));
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]) + offsets[r][t];
  }
};

// ---- Q4_K and Q5_K: y = Σ_sb dx·d·Σ_j sc_j·Σ u·a − Σ_sb dmin·Σ_j m_j·s32_j ----

template <bool kQ5>
struct K45Kernel {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;

  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i nib = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      __m256i codes[NR][8], scales[NR][8];
      __m256 mins[NR];
      float d[NR];
      for (int r = 0; r < NR; ++r) {
        const Block& blk = reinterpret_cast<const Block*>(w + r * ws)[sb];
        uint8_t sc[8], mn[8];
        unpack_k4_scales(blk.scales, sc, mn);
        d[r] = fp16(blk.d);
        mins[r] = _mm256_mul_ps(_mm256_set1_ps(fp16(blk.dmin)),
                                _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)))));
        for (int g = 0; g < 4; ++g) {
          const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * g));
          codes[r][2 * g] = _mm256_and_si256(raw, nib);
          codes[r][2 * g + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nib);
        }
        if constexpr (kQ5) {  // bit j of qh[l] is the fifth bit of element l of sub-block j
          const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh));
          for (int j = 0; j < 8; ++j) {
            const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), one);
            codes[r][j] = _mm256_or_si256(codes[r][j], _mm256_slli_epi16(bit, 4));
          }
        }
        for (int j = 0; j < 8; ++j) scales[r][j] = _mm256_set1_epi16(sc[j]);
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        const float dx = a[t].d[sb];
        const __m256 s32 = _mm256_loadu_ps(a[t].s32 + sb * 8);
        for (int r = 0; r < NR; ++r) {
          __m256i isum = _mm256_setzero_si256();
          for (int j = 0; j < 8; ++j) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * j));
            const __m256i pairs = _mm256_maddubs_epi16(codes[r][j], av);
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, scales[r][j]));
          }
          acc[r][t] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d[r] * dx), acc[r][t]);
          acc[r][t] = _mm256_fnmadd_ps(mins[r], s32, acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]);
  }
};

// ---- Q6_K: y = Σ_sb d·dx·Σ_k sc_k·(Σ u·a − 32·bsum_k), sub-blocks k of 16 ----

struct K6Kernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i nib = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(0x30);

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      __m256i codes[NR][8], scales[NR][8], neg32[NR];
      float d[NR];
      for (int r = 0; r < NR; ++r) {
        const BlockQ6_K& blk = reinterpret_cast<const BlockQ6_K*>(w + r * ws)[sb];
        d[r] = fp16(blk.d);
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.scales)));
        neg32[r] = _mm256_mullo_epi16(sc16, _mm256_set1_epi16(-32));
        for (int h = 0; h < 2; ++h) {
          const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql + 64 * h));
          const __m256i ql1 =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql + 64 * h + 32));
          const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * h));
          // Values 0..31, 32..63, 64..95, 96..127 of the half; qh bits 0-1, 2-3, 4-5, 6-7
          // move to bits 4-5 of each byte.
          __m256i* c = codes[r] + 4 * h;
          c[0] = _mm256_or_si256(_mm256_and_si256(ql0, nib),
                                 _mm256_and_si256(_mm256_slli_epi16(qh, 4), two_bits));
          c[1] = _mm256_or_si256(_mm256_and_si256(ql1, nib),
                                 _mm256_and_si256(_mm256_slli_epi16(qh, 2), two_bits));
          c[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), nib),
                                 _mm256_and_si256(qh, two_bits));
          c[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), nib),
                                 _mm256_and_si256(_mm256_srli_epi16(qh, 2), two_bits));
        }
        for (int j = 0; j < 8; ++j)  // 32 values = sub-blocks 2j and 2j+1
          scales[r][j] = _mm256_set_m128i(_mm_set1_epi16(blk.scales[2 * j + 1]),
                                          _mm_set1_epi16(blk.scales[2 * j]));
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        const __m256i bsums =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t].bsums + sb * 16));
        const float dx = a[t].d[sb];
        for (int r = 0; r < NR; ++r) {
          __m256i isum = _mm256_madd_epi16(bsums, neg32[r]);
          for (int j = 0; j < 8; ++j) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * j));
            const __m256i pairs = _mm256_maddubs_epi16(codes[r][j], av);
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, scales[r][j]));
          }
          acc[r][t] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d[r] * dx), acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]);
  }
};

// ---- Q2_K and Q3_K: 16 sub-blocks k of 16; the 32 elements 32g..32g+31 (g = 4h + j) take
// bits 2j..2j+1 of qs[32h..32h+31]. Q2_K: y = Σ_sb dx·(d·Σ_k sc_k·Σ q·a − dmin·Σ_k m_k·bsum_k).
// Q3_K: the code is q + 4·hbit (hbit: bit g of hmask[l]) and the value d·sc_k·(code − 4), so
// y = Σ_sb d·dx·Σ_k sc_k·(Σ code·a − 4·bsum_k). ----

template <bool kQ3>
struct K23Kernel {
  using Block = std::conditional_t<kQ3, BlockQ3_K, BlockQ2_K>;

  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i two_bits = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      // per_k: Q2_K's mins, Q3_K's −4·scale, one int16 per sub-block of 16.
      __m256i codes[NR][8], scales[NR][8], per_k[NR];
      float d[NR], dmin[NR];
      for (int r = 0; r < NR; ++r) {
        const Block& blk = reinterpret_cast<const Block*>(w + r * ws)[sb];
        int16_t sc[16];
        d[r] = fp16(blk.d);
        if constexpr (kQ3) {
          int8_t packed[16];
          unpack_q3_k_scales(blk.scales, packed);
          for (int k = 0; k < 16; ++k) sc[k] = packed[k];
          per_k[r] = _mm256_mullo_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sc)),
                                        _mm256_set1_epi16(-4));
          dmin[r] = 0.0f;
        } else {
          int16_t mn[16];
          for (int k = 0; k < 16; ++k) {
            sc[k] = blk.scales[k] & 0x0F;
            mn[k] = blk.scales[k] >> 4;
          }
          per_k[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mn));
          dmin[r] = fp16(blk.dmin);
        }
        __m256i hm = _mm256_setzero_si256();
        if constexpr (kQ3) hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.hmask));
        for (int h = 0; h < 2; ++h) {
          const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * h));
          for (int j = 0; j < 4; ++j) {
            const int g = 4 * h + j;
            __m256i c = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), two_bits);
            if constexpr (kQ3) {
              const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(g)), one);
              c = _mm256_or_si256(c, _mm256_slli_epi16(hb, 2));
            }
            codes[r][g] = c;
            scales[r][g] =
                _mm256_set_m128i(_mm_set1_epi16(sc[2 * g + 1]), _mm_set1_epi16(sc[2 * g]));
          }
        }
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        const __m256i bsums =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t].bsums + sb * 16));
        const float dx = a[t].d[sb];
        for (int r = 0; r < NR; ++r) {
          const __m256i k_sum = _mm256_madd_epi16(bsums, per_k[r]);
          __m256i isum = kQ3 ? k_sum : _mm256_setzero_si256();
          for (int g = 0; g < 8; ++g) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * g));
            const __m256i pairs = _mm256_maddubs_epi16(codes[r][g], av);
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, scales[r][g]));
          }
          acc[r][t] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d[r] * dx), acc[r][t]);
          if constexpr (!kQ3)
            acc[r][t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(k_sum), _mm256_set1_ps(dmin[r] * dx),
                                         acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]);
  }
};

// ---- IQ4_XS: y = Σ_sb d·dx·Σ_k sc_k·Σ v·a over sub-blocks k of 32, v the grid's signed
// values (|v| ≤ 127, so the sign trick of Blocks32Kernel applies) ----

struct IQ4_XSKernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      __m256i values[NR][8], scales[NR][8];
      float d[NR];
      for (int r = 0; r < NR; ++r) {
        const BlockIQ4_XS& blk = reinterpret_cast<const BlockIQ4_XS*>(w + r * ws)[sb];
        int8_t sc[8];
        unpack_iq4_xs_scales(blk, sc);
        d[r] = fp16(blk.d);
        for (int k = 0; k < 8; ++k) {
          values[r][k] = iq4_values(blk.qs + 16 * k);
          scales[r][k] = _mm256_set1_epi16(sc[k]);
        }
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        const float dx = a[t].d[sb];
        for (int r = 0; r < NR; ++r) {
          __m256i isum = _mm256_setzero_si256();
          for (int k = 0; k < 8; ++k) {
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * k));
            const __m256i v = values[r][k];
            const __m256i pairs =
                _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(av, v));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, scales[r][k]));
          }
          acc[r][t] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d[r] * dx), acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = hsum(acc[r][t]);
  }
};

}  // namespace

void fill_avx2_quant_kernels(CpuKernels& k) {
  k.q8_0 = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<Q8_0Codes>>};
  k.q4_0 = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<Q4_0Codes>>};
  k.q4_k = {ActFormat::kQ8x256, dispatch_tile<K45Kernel<false>>};
  k.q5_k = {ActFormat::kQ8x256, dispatch_tile<K45Kernel<true>>};
  k.q6_k = {ActFormat::kQ8x256, dispatch_tile<K6Kernel>};
  k.q4_1 = {ActFormat::kQ8x32, dispatch_tile<OffsetBlocks32Kernel<Q4_1Codes>>};
  k.q5_0 = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<Q5_0Codes>>};
  k.q5_1 = {ActFormat::kQ8x32, dispatch_tile<OffsetBlocks32Kernel<Q5_1Codes>>};
  k.iq4_nl = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<IQ4_NLCodes>>};
  k.q2_k = {ActFormat::kQ8x256, dispatch_tile<K23Kernel<false>>};
  k.q3_k = {ActFormat::kQ8x256, dispatch_tile<K23Kernel<true>>};
  k.iq4_xs = {ActFormat::kQ8x256, dispatch_tile<IQ4_XSKernel>};
  k.to_q8x32 = to_q8x32;
  k.to_q8x256 = to_q8x256;
}

}  // namespace duet::cpu
