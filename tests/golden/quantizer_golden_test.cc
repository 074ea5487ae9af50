// duet's row quantizers against llama.cpp's, on ../shared/golden. The kq-*.gguf files are
// llama.cpp's quantizations of the kq model's weights, kq-bf16.gguf their BF16 copy: for every
// quantized tensor of llama.cpp's file, duet's quantization of the BF16 weights must be as
// close to them as llama.cpp's (whose error also carries the BF16 rounding, a small fraction
// of a 4-bit quantizer's). A quantizer without the reference's scale search, or with a wrong
// layout, is several percent worse, or far off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/ref_backend.h"
#include "gguf/gguf_file.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/quantize.h"
#include "model/qwen3_model.h"
#include "quantize/quant_plan.h"
#include "quantize/quantize_file.h"
#include "support/golden_logits.h"
#include "support/test_util.h"

namespace duet {
namespace {

std::shared_ptr<GgufModelFile> open_golden(const std::string& name) {
  auto f = GgufModelFile::open(test::golden_dir() + "/models/" + name);
  EXPECT_TRUE(f.is_ok()) << name << ": " << f.status().message();
  return f.is_ok() ? f.value() : nullptr;
}

// ‖q − x‖ / ‖x‖ for a tensor's stored bytes q against the weights x.
double relative_error(GgmlType type, const uint8_t* q, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  ref::dequantize_row(type, q, y.data(), static_cast<int64_t>(y.size()));
  double err = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
    norm += double(x[i]) * x[i];
  }
  return std::sqrt(err / norm);
}

class QuantizerWeights : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizerWeights, AsCloseAsLlamaCppQuantizer) {
  auto source = open_golden("kq-bf16.gguf");
  auto theirs = open_golden("kq-" + GetParam() + ".gguf");
  ASSERT_TRUE(source && theirs);
  int checked = 0;
  for (const GgufTensorInfo& t : theirs->gguf().tensors()) {
    if (ggml_traits(t.type).block_elems == 1) continue;  // F32 norms stay as they are
    const GgufTensorInfo* src = source->gguf().find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    ASSERT_EQ(src->n_elements, t.n_elements);
    std::vector<float> x(src->n_elements);
    ref::dequantize_row(src->type, src->data, x.data(), static_cast<int64_t>(x.size()));
    std::vector<uint8_t> mine;
    ASSERT_TRUE(ref::quantize_row(t.type, x.data(), static_cast<int64_t>(x.size()), mine).is_ok())
        << ggml_type_name(t.type);
    ASSERT_EQ(mine.size(), t.n_bytes) << t.name;
    const double ours = relative_error(t.type, mine.data(), x);
    const double llama = relative_error(t.type, t.data, x);
    std::printf("[ quantizer ] %-24s %-6s duet %.5f, llama.cpp %.5f\n", t.name.c_str(),
                ggml_type_name(t.type), ours, llama);
    EXPECT_LE(ours, 1.005 * llama) << t.name << " " << ggml_type_name(t.type);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizerWeights,
                         ::testing::Values("q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "q5_0",
                                           "q4_1", "q5_1", "q3_k_m", "iq4_nl", "iq4_xs"));

// The type each tensor gets: llama.cpp's files name their type ("kq-q4_k_m.gguf"), and every
// tensor of them is in the type llama.cpp's rules chose for it; duet's plan must agree.
class QuantizerPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizerPlan, ChoosesLlamaCppTensorTypes) {
  auto source = open_golden("kq-bf16.gguf");
  auto theirs = open_golden("kq-" + GetParam() + ".gguf");
  ASSERT_TRUE(source && theirs);
  const auto preset = quant_preset(GetParam());
  ASSERT_TRUE(preset.has_value()) << GetParam();
  const GgufValue* file_type = theirs->gguf().find("general.file_type");
  ASSERT_NE(file_type, nullptr);
  EXPECT_EQ(file_type->as_int().value_or(-1), preset->file_type);
  QuantModelShape shape;
  shape.n_layer = source->gguf().find("qwen3.block_count")->as_int().value();
  shape.n_head = source->gguf().find("qwen3.attention.head_count")->as_int().value();
  shape.n_head_kv = source->gguf().find("qwen3.attention.head_count_kv")->as_int().value();
  shape.has_output = source->gguf().find_tensor("output.weight") != nullptr;
  for (const GgufTensorInfo& t : source->gguf().tensors()) {
    const GgufTensorInfo* want = theirs->gguf().find_tensor(t.name);
    ASSERT_NE(want, nullptr) << t.name;
    const GgmlType got =
        quant_tensor_type(*preset, t.name, t.n_dims, t.ne[0], shape).value_or(t.type);
    EXPECT_EQ(ggml_type_name(got), std::string(ggml_type_name(want->type))) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizerPlan,
                         ::testing::Values("q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "q5_0",
                                           "q4_1", "q5_1", "q3_k_m", "iq4_nl", "iq4_xs"));

// quantizer_cases.json: duet quantizes kq-bf16.gguf to each type and its logits (reference
// backend) must be as close to the source's reference as those of llama.cpp's file of that
// type: within 1.05 times llama.cpp's distance.
struct QuantizerCase {
  std::string type;
  double llamacpp_rel_l2;
};

std::vector<QuantizerCase> quantizer_cases() {
  std::vector<QuantizerCase> out;
  const nlohmann::json cases = test::read_json(test::golden_dir() + "/quantizer_cases.json");
  for (const auto& c : cases["types"]) out.push_back({c["type"], c["llamacpp_quantizer_rel_l2"]});
  return out;
}

class QuantizerLogits : public ::testing::TestWithParam<QuantizerCase> {};

TEST_P(QuantizerLogits, WithinLlamaCppDistance) {
  const auto cases = test::read_json(test::golden_dir() + "/quantizer_cases.json");
  const auto preset = quant_preset(GetParam().type);
  ASSERT_TRUE(preset.has_value()) << GetParam().type;
  const std::string out = ::testing::TempDir() + "/quantizer_" + GetParam().type + "_" +
                          std::to_string(getpid()) + ".gguf";
  QuantizeOptions o;
  o.preset = *preset;
  o.threads = 2;
  auto r = quantize_gguf(test::golden_dir() + "/" + cases["source"].get<std::string>(), out, o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  auto model = Qwen3Model::load(out, make_ref_backend());
  std::remove(out.c_str());
  ASSERT_TRUE(model.is_ok()) << model.message();
  const std::vector<int32_t> tokens = cases["tokens"].get<std::vector<int32_t>>();
  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  ASSERT_TRUE((*model)->forward(tokens, kv, true, logits).is_ok());
  const auto raw =
      test::read_bytes(test::golden_dir() + "/" + cases["reference"].get<std::string>());
  std::vector<float> ref(raw.size() / 4);
  std::memcpy(ref.data(), raw.data(), raw.size());
  ASSERT_EQ(logits.size(), ref.size());
  const double rel_l2 = test::relative_l2(logits, ref);
  std::printf("[ quantizer ] %s: rel_l2 %.5f, llama.cpp's quantizer %.5f (ratio %.3f)\n",
              GetParam().type.c_str(), rel_l2, GetParam().llamacpp_rel_l2,
              rel_l2 / GetParam().llamacpp_rel_l2);
  EXPECT_LE(rel_l2, 1.05 * GetParam().llamacpp_rel_l2);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizerLogits, ::testing::ValuesIn(quantizer_cases()),
                         [](const auto& info) { return info.param.type; });

}  // namespace
}  // namespace duet
