// KV cache storage types: the forward pass through F16 / BF16 / Q8_0 rows stays close to
// F32 rows, by about the rounding of each format.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/ref_backend.h"
#include "model/qwen3_model.h"
#include "support/test_util.h"

namespace duet {
namespace {

std::vector<float> logits_with(Qwen3Model& m, GgmlType kv_type, const std::vector<int32_t>& toks) {
  auto kv = m.new_kv_storage(8, 16, kv_type);
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
  const std::pair<GgmlType, double> cases[] = {{GgmlType::F16, 4 * std::ldexp(1.0, -11)},
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
  EXPECT_FALSE((*m)->new_kv_storage(4, 16, GgmlType::Q4_K).is_ok());
  EXPECT_FALSE((*m)->new_kv_storage(0, 16, GgmlType::F16).is_ok());
  // Blocks are head-major, so a Q8_0 head must be whole blocks of 32 on its own.
  Qwen3Config odd = (*m)->config();
  odd.head_dim = 48;
  auto backend = make_ref_backend();
  auto q8 = KvStorage::create(*backend, odd.kv_shape(), 4, 16, GgmlType::Q8_0);
  ASSERT_FALSE(q8.is_ok());
  EXPECT_NE(q8.message().find("head_dim"), std::string::npos) << q8.message();
  EXPECT_TRUE(KvStorage::create(*backend, odd.kv_shape(), 4, 16, GgmlType::F16).is_ok());
}

// Where heads live: a block holds n_head_kv runs of block_size positions, and the view
// the attention kernels get reads exactly what store_kv wrote at each token's slot.
TEST(KvStorage, HeadMajorBlocks) {
  auto m = Qwen3Model::load(test::golden_dir() + "/models/micro-f16.gguf", make_ref_backend());
  ASSERT_TRUE(m.is_ok());
  const Qwen3Config& c = (*m)->config();
  auto kv = (*m)->new_kv_storage(4, 16, GgmlType::F32);
  ASSERT_TRUE(kv.is_ok());
  const std::vector<int32_t> table = {2, 0, 3, 1};
  const std::vector<int32_t> positions = {0, 1, 15, 16, 40, 63};
  std::vector<int32_t> slots;
  for (int32_t pos : positions) slots.push_back(table[pos / 16] * 16 + pos % 16);
  const std::vector<StepChunk> chunks = {{0, static_cast<int64_t>(positions.size()), 0, 4}};
  const StepLayout step{positions, slots, table, chunks};
  const int64_t width = c.kv_width();
  std::vector<float> k(positions.size() * static_cast<size_t>(width)), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<float>(i);
    v[i] = -static_cast<float>(i);
  }
  for (int64_t layer : {int64_t{0}, c.n_layer - 1}) {
    (*m)->backend().store_kv((*kv)->layer(layer), step, k.data(), v.data());
    const PagedKvView view = (*kv)->view(layer, table.data());
    for (size_t t = 0; t < positions.size(); ++t)
      for (int64_t h = 0; h < c.n_head_kv; ++h) {
        const size_t at = view.offset(h, positions[t]);
        const auto* kr = reinterpret_cast<const float*>(view.k + at);
        const auto* vr = reinterpret_cast<const float*>(view.v + at);
        const size_t row = t * static_cast<size_t>(width) + static_cast<size_t>(h * c.head_dim);
        for (int64_t d = 0; d < c.head_dim; ++d) {
          ASSERT_EQ(kr[d], k[row + d]) << "layer " << layer << " pos " << positions[t];
          ASSERT_EQ(vr[d], v[row + d]) << "layer " << layer << " pos " << positions[t];
        }
      }
    // Consecutive positions of one head follow each other inside a block.
    EXPECT_EQ(view.offset(1, 5) + static_cast<size_t>(c.head_dim) * 4, view.offset(1, 6));
    EXPECT_TRUE(view.heads_contiguous(c.head_dim));
  }
  EXPECT_EQ((*kv)->bytes_per_block(), static_cast<size_t>(c.head_dim) * 4 * 16 *
                                          static_cast<size_t>(c.n_head_kv * 2 * c.n_layer));
}

}  // namespace
}  // namespace duet
