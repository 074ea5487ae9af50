#include "server/model_host.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "api/output_pipeline.h"
#include "backend/backend.h"
#include "backend/select/backend_select.h"
#include "forge/forge.h"

namespace duet {
namespace {

// FNV-1a over some bytes, twice with different offsets: a 128-bit hex id that tells files
// apart in /api/tags. It is not a checksum of the whole file (that would read gigabytes).
std::string hex_id(std::span<const uint8_t> bytes, uint64_t size) {
  uint64_t a = 0xcbf29ce484222325ull ^ size, b = 0x84222325cbf29ce4ull + size;
  for (uint8_t c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x100000001b3ull + 1;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

std::string file_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "model" : stem;
}

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

std::string format_parameter_count(uint64_t n) {
  char buf[32];
  if (n >= 1'000'000'000ull)
    std::snprintf(buf, sizeof buf, "%.1fB", n / 1e9);
  else if (n >= 1'000'000ull)
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
  return buf;
}

ModelHost::ModelHost(const ServeOptions& options, Logger& log) : options_(options), log_(log) {}

ModelHost::~ModelHost() { shutdown(); }

void ModelHost::stop_engine() {
  if (engine_) engine_->shutdown();
}

// Ends every live request (the engine pushes their final events, which only post to the
// connections' strands), then joins the engine thread. run_serve calls stop_engine() first,
// while the I/O threads still run; this is what is left once they have stopped.
void ModelHost::shutdown() {
  loaded_.store(false, std::memory_order_release);
  engine_.reset();
}

std::vector<int32_t> ModelHost::end_tokens() const {
  std::vector<int32_t> ids;
  if (special_.im_end >= 0) ids.push_back(special_.im_end);
  if (special_.endoftext >= 0) ids.push_back(special_.endoftext);
  return ids;
}

PromptContext ModelHost::prompt_context() const {
  PromptContext c;
  c.tokenizer = tokenizer_.get();
  c.chat_template = template_.get();
  c.n_vocab = model_->config().n_vocab;
  c.max_context = engine_->max_sequence_tokens();
  c.im_start = special_.im_start;
  c.think_open = special_.think_open;
  c.think_close = special_.think_close;
  c.client_added_tokens = options_.client_added_tokens == "non-special"
                              ? ClientAddedTokens::kNonSpecial
                              : ClientAddedTokens::kNone;
  return c;
}

Result<std::string> ModelHost::forge_demo() {
  ForgeOptions o;
  o.shape = demo_shape();
  o.type = GgmlType::Q8_0;
  o.seed = 20250501;
  o.name = "qwen3-demo";
  ForgeVocab vocab = make_byte_vocab();
  vocab.chat_template = std::string(builtin_qwen3_template());
  o.shape.n_vocab = static_cast<int64_t>(vocab.tokens.size());
  // A private file, unlinked once mapped: nothing is left behind, and two servers starting
  // at once never share a half-written file.
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  const std::string path = (dir / ("duet-demo-" + std::to_string(::getpid()) + ".gguf")).string();
  DUET_TRY(forge_model(o, vocab, path));
  return path;
}

Status ModelHost::load() {
  const auto t0 = std::chrono::steady_clock::now();
  Status s;
  if (options_.model_path.empty()) {
    log_.info("-",
              "no model given (-m): forging the built-in demo model, a small Qwen3 with "
              "RANDOM weights — its output is noise; use -m FILE.gguf for a real model");
    auto path = forge_demo();
    if (!path) return path.status().with_context("forging the demo model");
    s = cancel_load_.load() ? Status::error(std::string(kLoadCancelled)) : load_file(*path);
    std::error_code ec;
    std::filesystem::remove(*path, ec);
  } else {
    s = load_file(options_.model_path);
  }
  if (!s) return s;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char line[160];
  std::snprintf(line, sizeof line, "model '%s' ready in %.2f s (%s, %s, context %lld)",
                info_.name.c_str(), secs, info_.parameter_size.c_str(), info_.quantization.c_str(),
                static_cast<long long>(info_.context_length));
  log_.info("-", line);
  loaded_.store(true, std::memory_order_release);
  return Status::ok();
}

Status ModelHost::load_file(const std::string& path) {
  const bool demo = options_.model_path.empty();
  // The CPU backend computes on the pool; every backend's sampling runs on it.
  pool_ = std::make_unique<ThreadPool>(options_.backend == "ref" ? 1 : options_.threads);
  auto chosen = make_backend(options_.backend, *pool_);
  if (!chosen) return chosen.status().with_context("choosing the backend");
  log_.info("-", "backend: " + chosen->description);
  std::unique_ptr<Backend> backend = std::move(chosen->backend);
  ModelLoadOptions load_options;
  load_options.yarn_factor = options_.rope_scale;
  load_options.cancel = &cancel_load_;
  auto model = Qwen3Model::load(path, std::move(backend), load_options);
  if (!model) {
    if (model.status().message() == kLoadCancelled) return model.status();
    return model.status().with_context(demo ? "loading the demo model" : "loading the model");
  }
  model_ = std::move(model.value());
  const GgufFile& g = model_->gguf();

  auto tok = Tokenizer::from_gguf(g);
  if (!tok) return tok.status().with_context("reading the tokenizer");
  tokenizer_ = std::make_unique<Tokenizer>(std::move(tok.value()));
  auto id = [&](const char* text) -> int32_t {
    auto found = tokenizer_->find_token(text);
    return found ? *found : -1;
  };
  special_.im_start = id("<|im_start|>");
  special_.im_end = id("<|im_end|>");
  special_.endoftext = id("<|endoftext|>");
  special_.think_open = id("<think>");
  special_.think_close = id("</think>");
  special_.tool_call_open = id("<tool_call>");
  special_.tool_call_close = id("</tool_call>");
  if (special_.im_start < 0 || special_.im_end < 0)
    return Status::error("the vocabulary lacks <|im_start|> or <|im_end|>; not a Qwen3 chat model");

  EngineConfig ec;
  ec.kv_budget_bytes = static_cast<size_t>(std::max<int64_t>(1, options_.kv_budget_mb)) << 20;
  ec.scheduler.max_batch_tokens = options_.max_batch_tokens;
  ec.scheduler.max_running = options_.max_running;
  ec.end_token_ids = end_tokens();
  reasoning_ids_ = reasoning_token_ids(*tokenizer_);
  ec.reasoning_ids = reasoning_ids_;
  ec.step_pause = std::chrono::microseconds(
      static_cast<int64_t>(std::clamp(options_.debug_step_pause_ms, 0.0, 10000.0) * 1000));
  if (options_.test_logits_override)
    ec.logits_override = options_.test_logits_override(*tokenizer_);
  ec.sampling_pool = options_.backend == "ref" ? nullptr : pool_.get();
  if (cancel_load_.load()) return Status::error(std::string(kLoadCancelled));
  auto engine = Engine::create(*model_, ec);
  if (!engine) return engine.status().with_context("starting the engine");
  engine_ = std::move(engine.value());

  // What the listings say.
  const Qwen3Config& c = model_->config();
  info_.demo = demo;
  std::string name = options_.model_name;
  if (name.empty()) name = demo ? "qwen3-demo" : file_stem(path);
  info_.name = name;
  info_.owned_by = demo ? "duet-demo" : "duet";
  info_.description =
      demo ? "duet's built-in demo model: Qwen3 architecture, byte-level vocabulary, RANDOM "
             "weights (its output is noise). Start duet with -m FILE.gguf to serve a real model."
           : "Qwen3 model served by duet from " + file_stem(path) + ".gguf";
  info_.created = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::error_code fec;
  info_.size_bytes = demo ? 0 : std::filesystem::file_size(path, fec);
  uint64_t params = 0;
  std::map<GgmlType, uint64_t> bytes_by_type;
  std::string names;
  for (const GgufTensorInfo& t : g.tensors()) {
    params += t.n_elements;
    if (t.n_dims >= 2) bytes_by_type[t.type] += t.n_bytes;
    names += t.name;
    if (demo) info_.size_bytes += t.n_bytes;
  }
  GgmlType main_type = GgmlType::F32;
  uint64_t most = 0;
  for (const auto& [type, n] : bytes_by_type)
    if (n > most) most = n, main_type = type;
  info_.parameter_size = format_parameter_count(params);
  info_.quantization = ggml_type_name(main_type);
  for (char& ch : info_.quantization)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  info_.digest =
      hex_id(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(names.data()), names.size()),
             info_.size_bytes + params);
  info_.context_length = engine_->max_sequence_tokens();
  if (const GgufValue* v = g.find("tokenizer.chat_template"); v && v->as_string()) {
    auto t = ChatTemplate::create(*v->as_string());
    if (t)
      template_ = std::make_unique<ChatTemplate>(std::move(t.value()));
    else
      log_.warn("-", "the file's chat template does not parse (" + t.message() +
                         "); using Qwen3's built-in template");
  } else {
    log_.info("-", "the file carries no chat template; using Qwen3's built-in template");
  }
  if (!template_) {
    auto t = ChatTemplate::create(builtin_qwen3_template());
    if (!t) return t.status().with_context("built-in chat template");
    template_ = std::make_unique<ChatTemplate>(std::move(t.value()));
  }
  info_.chat_template = template_->source();
  info_.architecture_summary = c.summary();
  engine_->start();
  return Status::ok();
}

}  // namespace duet
