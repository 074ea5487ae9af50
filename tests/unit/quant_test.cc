// Reference quantizers: error bounds that follow from each format's arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/ref/dequantize.h"
#include "kernels/ref/quantize.h"

namespace duet {
namespace {

std::vector<float> random_row(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = d(rng);
  return x;
}

// Each quantized value is within half a step of the input, where the step of a block is
// its scale d (plus the fp16 rounding of d itself, relative 2^-11, times the code).
void expect_within_half_step(GgmlType type, int max_code, int64_t n) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const auto x = random_row(n, seed, seed % 2 ? 0.02f : 3.0f);
    std::vector<uint8_t> q;
    ASSERT_TRUE(ref::quantize_row(type, x.data(), n, q).is_ok());
    ASSERT_EQ(q.size(), ggml_row_bytes(type, n));
    std::vector<float> y(static_cast<size_t>(n));
    ref::dequantize_row(type, q.data(), y.data(), n);
    for (int64_t b = 0; b < n; b += 32) {
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
      const float d = amax / static_cast<float>(max_code);
      for (int j = 0; j < 32; ++j) {
        const float bound = d * 0.5f + amax * std::ldexp(1.0f, -10) + 1e-30f;
        ASSERT_LE(std::fabs(y[b + j] - x[b + j]), bound)
            << ggml_type_name(type) << " seed " << seed << " i " << b + j;
      }
    }
  }
}

TEST(Quantize, Q8_0WithinHalfStep) { expect_within_half_step(GgmlType::Q8_0, 127, 320); }
// Q4_0 maps the largest magnitude to -8, so its step is amax / 8 and the far end clips at +7.
TEST(Quantize, Q4_0WithinStep) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const int64_t n = 256;
    const auto x = random_row(n, seed, 1.0f);
    std::vector<uint8_t> q;
    ASSERT_TRUE(ref::quantize_row(GgmlType::Q4_0, x.data(), n, q).is_ok());
    std::vector<float> y(n);
    ref::dequantize_row(GgmlType::Q4_0, q.data(), y.data(), n);
    for (int64_t b = 0; b < n; b += 32) {
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
      const float d = amax / 8.0f;
      for (int j = 0; j < 32; ++j) ASSERT_LE(std::fabs(y[b + j] - x[b + j]), d * 1.001f + 1e-6f);
    }
  }
}

TEST(Quantize, FloatFormatsRoundTrip) {
  const auto x = random_row(100, 7, 1.0f);
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    std::vector<uint8_t> q;
    ASSERT_TRUE(ref::quantize_row(t, x.data(), 100, q).is_ok());
    std::vector<float> y(100);
    ref::dequantize_row(t, q.data(), y.data(), 100);
    const float rel = t == GgmlType::F32   ? 0.0f
                      : t == GgmlType::F16 ? std::ldexp(1.0f, -11)
                                           : std::ldexp(1.0f, -8);
    for (int i = 0; i < 100; ++i) ASSERT_LE(std::fabs(y[i] - x[i]), std::fabs(x[i]) * rel + 1e-7f);
  }
}

TEST(Quantize, ZeroBlockStaysZero) {
  std::vector<float> x(32, 0.0f);
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0}) {
    std::vector<uint8_t> q;
    ASSERT_TRUE(ref::quantize_row(t, x.data(), 32, q).is_ok());
    std::vector<float> y(32, 1.0f);
    ref::dequantize_row(t, q.data(), y.data(), 32);
    for (float v : y) EXPECT_EQ(v, 0.0f);
  }
}

TEST(Quantize, UnsupportedTypeIsAnError) {
  std::vector<float> x(256, 1.0f);
  std::vector<uint8_t> q;
  EXPECT_FALSE(ref::quantize_row(GgmlType::Q2_K, x.data(), 256, q).is_ok());
}

// dot_row equals the dot product of the decoded row, for every computable type and for
// lengths that are not a multiple of the plain-type chunk.
TEST(DotRow, MatchesDecodedDot) {
  for (GgmlType t :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    for (int64_t n : {32, 64, 288, 544}) {
      const auto w = random_row(n, static_cast<uint32_t>(n), 0.5f);
      const auto x = random_row(n, 99, 1.0f);
      std::vector<uint8_t> q;
      ASSERT_TRUE(ref::quantize_row(t, w.data(), n, q).is_ok());
      std::vector<float> dec(n);
      ref::dequantize_row(t, q.data(), dec.data(), n);
      double want = 0;
      for (int64_t i = 0; i < n; ++i) want += double(dec[i]) * x[i];
      EXPECT_NEAR(ref::dot_row(t, q.data(), x.data(), n), want, 1e-5 * (1 + std::fabs(want)))
          << ggml_type_name(t) << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace duet
