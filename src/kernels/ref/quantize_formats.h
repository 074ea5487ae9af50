// The row quantizers behind ref::quantize_row, one per stored format: each appends the blocks
// of n floats (n a multiple of the format's block) to `out`. Private to kernels/ref.
#pragma once

#include <cstdint>
#include <vector>

namespace duet::ref {

// 32-element blocks (quantize.cc): round to nearest on the block's scale.
void quantize_q8_0(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q4_0(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q4_1(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q5_0(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q5_1(const float* x, int64_t n, std::vector<uint8_t>& out);

// K-quants (quantize_k.cc): per sub-block scales (and mins) found by a weighted error search,
// then quantized themselves against one super-block scale.
void quantize_q3_k(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q4_k(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q5_k(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_q6_k(const float* x, int64_t n, std::vector<uint8_t>& out);

// The non-uniform 4-bit grid (quantize_iq4.cc): per 32 elements, the scale that fits the grid
// best among a few candidates.
void quantize_iq4_nl(const float* x, int64_t n, std::vector<uint8_t>& out);
void quantize_iq4_xs(const float* x, int64_t n, std::vector<uint8_t>& out);

// Rounding to the nearest integer, halves to even, as the GGUF reference quantizers round.
// Adding 1.5·2^23 leaves the rounded integer in the low mantissa bits: a few float operations,
// where nearbyintf is a library call on baseline x86-64 (no SSE4.1): Q4_K_M of a 0.6B-shaped
// file went from 12.4 s to 9.5 s. Exact for |v| < 2^22; larger values take the library call.
inline int nearest_int(float v) {
  if (!(v > -4194304.0f && v < 4194304.0f)) return static_cast<int>(__builtin_nearbyintf(v));
  const float shifted = v + 12582912.0f;
  int32_t bits;
  __builtin_memcpy(&bits, &shifted, 4);
  return (bits & 0x007FFFFF) - 0x00400000;
}

// Below this magnitude a block is all zeros.
constexpr float kZeroGroupMax = 1e-15f;

// The first element of largest magnitude, with its sign (0 when all are 0).
inline float largest_magnitude(const float* x, int64_t n) {
  float amax = 0.0f, max = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float a = x[i] < 0 ? -x[i] : x[i];
    if (a > amax) {
      amax = a;
      max = x[i];
    }
  }
  return max;
}

template <typename Block>
void append_block(const Block& b, std::vector<uint8_t>& out) {
  const auto* p = reinterpret_cast<const uint8_t*>(&b);
  out.insert(out.end(), p, p + sizeof(Block));
}

}  // namespace duet::ref
