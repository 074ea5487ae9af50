// AVX-512 VNNI kernels over packed weights (packed_weights.h). Compiled with the AVX-512
// flags; called only when cpu_isa_supported(kAvx512).
//
// Q8_0 ×16: per block of 32 columns, eight VPDPBUSD of the packed codes (w + 128, lane =
// row) with a broadcast word of four activation codes give Σ (w+128)·a for 16 rows at
// once; the shift is taken out in float with the activation block sum s = dx·Σa:
//   acc += dw·dx·Σ(w+128)·a − 128·dw·s.
// That is 12 instructions per 512 multiply-adds of a token, where the row-major tile needs
// about 5 per 64, and no horizontal sums at all.
//
// Q4_K ×16 and Q6_K ×16: the codes of 32 columns (eight words) are unpacked once per group
// and serve every token; per token, eight VPDPBUSD give a sub-block's integer sum per row,
// VPMULLD applies the row's integer sub-block scale and the super-block total stays in
// int32 (|total| < 2^31: 256 codes ≤ 63 times |a| ≤ 127 times |scale| ≤ 128), so a
// super-block costs one float step per token. On Zen 4, VPDPBUSD, VPDPWSSD, VPMULLD and
// the float multiplies share the same two pipes (measured: each costs one dot product's
// slot), so what a tile does besides the dot products is counted in those: Q4_K's mins
// are integers too, Σ_j m_j·Σ32_j through VPDPWSSD of min pairs with the activation's
// int16 32-value sums (four per super-block and token instead of eight FMAs), and Q6_K's
// −32 offset is the start value of each 16-column dot product (the activation row's
// q6_start = −32·Σ a), so it costs nothing. Where a super-block's 16-column sums fit int16
// for every token (the activation rows' fits16), Q6_K scales two of them with one VPDPWSSD
// instead of two VPMULLD (q6_k_super_block).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

// A 32-bit word read through a may_alias type, so the compiler can fold the broadcast into
// the instruction that uses it ({1to16} memory operand) instead of a separate VPBROADCASTD.
using UnalignedWord = int32_t __attribute__((may_alias, aligned(1)));
inline __m512i broadcast_word(const int8_t* p) {
  return _mm512_set1_epi32(*reinterpret_cast<const UnalignedWord*>(p));
}

// acc + VPDPBUSD(codes, the word at p broadcast to every lane). GCC 12 does not fold a
// broadcast into VPDPBUSD's memory operand, so the intrinsic costs a VPBROADCASTD per dot
// product; written out, the broadcast is the instruction's {1to16} operand. Measured in one
// process alternating with the intrinsic (86016 × 1024, two threads): eight tokens Q4_K
// +2.1-3.4 %, Q6_K −1.6 to +1.4 %; one token Q4_K +1.6-2.8 %, Q6_K +2.3-3.2 %. In the engine
// (Q4_K_M 0.6B, alternating every step or two): eight sequences +0.6-4.4 %, one ±2 %. The
// Q8_0 tile keeps the intrinsic: written out it ran 2-4 % slower with one token.
inline __m512i dpbusd_word(__m512i acc, __m512i codes, const int8_t* p) {
  __asm__("vpdpbusd %[word]%{1to16%}, %[codes], %[acc]"
          : [acc] "+v"(acc)
          : [codes] "v"(codes), [word] "m"(*reinterpret_cast<const UnalignedWord*>(p)));
  return acc;
}

// A tile of several tokens computes long enough on each unit of packed weights for memory
// to arrive in time if asked for early, and the hardware prefetcher alone leaves it waiting
// (the same tiles ran 1.4-1.5x faster on weights already in L2). So each of a unit's kSteps
// steps asks for its share of the unit kAhead units on, into L2; a task's groups lie one
// after another, so past a group's end that is the next group's start. Measured in one
// process, alternating with the plain tiles (86016 × 1024, two threads):
//   eight tokens: Q4_K +30-38 %, Q6_K +25-33 % (two units ahead), Q8_0 +31-33 % (eight
//   pairs of blocks ahead; two: no gain); six: Q4_K +5 %, Q8_0 +10 %; four: Q4_K +12-16 %,
//   Q8_0 ±5 %; one or two tokens: Q4_K −5 to −13 %. The callers use it where it gained.
template <size_t kUnit, int kSteps, int kAhead>
inline void prefetch_ahead(const uint8_t* unit, int step) {
  constexpr int kLines = static_cast<int>((kUnit + 63) / 64),
                kPerStep = (kLines + kSteps - 1) / kSteps;
  for (int l = kPerStep * step; l < std::min(kLines, kPerStep * (step + 1)); ++l)
    _mm_prefetch(reinterpret_cast<const char*>(unit + kAhead * kUnit + 64 * static_cast<size_t>(l)),
                 _MM_HINT_T1);
}

