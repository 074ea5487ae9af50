// The forward pass on the fast CPU backend against ../shared/golden/logits_cases.json and
// formats_cases.json, once
// per ISA path this CPU has, with the golden README's rule (never relaxed):
//   rel L2 <= max(2 * llamacpp_rel_l2, 1e-4), argmax agreement >= 95% (100% for F16 files).
// Quantized weights meet 8-bit activations here, as in llama.cpp; F16 weights meet float
// activations, which their tighter tolerance requires.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "backend/cpu_backend.h"
#include "base/thread_pool.h"
#include "model/qwen3_model.h"
#include "support/golden_logits.h"
#include "support/test_util.h"

namespace duet {
namespace {

struct CpuLogitsCase {
  std::string name;
  nlohmann::json json;
  CpuIsa isa;
};

std::vector<CpuLogitsCase> load_cases() {
  std::vector<CpuLogitsCase> out;
  for (CpuIsa isa : all_cpu_isas())
    for (const auto& c : test::golden_logits_cases()) out.push_back({c.name, c.json, isa});
  return out;
}

class LogitsCpuGolden : public ::testing::TestWithParam<CpuLogitsCase> {};

TEST_P(LogitsCpuGolden, MatchesReference) {
  const auto& c = GetParam().json;
  const CpuIsa isa = GetParam().isa;
  if (!cpu_isa_supported(isa)) GTEST_SKIP() << "CPU lacks " << cpu_isa_name(isa);
  const std::string dir = test::golden_dir() + "/";
  ThreadPool pool(2);
  auto model = Qwen3Model::load(dir + c["model"].get<std::string>(), make_cpu_backend(pool, isa));
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = c["tokens"].get<std::vector<int32_t>>();
  const int64_t n_vocab = c["n_vocab"];
  ASSERT_EQ((*model)->config().n_vocab, n_vocab);

  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  ASSERT_TRUE((*model)->forward(tokens, kv, true, logits).is_ok());

  test::expect_matches_golden_logits(c, logits, std::string("cpu-") + cpu_isa_name(isa));
}

INSTANTIATE_TEST_SUITE_P(AllCases, LogitsCpuGolden, ::testing::ValuesIn(load_cases()),
                         [](const auto& info) {
                           std::string s = info.param.name + "_" + cpu_isa_name(info.param.isa);
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// Every output of the cpu backend is computed by the same operations whatever the batch
// (activations are quantized per token, tiles never mix tokens), so a prompt evaluated in
// pieces through the KV cache gives exactly the logits of one pass.
TEST(LogitsCpuIncremental, ChunkedEqualsWholeExactly) {
  const std::string dir = test::golden_dir() + "/";
  ThreadPool pool(3);
  for (const char* file :
       {"models/micro-f16.gguf", "models/kq-q4_k_m.gguf", "models/kq-q8_0.gguf"}) {
    auto model = Qwen3Model::load(dir + file, make_cpu_backend(pool));
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
        ASSERT_EQ(part[v], all[(done - 1) * V + v]) << file << " after " << done << " tokens";
    }
  }
}

}  // namespace
}  // namespace duet
