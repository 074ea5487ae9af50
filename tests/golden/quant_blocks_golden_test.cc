// Every block decoder against ../shared/golden/quant_blocks.json and quant_blocks_more.json:
// bit-exact.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "kernels/ref/dequantize.h"
#include "support/test_util.h"

namespace duet {
namespace {

std::set<std::string> check_file(const std::string& file) {
  const auto cases = test::read_json(test::golden_dir() + "/" + file);
  EXPECT_GE(cases.size(), 7u);
  std::set<std::string> seen;
  for (const auto& c : cases) {
    const std::string type_name = c["type"];
    SCOPED_TRACE(type_name + " from " + c["file"].get<std::string>());
    auto type = ggml_type_from_name(type_name);
    EXPECT_TRUE(type.has_value());
    if (!type) continue;
    const int64_t n = c["row_length"];
    const auto raw = test::base64_decode(c["raw_rows_base64"]);
    const auto& rows = c["dequantized"];
    const size_t row_bytes = ggml_row_bytes(*type, n);
    EXPECT_EQ(raw.size(), row_bytes * rows.size());
    if (raw.size() != row_bytes * rows.size()) continue;
    std::vector<float> out(static_cast<size_t>(n));
    for (size_t r = 0; r < rows.size(); ++r) {
      ref::dequantize_row(*type, raw.data() + r * row_bytes, out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(rows[r][i].get<double>());
        // Compare bit patterns so -0.0 vs 0.0 and the last ulp both count.
        uint32_t a, b;
        std::memcpy(&a, &out[i], 4);
        std::memcpy(&b, &want, 4);
        if (a != b) {
          ADD_FAILURE() << "row " << r << " element " << i << ": got " << out[i] << ", want "
                        << want;
          return seen;
        }
      }
    }
    seen.insert(type_name);
  }
  return seen;
}

TEST(QuantBlocksGolden, EveryFormatDecodesExactly) {
  const auto seen = check_file("quant_blocks.json");
  for (const char* t : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    EXPECT_TRUE(seen.count(t)) << "golden data has no " << t << " case";
}

TEST(QuantBlocksGolden, MoreFormatsDecodeExactly) {
  const auto seen = check_file("quant_blocks_more.json");
  for (const char* t : {"Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "IQ4_NL", "IQ4_XS"})
    EXPECT_TRUE(seen.count(t)) << "golden data has no " << t << " case";
}

}  // namespace
}  // namespace duet
