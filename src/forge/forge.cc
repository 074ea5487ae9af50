#include "forge/forge.h"

#include <cmath>
#include <vector>

#include "gguf/gguf_writer.h"
#include "kernels/ref/quantize.h"

namespace duet {
namespace {

// splitmix64: a tiny, portable generator, so a seed gives the same file everywhere.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float uniform() {
    return static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0);
  }
};

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct TensorPlan {
  std::string name;
  GgmlType type;
  std::vector<int64_t> ne;
  enum class Fill { kMatrix, kNorm } fill;
};

// general.file_type: the "mostly X" code other tools show for a file of X matrices.
uint32_t llama_file_type(GgmlType t) {
  switch (t) {
    case GgmlType::F16:
      return 1;
    case GgmlType::Q4_0:
      return 2;
    case GgmlType::Q8_0:
      return 7;
    case GgmlType::BF16:
      return 32;
    default:
      return 0;  // all F32
  }
}

}  // namespace

std::optional<ForgeShape> forge_preset(const std::string& name) {
  ForgeShape s;
  s.head_dim = 128;
  s.n_vocab = 151936;
  s.n_ctx = 40960;
  s.n_head_kv = 8;
  if (name == "qwen3-0.6b") {
    s.n_layer = 28, s.n_embd = 1024, s.n_head = 16, s.n_ff = 3072, s.tied_output = true;
  } else if (name == "qwen3-1.7b") {
    s.n_layer = 28, s.n_embd = 2048, s.n_head = 16, s.n_ff = 6144, s.tied_output = true;
  } else if (name == "qwen3-4b") {
    s.n_layer = 36, s.n_embd = 2560, s.n_head = 32, s.n_ff = 9728, s.tied_output = true;
  } else if (name == "qwen3-8b") {
    s.n_layer = 36, s.n_embd = 4096, s.n_head = 32, s.n_ff = 12288, s.tied_output = false;
  } else if (name == "qwen3-14b") {
    s.n_layer = 40, s.n_embd = 5120, s.n_head = 40, s.n_ff = 17408, s.tied_output = false;
  } else {
    return std::nullopt;
  }
  return s;
}

Status forge_model(const ForgeOptions& o, const ForgeVocab& vocab, const std::string& out_path) {
  ForgeShape s = o.shape;
  if (s.n_vocab == 0) s.n_vocab = static_cast<int64_t>(vocab.tokens.size());
  if (s.n_vocab != static_cast<int64_t>(vocab.tokens.size()))
    return Status::error("vocabulary has " + std::to_string(vocab.tokens.size()) +
                         " tokens but the shape asks for " + std::to_string(s.n_vocab));
  if (s.n_layer < 1 || s.n_embd < 1 || s.n_head < 1 || s.n_head_kv < 1 || s.n_ff < 1 ||
      s.head_dim < 2 || s.head_dim % 2 != 0)
    return Status::error("every dimension must be positive and head_dim even");
  if (s.n_head % s.n_head_kv != 0) return Status::error("heads must be a multiple of kv heads");
  const int64_t block = ggml_traits(o.type).block_elems;
  for (int64_t cols : {s.n_embd, s.n_head * s.head_dim, s.n_ff})
    if (cols % block != 0)
      return Status::error(std::string("type ") + ggml_type_name(o.type) +
                           " needs row lengths that are a multiple of " + std::to_string(block) +
                           "; " + std::to_string(cols) + " is not");

  GgufWriter w;
  w.add_string("general.architecture", "qwen3");
  w.add_string("general.name", o.name);
  w.add_string("general.description",
               "synthetic Qwen3 model with seeded random weights (duet forge)");
  w.add_u32("general.file_type", llama_file_type(o.type));
  w.add_u32("general.quantization_version", 2);
  w.add_u32("qwen3.block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32("qwen3.context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32("qwen3.embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32("qwen3.feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32("qwen3.attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32("qwen3.attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.add_u32("qwen3.attention.key_length", static_cast<uint32_t>(s.head_dim));
  w.add_u32("qwen3.attention.value_length", static_cast<uint32_t>(s.head_dim));
  w.add_f32("qwen3.attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_f32("qwen3.rope.freq_base", static_cast<float>(s.rope_base));
  if (s.yarn_factor > 0) {
    w.add_string("qwen3.rope.scaling.type", "yarn");
    w.add_f32("qwen3.rope.scaling.factor", static_cast<float>(s.yarn_factor));
    w.add_u32("qwen3.rope.scaling.original_context_length",
              static_cast<uint32_t>(s.yarn_original_ctx > 0 ? s.yarn_original_ctx : s.n_ctx));
  }
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  w.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  w.add_i32_array("tokenizer.ggml.token_type", vocab.types);
  w.add_string_array("tokenizer.ggml.merges", vocab.merges);
  if (vocab.eos_id >= 0)
    w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(vocab.eos_id));
  if (vocab.pad_id >= 0)
    w.add_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(vocab.pad_id));
  if (vocab.bos_id >= 0)
    w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(vocab.bos_id));
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  if (!vocab.chat_template.empty()) w.add_string("tokenizer.chat_template", vocab.chat_template);

  std::vector<TensorPlan> plan;
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows) {
    plan.push_back({name, o.type, {cols, rows}, TensorPlan::Fill::kMatrix});
  };
  auto norm = [&](const std::string& name, int64_t n) {
    plan.push_back({name, GgmlType::F32, {n}, TensorPlan::Fill::kNorm});
  };
  matrix("token_embd.weight", s.n_embd, s.n_vocab);
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    norm(p + "attn_norm.weight", s.n_embd);
    matrix(p + "attn_q.weight", s.n_embd, s.n_head * s.head_dim);
    matrix(p + "attn_k.weight", s.n_embd, s.n_head_kv * s.head_dim);
    matrix(p + "attn_v.weight", s.n_embd, s.n_head_kv * s.head_dim);
    norm(p + "attn_q_norm.weight", s.head_dim);
    norm(p + "attn_k_norm.weight", s.head_dim);
    matrix(p + "attn_output.weight", s.n_head * s.head_dim, s.n_embd);
    norm(p + "ffn_norm.weight", s.n_embd);
    matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff);
    matrix(p + "ffn_up.weight", s.n_embd, s.n_ff);
    matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
  }
  norm("output_norm.weight", s.n_embd);
  if (!s.tied_output) matrix("output.weight", s.n_embd, s.n_vocab);
  for (const auto& t : plan) w.add_tensor(t.name, t.type, t.ne);

  // Matrices: uniform with the spread of a N(0, 1/fan_in) init, so activations keep their
  // scale through the layers; norms: 1 ± 0.1.
  return w.write(out_path, [&](size_t idx, std::vector<uint8_t>& data) -> Status {
    const TensorPlan& t = plan[idx];
    SplitMix64 rng{o.seed ^ hash_name(t.name)};
    const int64_t cols = t.ne[0];
    const int64_t rows = t.ne.size() > 1 ? t.ne[1] : 1;
    const float amp =
        t.fill == TensorPlan::Fill::kNorm ? 0.1f : std::sqrt(3.0f / static_cast<float>(cols));
    data.reserve(ggml_row_bytes(t.type, cols) * static_cast<size_t>(rows));
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& x : row)
        x = (t.fill == TensorPlan::Fill::kNorm ? 1.0f : 0.0f) + amp * rng.uniform();
      DUET_TRY(ref::quantize_row(t.type, row.data(), cols, data));
    }
    if (o.progress) o.progress(static_cast<int64_t>(idx) + 1, static_cast<int64_t>(plan.size()));
    return Status::ok();
  });
}

}  // namespace duet