// Lane r of acc[t] is output (row r, token t); rows past nrows are padding.
template <int NT>
inline void store_rows(const __m512 (&acc)[NT], int nrows, float* y, int64_t ldy) {
  const __mmask16 keep = static_cast<__mmask16>((1u << nrows) - 1);
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy, keep, acc[t]);
}

// The one float step of a K-quant super-block: acc += total · d · dx.
template <int NT>
inline void finish_super_block(const __m512i (&total)[NT], __m512 d, const Q8x256Row (&a)[NT],
                               int64_t sb, __m512 (&acc)[NT]) {
  for (int t = 0; t < NT; ++t)
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total[t]),
                             _mm512_mul_ps(d, _mm512_set1_ps(a[t].d[sb])), acc[t]);
}

template <int NT>
void q8_0x16_tile(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x, size_t xs,
                  float* y, int64_t ldy) {
  const int64_t nb = cols / 32;
  Q8x32Row a[NT];
  for (int t = 0; t < NT; ++t) a[t] = q8x32_row(x + t * xs, cols);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  constexpr size_t kPairBytes = kQ8_0x16UnitBytes;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pair = group + (b / 2) * kPairBytes;
    const uint8_t* unit_codes = pair + 64 + 512 * (b % 2);
    if constexpr (NT >= 6) prefetch_ahead<kPairBytes, 2, 8>(pair, static_cast<int>(b % 2));
    const __m512 dw =
        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pair + 32 * (b % 2))));
    const __m512 dw_shift = _mm512_mul_ps(dw, _mm512_set1_ps(128.0f));
    __m512i codes[8];
    for (int j = 0; j < 8; ++j)
      codes[j] = _mm512_load_si512(reinterpret_cast<const __m512i*>(unit_codes + 64 * j));
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
      const int8_t* q = a[t].qs + b * 32;
      __m512i isum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes[0], broadcast_word(q));
      for (int j = 1; j < 8; ++j)
        isum = _mm512_dpbusd_epi32(isum, codes[j], broadcast_word(q + 4 * j));
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(a[t].d[b]));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc[t]);
      acc[t] = _mm512_fnmadd_ps(dw_shift, _mm512_set1_ps(a[t].s[b]), acc[t]);
    }
  }
  store_rows<NT>(acc, nrows, y, ldy);
}

template <int NT>
void q4_kx16_tile(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x, size_t xs,
                  float* y, int64_t ldy) {
  Q8x256Row a[NT];
  for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  const __m512i nib = _mm512_set1_epi8(0x0F);
  constexpr size_t kUnit = kQ4_Kx16UnitBytes;
  for (int64_t sb = 0; sb < cols / 256; ++sb) {
    const uint8_t* unit = group + sb * kUnit;
    // Everything but the codes is read first, in address order: a one-token tile is bound
    // by memory, and lines read after the codes would miss (10 % slower, measured).
    const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(unit)));
    const __m512 dmin =
        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(unit + 32)));
    __m512i min_pairs[4];
    for (int i = 0; i < 4; ++i)
      min_pairs[i] = _mm512_cvtepu8_epi16(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(unit + 192 + 32 * i)));
    __m512i total[NT];
    for (int t = 0; t < NT; ++t) total[t] = _mm512_setzero_si512();
    for (int j = 0; j < 8; ++j) {
      const __m512i sc = _mm512_cvtepu8_epi32(
          _mm_load_si128(reinterpret_cast<const __m128i*>(unit + 64 + 16 * j)));
      if constexpr (NT >= 4) prefetch_ahead<kUnit, 8, 2>(unit, j);
      const uint8_t* nw = unit + 320 + 256 * j;
      __m512i codes[8];
      for (int k = 0; k < 4; ++k) {
        const __m512i v = _mm512_load_si512(reinterpret_cast<const __m512i*>(nw + 64 * k));
        codes[k] = _mm512_and_si512(v, nib);
        codes[k + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nib);
      }
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const int8_t* q = a[t].qs + sb * 256 + 32 * j;
        __m512i isum = dpbusd_word(_mm512_setzero_si512(), codes[0], q);
        for (int k = 1; k < 8; ++k) isum = dpbusd_word(isum, codes[k], q + 4 * k);
        total[t] = _mm512_add_epi32(total[t], _mm512_mullo_epi32(isum, sc));
      }
    }
    // The mins: Σ_j m_j·Σ32_j in integers, two sub-blocks per VPDPWSSD (|sum| < 2^31: eight
    // mins ≤ 63 times sums ≤ 32·127), then one float step for the super-block.
    for (int t = 0; t < NT; ++t) {
      const int8_t* s = reinterpret_cast<const int8_t*>(a[t].sums32 + sb * 8);
      __m512i mins = _mm512_dpwssd_epi32(_mm512_setzero_si512(), min_pairs[0], broadcast_word(s));
      for (int i = 1; i < 4; ++i)
        mins = _mm512_dpwssd_epi32(mins, min_pairs[i], broadcast_word(s + 4 * i));
      const __m512 dx = _mm512_set1_ps(a[t].d[sb]);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total[t]), _mm512_mul_ps(d, dx), acc[t]);
      acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins), _mm512_mul_ps(dmin, dx), acc[t]);
    }
  }
  store_rows<NT>(acc, nrows, y, ldy);
}

