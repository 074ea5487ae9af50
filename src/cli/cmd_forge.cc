// duet forge: write a synthetic Qwen3 GGUF with seeded random weights.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "base/progress.h"
#include "cli/commands.h"
#include "forge/forge.h"

namespace duet::cli {
namespace {

struct ForgeArgs {
  std::string preset;
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab_size = 0,
          context = 0;
  std::string tied;  // "", "yes", "no"
  std::string type = "q8_0";
  uint64_t seed = 1;
  std::string out;
  std::string vocab = "qwen3";
  std::string tokenizer_dir;
  std::string chat_template;  // a Jinja file written into the GGUF instead of the vocabulary's
  double yarn = 0;
  int64_t yarn_orig = 0;
};

int run_forge(const ForgeArgs& a) {
  ForgeOptions o;
  if (!a.preset.empty()) {
    auto p = forge_preset(a.preset);
    if (!p)
      return fail("unknown preset '" + a.preset +
                  "' (qwen3-0.6b, qwen3-1.7b, qwen3-4b, qwen3-8b, qwen3-14b)");
    o.shape = *p;
    o.name = a.preset + "-forged";
  }
  if (a.layers) o.shape.n_layer = a.layers;
  if (a.hidden) o.shape.n_embd = a.hidden;
  if (a.heads) o.shape.n_head = a.heads;
  if (a.kv_heads) o.shape.n_head_kv = a.kv_heads;
  if (a.head_dim) o.shape.head_dim = a.head_dim;
  if (a.ffn) o.shape.n_ff = a.ffn;
  if (a.context) o.shape.n_ctx = a.context;
  if (a.tied == "yes") o.shape.tied_output = true;
  if (a.tied == "no") o.shape.tied_output = false;
  o.shape.yarn_factor = a.yarn;
  o.shape.yarn_original_ctx = a.yarn_orig;
  auto type = ggml_type_from_name(a.type);
  if (!type || !(*type == GgmlType::F32 || *type == GgmlType::F16 || *type == GgmlType::BF16 ||
                 *type == GgmlType::Q8_0 || *type == GgmlType::Q4_0))
    return fail("--type must be one of f32, f16, bf16, q8_0, q4_0");
  o.type = *type;
  o.seed = a.seed;

  ForgeVocab vocab;
  if (a.vocab == "qwen3") {
    if (a.vocab_size) o.shape.n_vocab = a.vocab_size;
    if (o.shape.n_vocab == 0) o.shape.n_vocab = 151936;
    auto v = load_hf_vocab(a.tokenizer_dir, o.shape.n_vocab);
    if (!v)
      return fail("qwen3 vocabulary: " + v.message() +
                  " (set --tokenizer-dir, or use --vocab bytes)");
    vocab = std::move(v.value());
  } else if (a.vocab == "bytes") {
    vocab = make_byte_vocab();
    o.shape.n_vocab = a.vocab_size ? a.vocab_size : static_cast<int64_t>(vocab.tokens.size());
    for (int64_t id = static_cast<int64_t>(vocab.tokens.size()); id < o.shape.n_vocab; ++id) {
      vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
      vocab.types.push_back(static_cast<int32_t>(TokenType::kUnused));
    }
    if (o.shape.n_vocab < static_cast<int64_t>(vocab.tokens.size()))
      return fail("--vocab-size is smaller than the byte vocabulary (" +
                  std::to_string(vocab.tokens.size()) + ")");
  } else {
    return fail("--vocab must be qwen3 or bytes");
  }
  if (!a.chat_template.empty()) {
    std::ifstream in(a.chat_template, std::ios::binary);
    if (!in) return fail("cannot read the chat template " + a.chat_template);
    std::ostringstream text;
    text << in.rdbuf();
    vocab.chat_template = text.str();
  }
  Progress progress("forging " + a.out, 0, "tensors");
  o.progress = [&progress](int64_t done, int64_t total) { progress.set(done, total); };
  Status s = forge_model(o, vocab, a.out);
  progress.finish();
  if (!s) return fail("forge: " + s.message());
  std::fprintf(stderr, "wrote %s\n", a.out.c_str());
  return 0;
}

}  // namespace

void add_forge_command(CLI::App& app, Action* run) {
  auto a = std::make_shared<ForgeArgs>();
  CLI::App* cmd =
      app.add_subcommand("forge", "write a synthetic Qwen3 GGUF with seeded random weights");
  cmd->add_option("--preset", a->preset,
                  "qwen3-0.6b | qwen3-1.7b | qwen3-4b | qwen3-8b | qwen3-14b");
  cmd->add_option("--layers", a->layers, "number of layers (shortens a preset)");
  cmd->add_option("--hidden", a->hidden, "hidden size");
  cmd->add_option("--heads", a->heads, "attention heads");
  cmd->add_option("--kv-heads", a->kv_heads, "key/value heads");
  cmd->add_option("--head-dim", a->head_dim, "head dimension");
  cmd->add_option("--ffn", a->ffn, "feed-forward width");
  cmd->add_option("--context", a->context, "trained context length");
  cmd->add_option("--vocab-size", a->vocab_size, "embedding rows (padded beyond the tokenizer)");
  cmd->add_option("--tied", a->tied, "tie output to embeddings: yes | no")
      ->check(CLI::IsMember({"yes", "no"}));
  cmd->add_option("--type", a->type, "matrix type: f32 | f16 | bf16 | q8_0 | q4_0");
  cmd->add_option("--seed", a->seed, "random seed");
  cmd->add_option("--vocab", a->vocab,
                  "qwen3 (Hugging Face tokenizer.json) | bytes (small byte-level)");
  cmd->add_option("--tokenizer-dir", a->tokenizer_dir,
                  "folder with tokenizer.json and tokenizer_config.json")
      ->default_val(std::string(DUET_DEFAULT_TOKENIZER_DIR));
  cmd->add_option("--chat-template", a->chat_template,
                  "Jinja chat template file to write into the model (default: the vocabulary's)");
  cmd->add_option("--yarn", a->yarn, "write YaRN rope scaling with this factor");
  cmd->add_option("--yarn-orig-ctx", a->yarn_orig, "YaRN original context length");
  cmd->add_option("--out", a->out, "output .gguf file")->required();
  cmd->callback([run, a] { *run = [a] { return run_forge(*a); }; });
}

}  // namespace duet::cli
