// AVX-512 (F/BW/VL + VNNI) kernels for quantized weights, and the activation quantizers.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni ...; called only when
// cpu_isa_supported(kAvx512). Uses nothing from headers that could be emitted out of line
// (see act_format.h).
//
// Integer dot products: VPDPBUSD multiplies unsigned weight codes by signed activations
// and sums groups of four into int32 lanes (no saturation), so signed weights are shifted
// to unsigned codes and the shift is subtracted once per block through the activation
// block sums. For K-quants, VPMADDUBSW (u8·s8 pairs → int16, which cannot saturate for
// codes ≤ 63 and |a| ≤ 127) followed by VPDPWSSD multiplies in the sub-block scales, so a
// whole super-block is summed in integers before one float step.
// GCC 12 warns about the deliberately undefined pass-through operands inside its own
// AVX-512 intrinsics (fixed in GCC 13); the warning is about the header, not this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kquant_scales.h"
#include "kernels/cpu/tile_dispatch.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu {
namespace {

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

// ---- activation quantizers: byte-identical to kernels_scalar.cc ----

inline __m512i quantize16(__m512 v, __m512 id) {
  v = _mm512_mul_ps(v, id);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
  return _mm512_cvtps_epi32(v);  // round to nearest even (default MXCSR)
}

void to_q8x32(const float* x, int64_t cols, uint8_t* out) {
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  float* s = d + cols / 32;
  for (int64_t b = 0; b < cols / 32; ++b) {
    const __m512 v0 = _mm512_loadu_ps(x + b * 32), v1 = _mm512_loadu_ps(x + b * 32 + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    const __m512i q0 = quantize16(v0, id), q1 = quantize16(v1, id);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + b * 32), _mm512_cvtsepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + b * 32 + 16), _mm512_cvtsepi32_epi8(q1));
    d[b] = amax / 127.0f;
    s[b] = d[b] * static_cast<float>(_mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1)));
  }
}

void to_q8x256(const float* x, int64_t cols, uint8_t* out) {
  const Q8x256Offsets o = q8x256_offsets(cols);
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + o.d);
  auto* bsums = reinterpret_cast<int16_t*>(out + o.bsums);
  const __m512i bias = _mm512_set1_epi8(-128);
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float* xb = x + b * 256;
    __m512 m = _mm512_setzero_ps();
    for (int j = 0; j < 16; ++j) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(xb + j * 16)));
    const float amax = _mm512_reduce_max_ps(m);
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    d[b] = amax / 127.0f;
    int8_t* qb = qs + b * 256;
    for (int j = 0; j < 16; ++j)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qb + j * 16),
                       _mm512_cvtsepi32_epi8(quantize16(_mm512_loadu_ps(xb + j * 16), id)));
    // Sums of 16 codes from the stored bytes: VPSADBW adds eight unsigned bytes, so the
    // codes are biased by +128 (8·128 per qword) and each 16 is two neighbouring qwords.
    // The same on the absolute codes gives each 16's Σ|a|, for fits16.
    __m512i most = _mm512_setzero_si512();
    for (int i = 0; i < 4; ++i) {
      const __m512i codes = _mm512_loadu_si512(qb + 64 * i);
      const __m512i sad = _mm512_sad_epu8(_mm512_xor_si512(codes, bias), _mm512_setzero_si512());
      const __m512i pair = _mm512_add_epi64(sad, _mm512_shuffle_epi32(sad, _MM_PERM_BADC));
      alignas(64) int64_t q[8];
      _mm512_store_si512(q, pair);
      for (int k = 0; k < 4; ++k)
        bsums[b * 16 + 4 * i + k] = static_cast<int16_t>(q[2 * k] - 16 * 128);
      const __m512i abs_sad = _mm512_sad_epu8(_mm512_abs_epi8(codes), _mm512_setzero_si512());
      most = _mm512_max_epi64(
          most, _mm512_add_epi64(abs_sad, _mm512_shuffle_epi32(abs_sad, _MM_PERM_BADC)));
    }
    fill_q8x256_sums(out, cols, b, _mm512_reduce_max_epi64(most) <= kFits16MaxAbsSum);
  }
}