// Super-block sb (the unit at `unit`) of a Q6_K ×16 tile: per 32 columns u, the codes
// unpacked once, then for every token the two 16-column sub-blocks' dot products (started
// at −32·Σa, which takes out the codes' offset) times the rows' scales, added to total.
// With kFits16 (every token's 16-value sums fit int16: the fits16 field of its activation
// row) the two sums go into the halves of one int32 lane and one VPDPWSSD applies both
// scales, where otherwise each takes a VPMULLD: one dual-pipe slot of ten less per 32
// columns and token, the same integers. The choice is made once per super-block and each
// case is one straight loop: with the branch inside the loop GCC kept the codes on the
// stack, and the step ran no faster than before the pairs.
template <int NT, bool kFits16>
inline void q6_k_super_block(const uint8_t* unit, const Q8x256Row (&a)[NT], int64_t sb,
                             __m512i (&total)[NT]) {
  const __m512i nib = _mm512_set1_epi8(0x0F), six = _mm512_set1_epi8(0x3F);
  const __m512i low_half = _mm512_set1_epi32(0xFFFF);
  for (int u = 0; u < 8; ++u) {
    if constexpr (NT >= 4) prefetch_ahead<kQ6_Kx16UnitBytes, 8, 2>(unit, u);
    // int16 lanes (2r, 2r + 1) = the scales of sub-blocks 2u and 2u + 1 of row r.
    const __m512i scale_pair = _mm512_cvtepi8_epi16(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(unit + 64 + 32 * u)));
    const uint8_t* wu = unit + 320 + 384 * u;
    // Words 0..3: one AND. Words 4..7: the low four bits from a nibble word, bits 4..5
    // from bits 6..7 of word w − 4 shifted down by two (VPTERNLOG takes the nibble mask's
    // ones from the first operand), then an AND clears what the 16-bit shifts carried in.
    __m512i codes[8];
    const __m512i n0 = _mm512_load_si512(reinterpret_cast<const __m512i*>(wu + 256));
    const __m512i n1 = _mm512_load_si512(reinterpret_cast<const __m512i*>(wu + 320));
    const __m512i nibs[4] = {n0, _mm512_srli_epi16(n0, 4), n1, _mm512_srli_epi16(n1, 4)};
    for (int k = 0; k < 4; ++k) {
      const __m512i full = _mm512_load_si512(reinterpret_cast<const __m512i*>(wu + 64 * k));
      codes[k] = _mm512_and_si512(full, six);
      codes[k + 4] = _mm512_and_si512(
          _mm512_ternarylogic_epi32(nibs[k], _mm512_srli_epi16(full, 2), nib, 0xE4), six);
    }
    __m512i sc_lo, sc_hi;
    if constexpr (!kFits16) {
      sc_lo = _mm512_srai_epi32(_mm512_slli_epi32(scale_pair, 16), 16);
      sc_hi = _mm512_srai_epi32(scale_pair, 16);
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
      const int8_t* q = a[t].qs + sb * 256 + 32 * u;
      const int32_t* start = a[t].q6_start + sb * 16 + 2 * u;
      __m512i lo = dpbusd_word(_mm512_set1_epi32(start[0]), codes[0], q);
      __m512i hi = dpbusd_word(_mm512_set1_epi32(start[1]), codes[4], q + 16);
      for (int k = 1; k < 4; ++k) {
        lo = dpbusd_word(lo, codes[k], q + 4 * k);
        hi = dpbusd_word(hi, codes[k + 4], q + 16 + 4 * k);
      }
      if constexpr (kFits16) {
        // lane = hi << 16 | (lo & 0xFFFF) (VPTERNLOG 0xD8: low_half's ones from lo).
        const __m512i both =
            _mm512_ternarylogic_epi32(_mm512_slli_epi32(hi, 16), lo, low_half, 0xD8);
        total[t] = _mm512_dpwssd_epi32(total[t], both, scale_pair);
      } else {
        total[t] = _mm512_add_epi32(total[t], _mm512_add_epi32(_mm512_mullo_epi32(lo, sc_lo),
                                                               _mm512_mullo_epi32(hi, sc_hi)));
      }
    }
  }
}

