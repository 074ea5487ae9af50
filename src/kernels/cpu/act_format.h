// Layouts of the activations a matmul reads after converting them once per call.
//
// Quantized weights are multiplied with 8-bit activations so that the inner products run
// on integer dot-product instructions. Each token row of `cols` floats becomes:
//
//   kQ8x32  (for Q8_0 / Q4_0 weights; cols % 32 == 0, nb = cols / 32)
//     int8  qs[cols]   a_i = round(x_i / d_b), |a_i| <= 127
//     float d[nb]      d_b = max|x| over block b / 127
//     float s[nb]      s_b = d_b · Σ_{i∈b} a_i   (lets a kernel subtract a weight offset)
//
//   kQ8x256 (for Q4_K / Q5_K / Q6_K weights; cols % 256 == 0, nb = cols / 256)
//     int8  qs[cols]          one scale per 256 values, as the K-quant super-blocks
//     float d[nb]
//     int16 bsums[cols / 16]  Σ a_i over each 16 values
//     float s32[cols / 32]    d · Σ a_i over each 32 values (Q4_K/Q5_K's per-sub-block mins)
//     int16 sums32[cols / 32] Σ a_i over each 32 values (the packed Q4_K tile's mins, in
//                             integers: pairs of them are one VPDPWSSD operand)
//     int32 q6_start[cols/16] −32 · bsums: the packed Q6_K tile starts a 16-value integer
//                             dot product of codes 0..63 here, which takes out their −32
//                             offset for free
//     uint8 fits16[nb]        1 when every 16 values of super-block b have Σ|a_i| ≤ 1023,
//                             else 0: a 16-value dot product with codes −32..31 then fits
//                             int16 (|Σ| ≤ 32 · 1023 < 2^15), and the packed Q6_K tile
//                             scales two such sums with one VPDPWSSD
//   The fields after bsums follow from qs and d; fill_q8x256_sums writes them for every path.
//
//   kBf16   (for BF16 weights on the AVX512_BF16 path)  uint16 bf16[cols], round to nearest
//   kF32    the float rows as given (no conversion)
//
// Rows are `act_row_bytes` apart (a multiple of 64). Rounding is to nearest-even and every
// path produces the same bytes, so results do not depend on which ISA quantized.
//
// The helpers are `static` so that each translation unit, whatever its ISA flags, keeps a
// private copy: an inline function with external linkage compiled with AVX-512 could
// otherwise be the one the linker keeps for baseline code.
#pragma once

#include <cstddef>
#include <cstdint>

namespace duet::cpu {

enum class ActFormat { kF32, kBf16, kQ8x32, kQ8x256 };

// Byte offsets of the kQ8x256 fields after qs (which starts the row).
struct Q8x256Offsets {
  size_t d, bsums, s32, sums32, q6_start, fits16;
};
static constexpr Q8x256Offsets q8x256_offsets(int64_t cols) {
  const size_t c = static_cast<size_t>(cols);
  Q8x256Offsets o{};
  o.d = c;
  o.bsums = o.d + (c / 256) * 4;
  o.s32 = o.bsums + (c / 16) * 2;
  o.sums32 = o.s32 + (c / 32) * 4;
  o.q6_start = o.sums32 + (c / 32) * 2;
  o.fits16 = o.q6_start + (c / 16) * 4;
  return o;
}

static constexpr size_t act_round64(size_t n) { return (n + 63) / 64 * 64; }

static constexpr size_t act_row_bytes(ActFormat f, int64_t cols) {
  const size_t c = static_cast<size_t>(cols);
  switch (f) {
    case ActFormat::kF32:
      return c * 4;
    case ActFormat::kBf16:
      return act_round64(c * 2);
    case ActFormat::kQ8x32:
      return act_round64(c + (c / 32) * 8);
    case ActFormat::kQ8x256:
      return act_round64(q8x256_offsets(cols).fits16 + c / 256);
  }
  return 0;
}

// Views of one converted row (pointers into the row at `base`).
struct Q8x32Row {
  const int8_t* qs;
  const float* d;
  const float* s;
};
struct Q8x256Row {
  const int8_t* qs;
  const float* d;
  const int16_t* bsums;
  const float* s32;
  const int16_t* sums32;
  const int32_t* q6_start;
  const uint8_t* fits16;
};

static inline Q8x32Row q8x32_row(const uint8_t* base, int64_t cols) {
  const auto* d = reinterpret_cast<const float*>(base + cols);
  return {reinterpret_cast<const int8_t*>(base), d, d + cols / 32};
}
static inline Q8x256Row q8x256_row(const uint8_t* base, int64_t cols) {
  const Q8x256Offsets o = q8x256_offsets(cols);
  return {reinterpret_cast<const int8_t*>(base),
          reinterpret_cast<const float*>(base + o.d),
          reinterpret_cast<const int16_t*>(base + o.bsums),
          reinterpret_cast<const float*>(base + o.s32),
          reinterpret_cast<const int16_t*>(base + o.sums32),
          reinterpret_cast<const int32_t*>(base + o.q6_start),
          base + o.fits16};
}

// Whether the 256 codes of a super-block give fits16 = 1: every 16 of them have Σ|a| ≤ 1023.
static constexpr int kFits16MaxAbsSum = 1023;
static inline bool q8x256_fits16(const int8_t* codes) {
  for (int j = 0; j < 16; ++j) {
    int abs_sum = 0;
    for (int i = 0; i < 16; ++i)
      abs_sum += codes[16 * j + i] < 0 ? -codes[16 * j + i] : codes[16 * j + i];
    if (abs_sum > kFits16MaxAbsSum) return false;
  }
  return true;
}

// Writes the fields of super-block b of a kQ8x256 row that follow from its d and bsums (the
// converters write qs, d and bsums). fits16 is passed in because the SIMD converters count
// it with the instructions that sum the codes; q8x256_fits16 is its definition. Sums of
// ≤ 32 codes with |a| ≤ 127 fit int16.
static inline void fill_q8x256_sums(uint8_t* base, int64_t cols, int64_t b, bool fits16) {
  const Q8x256Offsets o = q8x256_offsets(cols);
  const float d = reinterpret_cast<const float*>(base + o.d)[b];
  const int16_t* bsums = reinterpret_cast<const int16_t*>(base + o.bsums) + b * 16;
  float* s32 = reinterpret_cast<float*>(base + o.s32) + b * 8;
  int16_t* sums32 = reinterpret_cast<int16_t*>(base + o.sums32) + b * 8;
  int32_t* q6_start = reinterpret_cast<int32_t*>(base + o.q6_start) + b * 16;
  for (int j = 0; j < 8; ++j) {
    const int sum = bsums[2 * j] + bsums[2 * j + 1];
    sums32[j] = static_cast<int16_t>(sum);
    s32[j] = d * static_cast<float>(sum);
  }
  for (int j = 0; j < 16; ++j) q6_start[j] = -32 * bsums[j];
  base[o.fits16 + b] = fits16 ? 1 : 0;
}

}  // namespace duet::cpu
