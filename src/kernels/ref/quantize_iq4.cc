// IQ4_NL and IQ4_XS quantizers: 4-bit indices into the non-uniform grid kIq4nlValues. For each
// 32 elements the scale is fitted by weighted least squares (weights x²) over fifteen
// candidate scales, as the GGUF reference quantizer does; IQ4_XS then stores the eight scales
// of a super-block as 6-bit integers against one fp16 scale and picks the indices again.
#include <algorithm>
#include <cmath>

#include "base/half.h"
#include "kernels/ref/quant_blocks.h"
#include "kernels/ref/quantize_formats.h"

namespace duet::ref {
namespace {

constexpr int kTries = 7;  // candidate scales on each side of the plain one

// The grid index whose value is nearest v (the grid is sorted).
int nearest_grid_index(float v) {
  const int8_t* g = kIq4nlValues;
  if (v <= g[0]) return 0;
  if (v >= g[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (v < g[mid] ? hi : lo) = mid;
  }
  return v - g[hi - 1] < g[hi] - v ? hi - 1 : hi;
}

// The scale d of 32 elements, x ≈ d·grid[index]. Zero for an all-zero group.
float fit_grid_scale(const float* x) {
  const float max = largest_magnitude(x, 32);
  if (std::fabs(max) < kZeroGroupMax) return 0.0f;
  // First the scale that puts the largest magnitude at +127 (beyond the grid's top), then
  // scales that put it at the grid's bottom, −127, and kTries steps either side of it.
  float best_d = 0.0f, best = 0.0f;
  for (int t = -kTries - 1; t <= kTries; ++t) {
    const float id = t < -kTries ? -static_cast<float>(kIq4nlValues[0]) / max
                                 : (static_cast<float>(t) + kIq4nlValues[0]) / max;
    float sumqx = 0.0f, sumq2 = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float q = kIq4nlValues[nearest_grid_index(id * x[j])];
      const float w = x[j] * x[j];
      sumqx += w * q * x[j];
      sumq2 += w * q * q;
    }
    if (t < -kTries) {
      best_d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
      best = best_d * sumqx;
    } else if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
      best_d = sumqx / sumq2;
      best = best_d * sumqx;
    }
  }
  return best_d;
}

// 32 elements as IQ4_NL lays them out: element j in the low nibble of qs[j], j + 16 in the
// high nibble, each the grid index nearest x / d.
void pack_indices(const float* x, float d, uint8_t qs[16]) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>(nearest_grid_index(id * x[j]) |
                                 (nearest_grid_index(id * x[j + 16]) << 4));
}

}  // namespace

void quantize_iq4_nl(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK) {
    BlockIQ4_NL b{};
    b.d = float_to_fp16(fit_grid_scale(x + i));
    pack_indices(x + i, fp16_to_float(b.d), b.qs);
    append_block(b, out);
  }
}

void quantize_iq4_xs(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK_K) {
    const float* xb = x + i;
    BlockIQ4_XS b{};
    float scales[8];
    for (int k = 0; k < 8; ++k) scales[k] = fit_grid_scale(xb + 32 * k);
    const float max_scale = largest_magnitude(scales, 8);
    // The super-block scale maps the largest sub-block scale to −32; each sub-block's scale is
    // then a 6-bit integer (biased by 32), low four bits in scales_l, top two in scales_h.
    const float d = -max_scale / 32.0f;
    b.d = float_to_fp16(d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int k = 0; k < 8; ++k) {
      const int l = std::clamp(nearest_int(id * scales[k]), -32, 31);
      pack_indices(xb + 32 * k, d * static_cast<float>(l), b.qs + 16 * k);
      const int biased = l + 32;
      b.scales_l[k / 2] |= static_cast<uint8_t>((biased & 0x0F) << (4 * (k % 2)));
      b.scales_h |= static_cast<uint16_t>((biased >> 4) << (2 * k));
    }
    append_block(b, out);
  }
}

}  // namespace duet::ref
