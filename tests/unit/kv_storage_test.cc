// KV cache storage types: the forward pass through F16 / BF16 / Q8_0 rows stays close to
// F32 rows, by about the rounding of each format.
#include <gtest/gtest.h>

#include <cmath>

#include "model/qwen3_model.h"
#include "support/test_util.h"

namespace duet {
namespace {

std::vector<float> logits_with(Qwen3Model& m, GgmlType kv_type, const std::vector<int32_t>& toks) {
  auto kv = KvStorage::create(m.config(), 8, 16, kv_type);
  EXPECT_TRUE(kv.is_ok()) << kv.message();
  std::vector<int32_t> table = {3, 0, 5, 1, 7, 2, 6, 4};  // scattered blocks on purpose
  ForwardChunk c{toks, 0, table, LogitsFor::kAll};
  std::vector<float> out;
  EXPECT_TRUE(m.forward_batch(std::span<const ForwardChunk>(&c, 1), **kv, out).is_ok());
  return out;
}

TEST(KvStorage, TypesStayCloseToF32) {
  auto m = Qwen3Model::load(test::golden_dir() + "/models/micro-f16.gguf", make_ref_backend());
  ASSERT_TRUE(m.is_ok());
  std::vector<int32_t> toks;
  for (int i = 0; i < 100; ++i) toks.push_back((i * 37 + 11) % 300);
  const auto ref = logits_with(**m, GgmlType::F32, toks);
  // Relative rounding of one stored value: F16 2^-11, BF16 2^-8, Q8_0 up to 1/254 of the
  // block's largest value. Logit errors stay within a few times that.
  const std::pair<GgmlType, double> cases[] = {
      {GgmlType::F16, 4 * std::ldexp(1.0, -11)},
      {GgmlType::BF16, 4 * std::ldexp(1.0, -8)},
      {GgmlType::Q8_0, 4.0 / 254}};
  for (const auto& [type, bound] : cases) {
    const auto got = logits_with(**m, type, toks);
    double err = 0, norm = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      err += (got[i] - ref[i]) * (got[i] - ref[i]);
      norm += ref[i] * ref[i];
    }
    const double rel = std::sqrt(err / norm);
    EXPECT_LE(rel, bound) << ggml_type_name(type);
    EXPECT_GT(rel, 0.0) << ggml_type_name(type) << " should round something";
    std::printf("kv %s: rel L2 %.3g vs F32\n", ggml_type_name(type), rel);
  }
}

TEST(KvStorage, RejectsTypesItCannotHold) {
  auto m = Qwen3Model::load(test::golden_dir() + "/models/micro-f16.gguf", make_ref_backend());
  ASSERT_TRUE(m.is_ok());
  EXPECT_FALSE(KvStorage::create((*m)->config(), 4, 16, GgmlType::Q4_K).is_ok());
  EXPECT_FALSE(KvStorage::create((*m)->config(), 0, 16, GgmlType::F16).is_ok());
}

}  // namespace
}  // namespace duet
