// The golden data every golden test reads: ../shared/golden beside the checkout (as CI lays
// it out) or $DUET_GOLDEN_DIR. Without it the golden suites are empty, and this test says
// why instead of letting them pass with nothing checked.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_util.h"

namespace duet {
namespace {

TEST(GoldenData, FolderIsPresent) {
  const std::string dir = test::golden_dir();
  for (const char* file : {"logits_cases.json", "tokenizer_cases.json", "chat_template_cases.json",
                           "quant_blocks.json", "formats_cases.json", "quant_blocks_more.json"})
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + file))
        << "golden data missing: " << dir << "/" << file
        << " (put ../shared/golden beside the checkout or set DUET_GOLDEN_DIR)";
}

}  // namespace
}  // namespace duet
