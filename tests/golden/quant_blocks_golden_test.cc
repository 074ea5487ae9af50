// Every block decoder against ../shared/golden/quant_blocks.json: bit-exact.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "kernels/ref/dequantize.h"
#include "support/test_util.h"

namespace duet {
namespace {

TEST(QuantBlocksGolden, EveryFormatDecodesExactly) {
  const auto cases = test::read_json(test::golden_dir() + "/quant_blocks.json");
  ASSERT_GE(cases.size(), 7u);  // F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K
  std::set<std::string> seen;
  for (const auto& c : cases) {
    const std::string type_name = c["type"];
    SCOPED_TRACE(type_name + " from " + c["file"].get<std::string>());
    auto type = ggml_type_from_name(type_name);
    ASSERT_TRUE(type.has_value());
    const int64_t n = c["row_length"];
    const auto raw = test::base64_decode(c["raw_rows_base64"]);
    const auto& rows = c["dequantized"];
    const size_t row_bytes = ggml_row_bytes(*type, n);
    ASSERT_EQ(raw.size(), row_bytes * rows.size());
    std::vector<float> out(static_cast<size_t>(n));
    for (size_t r = 0; r < rows.size(); ++r) {
      ref::dequantize_row(*type, raw.data() + r * row_bytes, out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(rows[r][i].get<double>());
        // Compare bit patterns so -0.0 vs 0.0 and the last ulp both count.
        uint32_t a, b;
        std::memcpy(&a, &out[i], 4);
        std::memcpy(&b, &want, 4);
        ASSERT_EQ(a, b) << "row " << r << " element " << i << ": got " << out[i] << ", want "
                        << want;
      }
    }
    seen.insert(type_name);
  }
  for (const char* t : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    EXPECT_TRUE(seen.count(t)) << "golden data has no " << t << " case";
}

}  // namespace
}  // namespace duet