// ---- Q8_0 and Q4_0: blocks of 32 with an fp16 scale, two blocks per 512-bit step ----
//
// y = Σ_b dw_b·dx_b·Σ u·a − K·Σ_b dw_b·s_b, with u the unsigned code (w + 128 for Q8_0,
// the raw nibble for Q4_0) and K the shift (128 or 8). Blocks go in chunks of 16 so the
// scales of a chunk sit in one register: the shift term is then one FMA per chunk, and the
// per-pair scales are lane permutations of it.

struct Q8_0Weights {
  using Block = BlockQ8_0;
  static constexpr float kShift = 128.0f;
  // Codes of blocks b and b+1 (b+1 only when `two`), block b in the low 256 bits.
  static __m512i codes(const Block* blk, bool two) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[0].qs));
    const __m256i hi = two ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[1].qs))
                           : _mm256_set1_epi8(-128);  // code 0: contributes 0·a
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    return _mm512_xor_si512(q, _mm512_set1_epi8(-128));  // w + 128 as unsigned
  }
};

struct Q4_0Weights {
  using Block = BlockQ4_0;
  static constexpr float kShift = 8.0f;
  static __m512i codes(const Block* blk, bool two) {
    const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[0].qs));
    const __m128i q1 =
        two ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[1].qs)) : _mm_setzero_si128();
    const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(q0), q1, 1);
    const __m256i nib = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(q, nib);                        // elements 0..15
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nib);  // elements 16..31
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    // [lo0 lo1 hi0 hi1] → [lo0 hi0 lo1 hi1]: element order of two consecutive blocks.
    return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
  }
};

// No masked loads in these loops: GCC treats a masked load as possibly reading the
// accumulator array and then keeps the accumulators in memory.
template <typename W>
struct Blocks32Kernel {
  using Block = typename W::Block;

  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    const int64_t nb = cols / 32;
    Q8x32Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x32_row(x + t * xs, cols);
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();

