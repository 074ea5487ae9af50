// What storing the KV cache in F16 or Q8_0 costs at long positions: a 16,000-token prompt on
// a forged model whose context comes from YaRN (4,096 × 4), its last 32 positions' logits
// with each cache type against the same run with an F32 cache (which rounds nothing). The
// golden files (logits_kv_types_golden_test.cc) hold the types to the reference on short
// prompts; this is the long end, where a cache's rounding adds up over 16,000 keys.
//
// Bounds: F16 within 1e-3 (its 11-bit mantissa), Q8_0 within 1e-2 — half the golden rule's
// allowance for a quantized model file (2 × llama.cpp's ~1e-2), so that an 8-bit cache
// under 8-bit weights still fits the rule. The measured values are printed (docs/PERF.md
// quotes them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "base/thread_pool.h"
#include "forge/forge.h"
#include "forge/vocab_source.h"
#include "model/qwen3_model.h"
#include "support/golden_logits.h"

namespace duet {
namespace {

constexpr int64_t kPrompt = 16000, kTail = 32, kBlock = 16, kStep = 512;

// The logits of the prompt's last kTail positions with a cache of `type`, computed in steps
// of kStep tokens as the engine cuts a prompt.
std::vector<float> tail_logits(Qwen3Model& model, const std::vector<int32_t>& tokens,
                               GgmlType type) {
  const int64_t n_blocks = (kPrompt + kBlock - 1) / kBlock;
  auto kv = model.new_kv_storage(n_blocks, kBlock, type);
  EXPECT_TRUE(kv.is_ok()) << kv.message();
  if (!kv) return {};
  std::vector<int32_t> table(static_cast<size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);
  std::vector<float> logits;
  for (int64_t at = 0; at < kPrompt;) {
    // The last kTail tokens are a chunk of their own, with every position's logits.
    const int64_t n = at < kPrompt - kTail ? std::min(kStep, kPrompt - kTail - at) : kTail;
    const ForwardChunk chunk{
        std::span<const int32_t>(tokens).subspan(static_cast<size_t>(at), static_cast<size_t>(n)),
        at, table, at < kPrompt - kTail ? LogitsFor::kLast : LogitsFor::kAll};
    EXPECT_TRUE(
        model.forward_batch(std::span<const ForwardChunk>(&chunk, 1), **kv, logits).is_ok());
    at += n;
  }
  return logits;
}

TEST(KvTypesLongContext, YarnPromptLogitsStayCloseToAnF32Cache) {
  const std::string path =
      ::testing::TempDir() + "/kv_types_yarn_" + std::to_string(getpid()) + ".gguf";
  ForgeOptions o;
  o.shape.n_layer = 1;
  o.shape.n_embd = 64;
  o.shape.n_head = 2;
  o.shape.n_head_kv = 1;
  o.shape.head_dim = 64;
  o.shape.n_ff = 96;
  o.shape.n_ctx = 4096;
  o.shape.yarn_factor = 4;
  o.shape.yarn_original_ctx = 4096;
  o.type = GgmlType::F16;
  ASSERT_TRUE(forge_model(o, make_byte_vocab(), path).is_ok());
  ThreadPool pool(2);
  auto model = Qwen3Model::load(path, make_cpu_backend(pool));
  std::remove(path.c_str());
  ASSERT_TRUE(model.is_ok()) << model.message();
  ASSERT_GE((*model)->config().max_context(), kPrompt);

  std::vector<int32_t> tokens(static_cast<size_t>(kPrompt));
  for (int64_t i = 0; i < kPrompt; ++i) tokens[i] = static_cast<int32_t>((i * 7919 + i / 97) % 256);
  const std::vector<float> f32 = tail_logits(**model, tokens, GgmlType::F32);
  const std::vector<float> f16 = tail_logits(**model, tokens, GgmlType::F16);
  const std::vector<float> q8 = tail_logits(**model, tokens, GgmlType::Q8_0);
  ASSERT_EQ(f16.size(), f32.size());
  ASSERT_EQ(q8.size(), f32.size());
  const double e16 = test::relative_l2(f16, f32), e8 = test::relative_l2(q8, f32);
  std::printf(
      "[ kv-types ] %lld-token YaRN prompt, last %lld positions against an F32 cache: "
      "F16 rel L2 %.3g, Q8_0 rel L2 %.3g\n",
      static_cast<long long>(kPrompt), static_cast<long long>(kTail), e16, e8);
  EXPECT_LE(e16, 1e-3);
  EXPECT_LE(e8, 1e-2);
  EXPECT_GT(e8, e16);  // a coarser cache is further off: the comparison sees the cache at all
}

}  // namespace
}  // namespace duet
