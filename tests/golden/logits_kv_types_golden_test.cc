// The serving KV cache types against ../shared/golden: the fast CPU backend with its cache
// in F16 (the default), BF16 or Q8_0, the prompt run in steps of 64 tokens (as the engine
// cuts prompts, so both attention kernels and the cache's own rounding are in the path).
// The other golden tests keep an F32 cache and hold the forward pass to the README's whole
// rule; these measure what a stored cache adds, and hold it to this:
//   - F16 (the default): relative L2 within the golden tolerance, max(2 × llama.cpp's, 1e-4),
//     on every file;
//   - BF16 and Q8_0 (8-bit mantissas or values): the same on every quantized-weight file,
//     whose 8-bit activations dominate the error; on the float-weight files, whose tolerance
//     is ~8e-4, they are beyond it (measured 1.1e-3 and 3.6e-3 on micro-f16), and are held
//     to 1e-2 there.
// Argmax agreement is printed, not held: rounding the cache moves near-tied logits of these
// random-weight models (an F16 cache flips 1 of kq-bf16's 64 positions, as llama.cpp's own
// F16 cache does — its agreement, beside ours in the output, is 98.4 % there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "base/thread_pool.h"
#include "model/qwen3_model.h"
#include "support/golden_logits.h"
#include "support/test_util.h"

namespace duet {
namespace {

struct KvCase {
  std::string name;
  nlohmann::json json;
  GgmlType kv_type;
};

std::vector<KvCase> kv_cases() {
  std::vector<KvCase> out;
  for (GgmlType t : {GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0})
    for (const auto& c : test::golden_logits_cases()) out.push_back({c.name, c.json, t});
  return out;
}

class LogitsKvTypes : public ::testing::TestWithParam<KvCase> {};

TEST_P(LogitsKvTypes, MatchesReference) {
  const auto& c = GetParam().json;
  const GgmlType kv_type = GetParam().kv_type;
  const std::string dir = test::golden_dir() + "/";
  ThreadPool pool(2);
  auto model = Qwen3Model::load(dir + c["model"].get<std::string>(), make_cpu_backend(pool));
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = c["tokens"].get<std::vector<int32_t>>();
  constexpr int64_t kBlock = 16, kStep = 64;
  const int64_t n = static_cast<int64_t>(tokens.size());
  auto kv = (*model)->new_kv_storage((n + kBlock - 1) / kBlock, kBlock, kv_type);
  ASSERT_TRUE(kv.is_ok()) << kv.message();
  std::vector<int32_t> table(static_cast<size_t>((n + kBlock - 1) / kBlock));
  std::iota(table.rbegin(), table.rend(), 0);  // blocks in reverse: not one run of memory

  std::vector<float> logits, step;
  for (int64_t at = 0; at < n; at += kStep) {
    const ForwardChunk chunk{
        std::span<const int32_t>(tokens).subspan(static_cast<size_t>(at),
                                                 static_cast<size_t>(std::min(kStep, n - at))),
        at, table, LogitsFor::kAll};
    ASSERT_TRUE(
        (*model)->forward_batch(std::span<const ForwardChunk>(&chunk, 1), **kv, step).is_ok());
    logits.insert(logits.end(), step.begin(), step.end());
  }
  const int64_t n_vocab = c["n_vocab"];
  const auto raw = test::read_bytes(dir + c["reference"].get<std::string>());
  ASSERT_EQ(raw.size(), logits.size() * sizeof(float));
  std::vector<float> ref(logits.size());
  std::memcpy(ref.data(), raw.data(), raw.size());
  int64_t agree = 0;
  for (int64_t p = 0; p < n; ++p) {
    const auto row = [&](const std::vector<float>& v) { return v.begin() + p * n_vocab; };
    agree += std::max_element(row(logits), row(logits) + n_vocab) - row(logits) ==
             std::max_element(row(ref), row(ref) + n_vocab) - row(ref);
  }
  const double rel_l2 = test::relative_l2(logits, ref);
  const double tol = std::max(2.0 * c["llamacpp_rel_l2"].get<double>(), 1e-4);
  const bool float_weights = c["model"].get<std::string>().find("f16") != std::string::npos;
  std::printf(
      "[ kv-%s ] %s: rel_l2 %.3g (golden tolerance %.3g), argmax %.1f%% (llama.cpp %.1f%%)\n",
      ggml_type_name(kv_type), c["name"].get<std::string>().c_str(), rel_l2, tol, 100.0 * agree / n,
      100 * c.value("llamacpp_top1_agree", 1.0));
  if (kv_type == GgmlType::F16 || !float_weights)
    EXPECT_LE(rel_l2, tol) << "relative L2 error";
  else
    EXPECT_LE(rel_l2, 1e-2) << "relative L2 error";
}

INSTANTIATE_TEST_SUITE_P(AllCases, LogitsKvTypes, ::testing::ValuesIn(kv_cases()),
                         [](const auto& info) {
                           return test::golden_case_test_name(info.param.name + "_kv_" +
                                                              ggml_type_name(info.param.kv_type));
                         });

}  // namespace
}  // namespace duet