    for (int64_t b0 = 0; b0 < nb; b0 += 16) {
      const int n = nb - b0 < 16 ? static_cast<int>(nb - b0) : 16;
      const Block* blk[NR];
      __m512 dw[NR], dx[NT];
      for (int r = 0; r < NR; ++r) {
        blk[r] = reinterpret_cast<const Block*>(w + r * ws) + b0;
        alignas(32) uint16_t h[16] = {};
        for (int i = 0; i < n; ++i) h[i] = blk[r][i].d;
        dw[r] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
      }
      for (int t = 0; t < NT; ++t) {
        __m512 sx;
        if (n == 16) {  // a whole chunk: straight from the activation row
          dx[t] = _mm512_loadu_ps(a[t].d + b0);
          sx = _mm512_loadu_ps(a[t].s + b0);
        } else {
          // Copied through zero-padded locals rather than masked loads (see the note above).
          alignas(64) float d16[16] = {}, s16[16] = {};
          for (int i = 0; i < n; ++i) {
            d16[i] = a[t].d[b0 + i];
            s16[i] = a[t].s[b0 + i];
          }
          dx[t] = _mm512_load_ps(d16);
          sx = _mm512_load_ps(s16);
        }
        for (int r = 0; r < NR; ++r)
          acc[r][t] =
              _mm512_fnmadd_ps(_mm512_mul_ps(dw[r], _mm512_set1_ps(W::kShift)), sx, acc[r][t]);
      }
      for (int p = 0; 2 * p < n; ++p) {
        const bool two = 2 * p + 1 < n;
        // Lanes 0..7 take block 2p's scale, lanes 8..15 block 2p+1's.
        const __m512i idx =
            _mm512_add_epi32(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                             _mm512_set1_epi32(2 * p));
        __m512i wv[NR];
        __m512 rs[NR];
        for (int r = 0; r < NR; ++r) {
          wv[r] = W::codes(blk[r] + 2 * p, two);
          rs[r] = _mm512_permutexvar_ps(idx, dw[r]);
        }
        for (int t = 0; t < NT; ++t) {
          const int8_t* q8 = a[t].qs + (b0 + 2 * p) * 32;
          const __m512i av = two ? _mm512_loadu_si512(q8)
                                 : _mm512_zextsi256_si512(
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
          const __m512 xv = _mm512_permutexvar_ps(idx, dx[t]);
          for (int r = 0; r < NR; ++r) {
            const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv[r], av);
            acc[r][t] =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(rs[r], xv), acc[r][t]);
          }
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

// ---- Q4_K and Q5_K: super-blocks of 256, eight sub-blocks of 32 ----
//
// y = Σ_sb dx·(d·Σ_j sc_j·Σ u·a) − Σ_sb dmin·Σ_j m_j·s32_j. One 512-bit step covers
// sub-blocks 2g (low nibbles of qs[32g..32g+31]) and 2g+1 (high nibbles).

template <bool kQ5>
struct K45Kernel {
  using Block = std::conditional_t<kQ5, BlockQ5_K, BlockQ4_K>;

  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
    const __m256i nib = _mm256_set1_epi8(0x0F);

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      __m512i codes[NR][4], scales[NR][4];
      __m512 mins[NR];
      float d[NR];
      for (int r = 0; r < NR; ++r) {
        const Block& blk = reinterpret_cast<const Block*>(w + r * ws)[sb];
        uint8_t sc[8], mn[8];
        unpack_k4_scales(blk.scales, sc, mn);
        d[r] = fp16(blk.d);
        mins[r] = _mm512_mul_ps(_mm512_set1_ps(fp16(blk.dmin)),
                                _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)))));
        const __m512i sc16 = _mm512_castsi256_si512(
            _mm256_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
        __m256i qh;
        if constexpr (kQ5) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh));
        for (int g = 0; g < 4; ++g) {
          const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * g));
          const __m256i lo = _mm256_and_si256(raw, nib);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nib);
          __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
          if constexpr (kQ5) {
            const uint64_t m_lo = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(1 << (2 * g)));
            const uint64_t m_hi = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(2 << (2 * g)));
            q = _mm512_mask_add_epi8(q, m_lo | (m_hi << 32), q, _mm512_set1_epi8(16));
          }
          codes[r][g] = q;
          // int16 words 0..15 carry sub-block 2g's scale, words 16..31 sub-block 2g+1's.
          const __m512i idx =
              _mm512_add_epi16(_mm512_set_epi64(0x0001000100010001, 0x0001000100010001,
                                                0x0001000100010001, 0x0001000100010001, 0, 0, 0, 0),
                               _mm512_set1_epi16(static_cast<int16_t>(2 * g)));
          scales[r][g] = _mm512_permutexvar_epi16(idx, sc16);
        }
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        __m512i av[4];
        for (int g = 0; g < 4; ++g) av[g] = _mm512_loadu_si512(q8 + 64 * g);
        const float dx = a[t].d[sb];
        const __m512 s32 = _mm512_zextps256_ps512(_mm256_loadu_ps(a[t].s32 + sb * 8));
        for (int r = 0; r < NR; ++r) {
          // Two independent chains (integer sums: the order does not change the result).
          __m512i isum0 = _mm512_setzero_si512(), isum1 = _mm512_setzero_si512();
          for (int g = 0; g < 4; g += 2) {
            isum0 =
                _mm512_dpwssd_epi32(isum0, _mm512_maddubs_epi16(codes[r][g], av[g]), scales[r][g]);
            isum1 = _mm512_dpwssd_epi32(isum1, _mm512_maddubs_epi16(codes[r][g + 1], av[g + 1]),
                                        scales[r][g + 1]);
          }
          const __m512i isum = _mm512_add_epi32(isum0, isum1);
          acc[r][t] =
              _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(d[r] * dx), acc[r][t]);
          acc[r][t] = _mm512_fnmadd_ps(mins[r], s32, acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

// ---- Q6_K: super-blocks of 256, sixteen signed 8-bit scales over 16 values ----
//
// y = Σ_sb d·dx·Σ_k sc_k·(Σ u·a − 32·bsum_k); the −32 term joins the integer sum through
// one VPDPWSSD of the activation's 16-value sums with −32·sc. Half h (128 values) takes
// 64 bytes of ql and 32 of qh; see ref::dequant_q6_k for the bit positions.

struct K6Kernel {
  template <int NR, int NT>
  static void run(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t cols, float* y,
                  int64_t ldy) {
    Q8x256Row a[NT];
    for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
    const __m512i nib = _mm512_set1_epi8(0x0F), two_bits = _mm512_set1_epi8(0x30);
    // Per 256-bit half of qh duplicated: shift bits {0,1} resp. {2,3} up to bits {4,5} ...
    const __m512i shl_a = _mm512_set_epi64(
        0x0002000200020002, 0x0002000200020002, 0x0002000200020002, 0x0002000200020002,
        0x0004000400040004, 0x0004000400040004, 0x0004000400040004, 0x0004000400040004);
    // ... and bits {4,5} resp. {6,7} down to bits {4,5}.
    const __m512i shr_b = _mm512_set_epi64(0x0002000200020002, 0x0002000200020002,
                                           0x0002000200020002, 0x0002000200020002, 0, 0, 0, 0);

    for (int64_t sb = 0; sb < cols / 256; ++sb) {
      __m512i codes[NR][4], scales[NR][4], neg32[NR];
      float d[NR];
      for (int r = 0; r < NR; ++r) {
        const BlockQ6_K& blk = reinterpret_cast<const BlockQ6_K*>(w + r * ws)[sb];
        d[r] = fp16(blk.d);
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.scales)));
        neg32[r] = _mm512_zextsi256_si512(_mm256_mullo_epi16(sc16, _mm256_set1_epi16(-32)));
        for (int h = 0; h < 2; ++h) {
          const __m512i ql = _mm512_loadu_si512(blk.ql + 64 * h);
          const __m512i qh = _mm512_broadcast_i64x4(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh + 32 * h)));
          codes[r][2 * h] = _mm512_or_si512(
              _mm512_and_si512(ql, nib), _mm512_and_si512(_mm512_sllv_epi16(qh, shl_a), two_bits));
          codes[r][2 * h + 1] =
              _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), nib),
                              _mm512_and_si512(_mm512_srlv_epi16(qh, shr_b), two_bits));
        }
        for (int g = 0; g < 4; ++g) {
          // Words 8k..8k+7 carry scale 4g+k (k = 0..3): one 16-value sub-block each.
          const __m512i idx = _mm512_add_epi16(
              _mm512_set_epi64(0x0003000300030003, 0x0003000300030003, 0x0002000200020002,
                               0x0002000200020002, 0x0001000100010001, 0x0001000100010001, 0, 0),
              _mm512_set1_epi16(static_cast<int16_t>(4 * g)));
          scales[r][g] = _mm512_permutexvar_epi16(idx, _mm512_castsi256_si512(sc16));
        }
      }
      for (int t = 0; t < NT; ++t) {
        const int8_t* q8 = a[t].qs + sb * 256;
        __m512i av[4];
        for (int g = 0; g < 4; ++g) av[g] = _mm512_loadu_si512(q8 + 64 * g);
        const __m512i bsums = _mm512_zextsi256_si512(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[t].bsums + sb * 16)));
        const float dx = a[t].d[sb];
        for (int r = 0; r < NR; ++r) {
          __m512i isum = _mm512_dpwssd_epi32(_mm512_setzero_si512(), bsums, neg32[r]);
          for (int g = 0; g < 4; ++g)
            isum =
                _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(codes[r][g], av[g]), scales[r][g]);
          acc[r][t] =
              _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(d[r] * dx), acc[r][t]);
        }
      }
    }
    for (int t = 0; t < NT; ++t)
      for (int r = 0; r < NR; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

}  // namespace

void fill_avx512_quant_kernels(CpuKernels& k) {
  k.q8_0 = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<Q8_0Weights>>};
  k.q4_0 = {ActFormat::kQ8x32, dispatch_tile<Blocks32Kernel<Q4_0Weights>>};
  k.q4_k = {ActFormat::kQ8x256, dispatch_tile<K45Kernel<false>>};
  k.q5_k = {ActFormat::kQ8x256, dispatch_tile<K45Kernel<true>>};
  k.q6_k = {ActFormat::kQ8x256, dispatch_tile<K6Kernel>};
  k.to_q8x32 = to_q8x32;
  k.to_q8x256 = to_q8x256;
}

}  // namespace duet::cpu
