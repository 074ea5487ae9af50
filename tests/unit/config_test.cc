// Qwen3 hyper-parameters from metadata, and the RoPE / YaRN tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "gguf/gguf_writer.h"
#include "model/qwen3_config.h"

namespace duet {
namespace {

using ::testing::HasSubstr;

// Parses a header-only GGUF built from `w` (plus a token_embd tensor record).
struct Built {
  std::vector<uint8_t> bytes;
  Result<GgufFile> file = Status::error("unset");
};

void add_base_keys(GgufWriter& w) {
  w.add_string("general.architecture", "qwen3");
  w.add_u32("qwen3.embedding_length", 64);
  w.add_u32("qwen3.block_count", 2);
  w.add_u32("qwen3.feed_forward_length", 128);
  w.add_u32("qwen3.attention.head_count", 4);
  w.add_u32("qwen3.attention.head_count_kv", 2);
  w.add_u32("qwen3.context_length", 4096);
}

std::unique_ptr<Built> build(GgufWriter& w) {
  w.add_tensor("token_embd.weight", GgmlType::F32, {64, 10});
  auto b = std::make_unique<Built>();
  auto bytes = w.to_bytes([](size_t i, std::vector<uint8_t>& d) {
    d.assign(64 * 10 * 4, 0);
    return Status::ok();
  });
  b->bytes = std::move(bytes.value());
  b->file = GgufFile::parse(b->bytes);
  return b;
}

TEST(Qwen3Config, ReadsDefaultsAndHeadDimFallback) {
  GgufWriter w;
  add_base_keys(w);
  auto b = build(w);
  ASSERT_TRUE(b->file.is_ok()) << b->file.message();
  auto c = read_qwen3_config(*b->file);
  ASSERT_TRUE(c.is_ok()) << c.message();
  EXPECT_EQ(c->head_dim, 16);  // 64 / 4 when key_length is absent
  EXPECT_EQ(c->n_vocab, 10);
  EXPECT_EQ(c->rope_base, 1000000.0);
  EXPECT_EQ(c->max_context(), 4096);
}

TEST(Qwen3Config, HeadDimFromKeyLength) {
  GgufWriter w;
  add_base_keys(w);
  w.add_u32("qwen3.attention.key_length", 128);
  auto b = build(w);
  auto c = read_qwen3_config(*b->file);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c->head_dim, 128);
  EXPECT_EQ(c->q_width(), 512);
}

TEST(Qwen3Config, ErrorsNameTheKey) {
  {
    GgufWriter w;
    w.add_string("general.architecture", "qwen3");
    auto b = build(w);
    auto c = read_qwen3_config(*b->file);
    ASSERT_FALSE(c.is_ok());
    EXPECT_THAT(c.message(), HasSubstr("qwen3.embedding_length"));
  }
  {
    GgufWriter w;
    add_base_keys(w);
    w.add_string("qwen3.rope.scaling.type", "yarn");
    w.add_f32("qwen3.rope.scaling.factor", 1000.0f);
    auto b = build(w);
    auto c = read_qwen3_config(*b->file);
    ASSERT_FALSE(c.is_ok());
    EXPECT_THAT(c.message(), HasSubstr("YaRN factor"));
  }
  {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    auto b = build(w);
    auto c = read_qwen3_config(*b->file);
    ASSERT_FALSE(c.is_ok());
    EXPECT_THAT(c.message(), HasSubstr("llama"));
  }
}

TEST(RopeTables, PlainFrequencies) {
  Qwen3Config c;
  c.head_dim = 8;
  c.rope_base = 10000.0;
  const auto t = compute_rope_tables(c);
  ASSERT_EQ(t.inv_freq.size(), 4u);
  EXPECT_DOUBLE_EQ(t.inv_freq[0], 1.0);
  EXPECT_DOUBLE_EQ(t.inv_freq[2], std::pow(10000.0, -0.5));
  EXPECT_EQ(t.mscale, 1.0);
}

// YaRN (Hugging Face's formulation): dimensions below the fast bound keep their frequency,
// those above the slow bound are divided by the factor, and cos/sin gain 0.1·ln(f) + 1.
TEST(RopeTables, YarnRampAndScale) {
  Qwen3Config c;
  c.head_dim = 128;
  c.rope_base = 1000000.0;
  c.n_ctx_train = 32768;
  ASSERT_TRUE(apply_yarn_override(c, 4.0, 32768).is_ok());
  const auto t = compute_rope_tables(c);
  Qwen3Config plain = c;
  plain.rope_scaling = {};
  const auto p = compute_rope_tables(plain);
  EXPECT_NEAR(t.mscale, 0.1 * std::log(4.0) + 1.0, 1e-12);
  // Correction range for base 1e6, dim 128, original 32768: low = floor(...) , high = ceil(...)
  const double low = std::floor(128 * std::log(32768 / (32 * 2 * M_PI)) / (2 * std::log(1e6)));
  const double high = std::ceil(128 * std::log(32768 / (1 * 2 * M_PI)) / (2 * std::log(1e6)));
  for (int i = 0; i < 64; ++i) {
    if (i <= low) {
      EXPECT_DOUBLE_EQ(t.inv_freq[i], p.inv_freq[i]) << i;
    }
    if (i >= high) {
      EXPECT_DOUBLE_EQ(t.inv_freq[i], p.inv_freq[i] / 4.0) << i;
    }
    if (i > low && i < high) {
      EXPECT_LT(t.inv_freq[i], p.inv_freq[i]);
      EXPECT_GT(t.inv_freq[i], p.inv_freq[i] / 4.0);
    }
  }
  EXPECT_EQ(c.max_context(), 131072);
}

}  // namespace
}  // namespace duet
