// fp16 / bf16 conversions: exhaustive over every 16-bit pattern.
#include "base/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace duet {
namespace {

TEST(Half, Fp16RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(f))));
      continue;
    }
    ASSERT_EQ(float_to_fp16(f), h) << "pattern " << h;
  }
}

TEST(Half, Fp16KnownValues) {
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7C00)));
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(Half, Fp16RoundsToNearestEven) {
  // Between 1 and 1 + 2^-10 the midpoint rounds to the even neighbour (1.0).
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Rounding is monotonic and never more than half an ulp away.
  for (float x = 0.001f; x < 60000.0f; x *= 1.0007f) {
    const float back = fp16_to_float(float_to_fp16(x));
    const float ulp = std::ldexp(1.0f, std::ilogb(back) - 10);
    ASSERT_LE(std::fabs(back - x), ulp / 2 + 1e-12f) << x;
  }
}

TEST(Half, Bf16RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), h) << "pattern " << h;
  }
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
}

}  // namespace
}  // namespace duet
