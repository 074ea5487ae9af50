// The forward pass on the Vulkan backend (lavapipe in CI) against
// ../shared/golden/logits_cases.json, with the golden README's rule (never relaxed):
//   rel L2 <= max(2 * llamacpp_rel_l2, 1e-4), argmax agreement >= 95% (100% for F16 files).
// Then the same prompt evaluated in pieces and as several sequences of one batch, over a
// paged F16 cache, against the reference backend doing the same.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>

#include "backend/ref_backend.h"
#include "backend/vulkan/vulkan_backend.h"
#include "model/qwen3_model.h"
#include "support/golden_logits.h"
#include "support/test_util.h"

namespace duet {
namespace {

std::unique_ptr<Backend> vulkan_or_fail() {
  auto be = make_vulkan_backend();
  EXPECT_TRUE(be.is_ok())
      << "no Vulkan device to test the GPU backend on: " << be.message()
      << " (scripts/setup installs Mesa's lavapipe, a Vulkan device on the CPU)";
  return be ? std::move(be.value()) : nullptr;
}

class LogitsVulkanGolden : public ::testing::TestWithParam<test::GoldenLogitsCase> {};

TEST_P(LogitsVulkanGolden, MatchesReference) {
  const auto& c = GetParam().json;
  auto backend = vulkan_or_fail();
  ASSERT_NE(backend, nullptr);
  auto model = Qwen3Model::load(test::golden_dir() + "/" + c["model"].get<std::string>(),
                                std::move(backend));
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = c["tokens"].get<std::vector<int32_t>>();
  ASSERT_EQ((*model)->config().n_vocab, c["n_vocab"].get<int64_t>());
  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  ASSERT_TRUE((*model)->forward(tokens, kv, true, logits).is_ok());
  test::expect_matches_golden_logits(c, logits, "vulkan");
}

INSTANTIATE_TEST_SUITE_P(AllCases, LogitsVulkanGolden,
                         ::testing::ValuesIn(test::golden_logits_cases()), [](const auto& info) {
                           return test::golden_case_test_name(info.param.name);
                         });

// Three sequences in one batch over scattered F16 blocks — one decoding after a prefilled
// prompt, one prefilling a chunk that starts mid-block, one new — give what the reference
// backend gives for the same batch.
TEST(LogitsVulkan, BatchOfSequencesOverPagedF16CacheMatchesReference) {
  const std::string path = test::golden_dir() + "/models/kq-q8_0.gguf";
  auto backend = vulkan_or_fail();
  ASSERT_NE(backend, nullptr);
  auto gpu = Qwen3Model::load(path, std::move(backend));
  auto ref = Qwen3Model::load(path, make_ref_backend());
  ASSERT_TRUE(gpu.is_ok()) << gpu.message();
  ASSERT_TRUE(ref.is_ok()) << ref.message();
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back((i * 53 + 7) % 300);
  auto run = [&](Qwen3Model& m) {
    auto kv = m.new_kv_storage(16, 16, GgmlType::F16);
    EXPECT_TRUE(kv.is_ok());
    const std::vector<int32_t> t0 = {3, 9, 12, 0}, t1 = {6, 1, 14}, t2 = {11};
    std::vector<float> out, all;
    // Step 1: sequences 0 and 1 prefill their first parts.
    ForwardChunk a{std::span(prompt).subspan(0, 37), 0, t0, LogitsFor::kLast};
    ForwardChunk b{std::span(prompt).subspan(0, 20), 0, t1, LogitsFor::kAll};
    ForwardChunk step1[] = {a, b};
    EXPECT_TRUE(m.forward_batch(step1, **kv, out).is_ok());
    all.insert(all.end(), out.begin(), out.end());
    // Step 2: sequence 0 decodes, 1 goes on mid-block, 2 starts.
    ForwardChunk c{std::span(prompt).subspan(37, 1), 37, t0, LogitsFor::kLast};
    ForwardChunk d{std::span(prompt).subspan(20, 13), 20, t1, LogitsFor::kAll};
    ForwardChunk e{std::span(prompt).subspan(5, 9), 0, t2, LogitsFor::kLast};
    ForwardChunk step2[] = {c, d, e};
    EXPECT_TRUE(m.forward_batch(step2, **kv, out).is_ok());
    all.insert(all.end(), out.begin(), out.end());
    return all;
  };
  const auto want = run(**ref), got = run(**gpu);
  ASSERT_EQ(got.size(), want.size());
  double err = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  // Float accumulation against the reference's double: far below the golden tolerance.
  const double rel = std::sqrt(err / norm);
  std::printf("batch over a paged F16 cache, vulkan vs reference: rel L2 %.3g\n", rel);
  EXPECT_LT(rel, 1e-5);
}

}  // namespace
}  // namespace duet
