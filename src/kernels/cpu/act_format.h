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
//     int16 bsums[cols / 16]  Σ a_i over each 16 values (Q6_K's offset, folded as integers)
//     float s32[cols / 32]    d · Σ a_i over each 32 values (Q4_K/Q5_K's per-sub-block mins)
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

static inline size_t act_round64(size_t n) { return (n + 63) / 64 * 64; }

static inline size_t act_row_bytes(ActFormat f, int64_t cols) {
  const size_t c = static_cast<size_t>(cols);
  switch (f) {
    case ActFormat::kF32:
      return c * 4;
    case ActFormat::kBf16:
      return act_round64(c * 2);
    case ActFormat::kQ8x32:
      return act_round64(c + (c / 32) * 8);
    case ActFormat::kQ8x256:
      return act_round64(c + (c / 256) * 4 + (c / 16) * 2 + (c / 32) * 4);
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
};

static inline Q8x32Row q8x32_row(const uint8_t* base, int64_t cols) {
  const auto* d = reinterpret_cast<const float*>(base + cols);
  return {reinterpret_cast<const int8_t*>(base), d, d + cols / 32};
}
static inline Q8x256Row q8x256_row(const uint8_t* base, int64_t cols) {
  const auto* d = reinterpret_cast<const float*>(base + cols);
  const auto* bsums = reinterpret_cast<const int16_t*>(d + cols / 256);
  const auto* s32 = reinterpret_cast<const float*>(bsums + cols / 16);
  return {reinterpret_cast<const int8_t*>(base), d, bsums, s32};
}

}  // namespace duet::cpu
