// The forward pass on the Vulkan backend (lavapipe in CI) against
// ../shared/golden/logits_cases.json, with the golden README's rule (never relaxed):
//   rel L2 <= max(2 * llamacpp_rel_l2, 1e-4), argmax agreement >= 95% (100% for F16 files).
// Then the same prompt evaluated in pieces and as several sequences of one batch, over a
// paged F16 cache, against the reference backend doing the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "backend/ref_backend.h"
#include "backend/vulkan/vulkan_backend.h"
#include "forge/forge.h"
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
  // Float accumulation against the reference's double: far below the golden tolerance.
  const double rel = test::relative_l2(got, want);
  std::printf("batch over a paged F16 cache, vulkan vs reference: rel L2 %.3g\n", rel);
  EXPECT_LT(rel, 1e-5);
}

// A single sequence's F32 cache for a context whose layers do not fit one device buffer
// (40,960 positions x 1,024 values x 4 bytes = 160 MiB per layer; lavapipe binds 128 MiB):
// `duet logits` still runs, over as many positions as the device holds, and says so when a
// sequence goes past them.
TEST(LogitsVulkan, ASequenceLargerThanOneBufferIsCappedNotRefused) {
  const std::string path =
      ::testing::TempDir() + "/vulkan_wide_kv_" + std::to_string(getpid()) + ".gguf";
  ForgeOptions o;
  o.shape.n_layer = 1;
  o.shape.n_embd = 64;
  o.shape.n_head = 8;
  o.shape.n_head_kv = 8;
  o.shape.head_dim = 128;
  o.shape.n_ff = 96;
  o.shape.n_ctx = 40960;
  o.type = GgmlType::Q8_0;
  ASSERT_TRUE(forge_model(o, make_byte_vocab(), path).is_ok());
  auto backend = vulkan_or_fail();
  ASSERT_NE(backend, nullptr);
  const size_t per_layer = size_t{40960} * 1024 * 4;
  const bool capped = backend->max_buffer_bytes() < per_layer;
  auto gpu = Qwen3Model::load(path, std::move(backend));
  auto ref = Qwen3Model::load(path, make_ref_backend());
  ASSERT_TRUE(gpu.is_ok()) << gpu.message();
  ASSERT_TRUE(ref.is_ok()) << ref.message();
  const std::vector<int32_t> tokens = {1, 7, 42, 99, 3};
  std::vector<float> want, got;
  SequenceKv ref_kv = (*ref)->new_sequence(), gpu_kv = (*gpu)->new_sequence();
  ASSERT_TRUE((*ref)->forward(tokens, ref_kv, true, want).is_ok());
  Status s = (*gpu)->forward(tokens, gpu_kv, true, got);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LT(test::relative_l2(got, want), 1e-5);
  if (capped) {  // far past what the device holds: a clear error, not a wrong answer
    std::vector<int32_t> many(static_cast<size_t>(40000), 5);
    s = (*gpu)->forward(many, gpu_kv, false, got);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("F32 KV cache holds"), std::string::npos) << s.message();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace duet
