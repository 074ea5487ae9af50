// The forward pass against ../shared/golden/logits_cases.json (float64 reference).
// Tolerance is the golden README's rule and must not be relaxed:
//   rel L2 <= max(2 * llamacpp_rel_l2, 1e-4), argmax agreement >= 95% (100% for F16 files).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "backend/ref_backend.h"
#include "model/qwen3_model.h"
#include "support/golden_logits.h"
#include "support/test_util.h"

namespace duet {
namespace {

class LogitsGolden : public ::testing::TestWithParam<test::GoldenLogitsCase> {};

TEST_P(LogitsGolden, MatchesReference) {
  const auto& c = GetParam().json;
  const std::string dir = test::golden_dir() + "/";
  auto model = Qwen3Model::load(dir + c["model"].get<std::string>(), make_ref_backend());
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = c["tokens"].get<std::vector<int32_t>>();
  const int64_t n_vocab = c["n_vocab"];
  ASSERT_EQ((*model)->config().n_vocab, n_vocab);

  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  ASSERT_TRUE((*model)->forward(tokens, kv, true, logits).is_ok());

  test::expect_matches_golden_logits(c, logits, "ref");
}

INSTANTIATE_TEST_SUITE_P(AllCases, LogitsGolden, ::testing::ValuesIn(test::golden_logits_cases()),
                         [](const auto& info) {
                           return test::golden_case_test_name(info.param.name);
                         });

// Evaluating a prompt in pieces through the KV cache gives the logits of one pass.
TEST(LogitsIncremental, ChunkedEqualsWhole) {
  const std::string dir = test::golden_dir() + "/";
  auto model = Qwen3Model::load(dir + "models/micro-f16.gguf", make_ref_backend());
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = {314, 65, 66, 295, 195, 214, 280, 181, 242, 260, 70, 17};
  SequenceKv whole = (*model)->new_sequence();
  std::vector<float> all;
  ASSERT_TRUE((*model)->forward(tokens, whole, true, all).is_ok());
  SequenceKv kv = (*model)->new_sequence();
  const int64_t V = (*model)->config().n_vocab;
  size_t done = 0;
  for (size_t chunk : {5u, 1u, 4u, 2u}) {
    std::vector<float> part;
    std::span<const int32_t> piece(tokens.data() + done, chunk);
    ASSERT_TRUE((*model)->forward(piece, kv, false, part).is_ok());
    done += chunk;
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(part[v], all[(done - 1) * V + v], 1e-4) << "after " << done << " tokens";
  }
  EXPECT_EQ(kv.length(), 12);
}

TEST(LogitsErrors, RejectsBadTokensAndOverlongInput) {
  const std::string dir = test::golden_dir() + "/";
  auto model = Qwen3Model::load(dir + "models/micro-yarn-f16.gguf", make_ref_backend());
  ASSERT_TRUE(model.is_ok());
  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  std::vector<int32_t> bad = {1, 320};
  Status s = (*model)->forward(bad, kv, false, logits);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("outside the vocabulary"), std::string::npos) << s.message();
  std::vector<int32_t> negative = {-1};
  EXPECT_FALSE((*model)->forward(negative, kv, false, logits).is_ok());
  std::vector<int32_t> too_long(static_cast<size_t>((*model)->config().max_context() + 1), 5);
  s = (*model)->forward(too_long, kv, false, logits);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("exceed the context"), std::string::npos) << s.message();
  EXPECT_EQ(kv.length(), 0);
}

}  // namespace
}  // namespace duet
