// quant_plan: the mixture rules on a model of more layers than the golden files have, and the
// fallbacks for rows a type's block does not divide (llama.cpp's choices, see quant_plan.h).
#include "quantize/quant_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace duet {
namespace {

GgmlType type_of(const char* preset, const std::string& name, int64_t ne0 = 1024,
                 int64_t n_layer = 28, int n_dims = 2) {
  QuantModelShape m;
  m.n_layer = n_layer;
  m.n_head = 16;
  m.n_head_kv = 8;
  return quant_tensor_type(*quant_preset(preset), name, n_dims, ne0, m).value_or(GgmlType::F32);
}

TEST(QuantPlan, MoreBitsLayersOfTheMediumMixtures) {
  // 28 layers: the first eighth (0..2), the last (from 24) and every third between (5, 8, ...).
  for (int i = 0; i < 28; ++i) {
    const bool more = i < 3 || i >= 24 || (i - 3) % 3 == 2;
    const std::string p = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(type_of("Q4_K_M", p + "attn_v.weight"), more ? GgmlType::Q6_K : GgmlType::Q4_K) << i;
    EXPECT_EQ(type_of("q5_k_m", p + "ffn_down.weight"), more ? GgmlType::Q6_K : GgmlType::Q5_K)
        << i;
    EXPECT_EQ(type_of("Q4_K_S", p + "attn_v.weight"), i < 4 ? GgmlType::Q5_K : GgmlType::Q4_K) << i;
    EXPECT_EQ(type_of("Q4_K_S", p + "ffn_down.weight"), i < 3 ? GgmlType::Q5_K : GgmlType::Q4_K)
        << i;
    EXPECT_EQ(type_of("Q3_K_M", p + "ffn_down.weight"), i < 1 ? GgmlType::Q5_K : GgmlType::Q4_K)
        << i;
    EXPECT_EQ(type_of("IQ4_XS", p + "ffn_down.weight"), i < 3 ? GgmlType::Q5_K : GgmlType::IQ4_XS)
        << i;
    EXPECT_EQ(type_of("Q4_K_M", p + "attn_q.weight"), GgmlType::Q4_K) << i;
  }
  // n_gqa = 2 here: IQ4_XS keeps attn_v in IQ4_XS (Q5_K from a ratio of 4 up).
  EXPECT_EQ(type_of("IQ4_XS", "blk.5.attn_v.weight"), GgmlType::IQ4_XS);
}

TEST(QuantPlan, OutputAndTiedEmbeddings) {
  EXPECT_EQ(type_of("Q4_0", "output.weight"), GgmlType::Q6_K);
  EXPECT_EQ(type_of("Q8_0", "output.weight"), GgmlType::Q8_0);
  EXPECT_EQ(type_of("Q4_K_M", "token_embd.weight"), GgmlType::Q4_K);
  QuantModelShape tied;
  tied.n_layer = 28;
  tied.has_output = false;
  EXPECT_EQ(quant_tensor_type(*quant_preset("Q4_K_M"), "token_embd.weight", 2, 1024, tied),
            GgmlType::Q6_K);
}

TEST(QuantPlan, RowsTheBlockDoesNotDivideFallBack) {
  EXPECT_EQ(type_of("Q4_K_M", "blk.5.attn_q.weight", 96), GgmlType::Q5_0);
  EXPECT_EQ(type_of("Q5_K_S", "blk.5.attn_q.weight", 96), GgmlType::Q5_1);
  EXPECT_EQ(type_of("Q3_K_M", "blk.5.attn_q.weight", 96), GgmlType::Q4_0);
  EXPECT_EQ(type_of("IQ4_XS", "blk.5.attn_q.weight", 96), GgmlType::IQ4_NL);
  EXPECT_EQ(type_of("Q6_K", "blk.5.attn_q.weight", 96), GgmlType::Q8_0);
  EXPECT_EQ(type_of("Q4_K_M", "output.weight", 96), GgmlType::Q8_0);
  EXPECT_EQ(type_of("Q4_K_M", "blk.5.attn_q.weight", 40), GgmlType::F16);  // 40 % 32 != 0
  EXPECT_EQ(type_of("Q4_0", "blk.5.attn_q.weight", 40), GgmlType::F16);
}

TEST(QuantPlan, NormsVectorsAndFloatTargets) {
  QuantModelShape m;
  m.n_layer = 28;
  EXPECT_FALSE(quant_tensor_type(*quant_preset("Q4_0"), "blk.0.attn_norm.weight", 1, 1024, m));
  EXPECT_FALSE(quant_tensor_type(*quant_preset("Q4_0"), "blk.0.attn_q_norm.weight", 2, 128, m));
  EXPECT_FALSE(quant_tensor_type(*quant_preset("Q4_0"), "rope_freqs", 2, 1024, m));
  EXPECT_EQ(type_of("F16", "output.weight"), GgmlType::F16);  // no mixture for float targets
  EXPECT_EQ(type_of("BF16", "blk.0.attn_v.weight"), GgmlType::BF16);
  EXPECT_FALSE(quant_preset("Q2_K").has_value());
  EXPECT_EQ(quant_preset("q4_k_m")->file_type, 15u);
}

}  // namespace
}  // namespace duet