template <int NT>
void q6_kx16_tile(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x, size_t xs,
                  float* y, int64_t ldy) {
  Q8x256Row a[NT];
  for (int t = 0; t < NT; ++t) a[t] = q8x256_row(x + t * xs, cols);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < cols / 256; ++sb) {
    const uint8_t* unit = group + sb * kQ6_Kx16UnitBytes;
    const __m512 d = _mm512_load_ps(reinterpret_cast<const float*>(unit));
    __m512i total[NT];
    for (int t = 0; t < NT; ++t) total[t] = _mm512_setzero_si512();
    bool fits16 = true;
    for (int t = 0; t < NT; ++t) fits16 = fits16 && a[t].fits16[sb] != 0;
    if (fits16)
      q6_k_super_block<NT, true>(unit, a, sb, total);
    else
      q6_k_super_block<NT, false>(unit, a, sb, total);
    finish_super_block<NT>(total, d, a, sb, acc);
  }
  store_rows<NT>(acc, nrows, y, ldy);
}

// BF16 ×16: one VDPBF16PS per pair of columns and token (a broadcast pair of bf16
// activations against the pair of 16 rows), four accumulators per token over the pairs
// in turn so that the chains hide the instruction's latency even for one token; tokens
// go four at a time (eight would need 32 accumulators).
template <int NT>
void bf16x16_tile(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x, size_t xs,
                  float* y, int64_t ldy) {
  if constexpr (NT > 4) {
    bf16x16_tile<4>(group, cols, nrows, x, xs, y, ldy);
    bf16x16_tile<NT - 4>(group, cols, nrows, x + 4 * xs, xs, y + 4 * ldy, ldy);
  } else {
    __m512 acc[NT][4];
    for (int t = 0; t < NT; ++t)
      for (int i = 0; i < 4; ++i) acc[t][i] = _mm512_setzero_ps();
    for (int64_t p = 0; p < cols / 2; p += 4) {
      for (int i = 0; i < 4; ++i) {
        const __m512bh wv = reinterpret_cast<__m512bh>(
            _mm512_load_si512(reinterpret_cast<const __m512i*>(group + (p + i) * 64)));
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
          const __m512bh av = reinterpret_cast<__m512bh>(
              broadcast_word(reinterpret_cast<const int8_t*>(x + t * xs + 4 * (p + i))));
          acc[t][i] = _mm512_dpbf16_ps(acc[t][i], wv, av);
        }
      }
    }
    __m512 sum[NT];
    for (int t = 0; t < NT; ++t)
      sum[t] =
          _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]), _mm512_add_ps(acc[t][2], acc[t][3]));
    store_rows<NT>(sum, nrows, y, ldy);
  }
}

// Turns the runtime token count (1..kPackedTileTokens) into a template argument.
template <template <int> class Tile>
void dispatch_packed(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x, size_t xs,
                     int nt, float* y, int64_t ldy) {
  switch (nt) {
    case 1:
      return Tile<1>::run(group, cols, nrows, x, xs, y, ldy);
    case 2:
      return Tile<2>::run(group, cols, nrows, x, xs, y, ldy);
    case 3:
      return Tile<3>::run(group, cols, nrows, x, xs, y, ldy);
    case 4:
      return Tile<4>::run(group, cols, nrows, x, xs, y, ldy);
    case 5:
      return Tile<5>::run(group, cols, nrows, x, xs, y, ldy);
    case 6:
      return Tile<6>::run(group, cols, nrows, x, xs, y, ldy);
    case 7:
      return Tile<7>::run(group, cols, nrows, x, xs, y, ldy);
    default:
      return Tile<8>::run(group, cols, nrows, x, xs, y, ldy);
  }
}

template <int NT>
struct Q8_0Tile {
  static constexpr auto run = q8_0x16_tile<NT>;
};
template <int NT>
struct Q4_KTile {
  static constexpr auto run = q4_kx16_tile<NT>;
};
template <int NT>
struct Q6_KTile {
  static constexpr auto run = q6_kx16_tile<NT>;
};

template <int NT>
struct Bf16Tile {
  static constexpr auto run = bf16x16_tile<NT>;
};

}  // namespace

void fill_avx512_packed_kernels(CpuKernels& k, bool bf16_dot) {
  if (bf16_dot) {
    k.bf16.packed = PackedLayout::kBF16x16;
    k.bf16.packed_tile = dispatch_packed<Bf16Tile>;
  }
  k.q8_0.packed = PackedLayout::kQ8_0x16;
  k.q8_0.packed_tile = dispatch_packed<Q8_0Tile>;
  k.q4_k.packed = PackedLayout::kQ4_Kx16;
  k.q4_k.packed_tile = dispatch_packed<Q4_KTile>;
  k.q6_k.packed = PackedLayout::kQ6_Kx16;
  k.q6_k.packed_tile = dispatch_packed<Q6_KTile>;
}

}  // namespace duet::cpu
