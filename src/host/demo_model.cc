#include "host/demo_model.h"

#include <unistd.h>

#include <filesystem>

#include "forge/forge.h"
#include "text/template/chat_template.h"

namespace duet {
namespace {

// The demo model's shape: small enough that a laptop answers at thousands of tokens per
// second, Qwen3's architecture in every other respect.
ForgeShape demo_shape() {
  ForgeShape s;
  s.n_layer = 2;
  s.n_embd = 128;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 32;
  s.n_ff = 384;
  s.n_ctx = 4096;
  return s;
}

}  // namespace

Result<std::string> forge_demo_model() {
  ForgeOptions o;
  o.shape = demo_shape();
  o.type = GgmlType::Q8_0;
  o.seed = 20250501;
  o.name = "qwen3-demo";
  ForgeVocab vocab = make_byte_vocab();
  vocab.chat_template = std::string(builtin_qwen3_template());
  o.shape.n_vocab = static_cast<int64_t>(vocab.tokens.size());
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  const std::string path = (dir / ("duet-demo-" + std::to_string(::getpid()) + ".gguf")).string();
  DUET_TRY(forge_model(o, vocab, path));
  return path;
}

}  // namespace duet
