#include "host/model_host.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "api/output_pipeline.h"
#include "backend/backend.h"
#include "backend/select/backend_select.h"
#include "base/progress.h"
#include "host/demo_model.h"
#include "host/kv_plan.h"

namespace duet {

Status ModelHost::check_options(const HostOptions& options) {
  auto think = parse_think_default(options.think);
  if (!think) return think.status();
  if (options.max_running < 1 || options.max_batch_tokens < 1)
    return Status::error("--parallel and --max-batch-tokens must be >= 1");
  if (!kv_cache_type(options.kv_type))
    return Status::error("--kv-type " + options.kv_type +
                         ": not a KV cache type (f16, bf16, q8_0)");
  if (options.ctx_size < 0) return Status::error("-c must be >= 0 (0: the model's context)");
  if (options.kv_budget_mb < 0) return Status::error("--kv-budget-mb must be >= 0 (0: derived)");
  return Status::ok();
}

std::optional<GgmlType> ModelHost::kv_cache_type(const std::string& name) {
  if (name == "f16") return GgmlType::F16;
  if (name == "bf16") return GgmlType::BF16;
  if (name == "q8_0") return GgmlType::Q8_0;
  return std::nullopt;
}

ModelHost::ModelHost(const HostOptions& options, Logger& log) : options_(options), log_(log) {
  if (auto think = parse_think_default(options.think)) think_default_ = *think;
}

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

Status ModelHost::load() {
  const auto t0 = std::chrono::steady_clock::now();
  Status s;
  if (demo()) {
    log_.info("-",
              "no model given (-m): forging the built-in demo model, a small Qwen3 with "
              "RANDOM weights — its output is noise; use -m FILE.gguf for a real model");
    auto path = forge_demo_model();
    if (!path) return path.status().with_context("forging the demo model");
    s = cancel_load_.load() ? Status::error(std::string(kLoadCancelled)) : load_file(*path);
    std::error_code ec;
    std::filesystem::remove(*path, ec);
  } else {
    s = load_file(options_.model_path);
  }
  if (!s) return s;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", secs);
  load_time_ = took;
  loaded_.store(true, std::memory_order_release);
  return Status::ok();
}

Status ModelHost::load_file(const std::string& path) {
  DUET_TRY(load_model(path));
  DUET_TRY(load_tokenizer());
  if (cancel_load_.load()) return Status::error(std::string(kLoadCancelled));
  DUET_TRY(make_engine());
  DUET_TRY(load_chat_template());
  info_ = describe_model(model_->gguf(), path, demo(), options_.model_name);
  info_.context_length = engine_->max_sequence_tokens();
  info_.chat_template = template_->source();
  info_.architecture_summary = model_->config().summary();
  engine_->start();
  return Status::ok();
}

// The backend and the weights on it.
Status ModelHost::load_model(const std::string& path) {
  // The CPU backend computes on the pool; every backend's sampling runs on it.
  pool_ = std::make_unique<ThreadPool>(options_.backend == "ref" ? 1 : options_.threads);
  auto chosen = make_backend(options_.backend, *pool_);
  if (!chosen) return chosen.status().with_context("choosing the backend");
  log_.info("-", "backend: " + chosen->description);
  ModelLoadOptions load_options;
  load_options.yarn_factor = options_.rope_scale;
  load_options.cancel = &cancel_load_;
  Progress progress(demo() ? "loading the demo model"
                           : "loading " + std::filesystem::path(path).filename().string(),
                    0, "matrices");
  load_options.progress = [&progress](int64_t done, int64_t total) { progress.set(done, total); };
  auto model = Qwen3Model::load(path, std::move(chosen->backend), load_options);
  if (!model) {
    if (model.status().message() == kLoadCancelled) return model.status();
    return model.status().with_context(demo() ? "loading the demo model" : "loading the model");
  }
  progress.finish();
  model_ = std::move(model.value());
  return Status::ok();
}

// The tokenizer and the control tokens the host needs by id.
Status ModelHost::load_tokenizer() {
  auto tok = Tokenizer::from_gguf(model_->gguf());
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
  if (special_.im_start < 0 || special_.im_end < 0)
    return Status::error("the vocabulary lacks <|im_start|> or <|im_end|>; not a Qwen3 chat model");
  reasoning_ids_ = reasoning_token_ids(*tokenizer_);
  // What structured output may write: a grammar never spells control tokens or think tags,
  // and the engine allows the end tokens itself where the grammar may end.
  const int32_t not_text[] = {special_.im_start, special_.im_end, special_.endoftext,
                              special_.think_open, special_.think_close};
  token_trie_ = grammar::text_token_trie(*tokenizer_, not_text);
  mask_precompute_ = std::make_unique<MaskPrecompute>(token_trie_);
  return Status::ok();
}

// The engine, made but not started (its thread starts once the host is complete).
Status ModelHost::make_engine() {
  EngineConfig ec;
  ec.kv_type = *kv_cache_type(options_.kv_type);
  DUET_TRY(plan_kv_cache(ec));
  ec.kv_blocks = plan_.blocks;
  ec.max_context = plan_.context;
  ec.scheduler.max_batch_tokens = options_.max_batch_tokens;
  ec.scheduler.max_running = options_.max_running;
  ec.scheduler.key_cost = prompt_key_cost(model_->config());
  if (special_.im_end >= 0) ec.end_token_ids.push_back(special_.im_end);
  if (special_.endoftext >= 0) ec.end_token_ids.push_back(special_.endoftext);
  ec.reasoning_ids = reasoning_ids_;
  ec.step_pause = std::chrono::microseconds(
      static_cast<int64_t>(std::clamp(options_.debug_step_pause_ms, 0.0, 10000.0) * 1000));
  if (options_.test_logits_override)
    ec.logits_override = options_.test_logits_override(*tokenizer_);
  ec.sampling_pool = options_.backend == "ref" ? nullptr : pool_.get();
  auto engine = Engine::create(*model_, ec);
  if (!engine) return engine.status().with_context("starting the engine");
  engine_ = std::move(engine.value());
  return Status::ok();
}

// The context and the KV pool (host/kv_plan.h), from the flags and the memory left free by
// the weights. --fit's changes are logged with the flag that controls each.
Status ModelHost::plan_kv_cache(const EngineConfig& ec) {
  const Qwen3Config& c = model_->config();
  const KvShape shape = c.kv_shape();
  Backend& backend = model_->backend();
  KvPlanInput in;
  in.model_context = c.max_context();
  in.trained_context = c.rope_scaling.kind == RopeScaling::Kind::kYarn
                           ? c.rope_scaling.original_context
                           : c.n_ctx_train;
  in.ctx_size = options_.ctx_size;
  in.bytes_per_token = KvStorage::bytes_per_token(shape, ec.kv_type);
  in.block_size = ec.block_size;
  in.parallel = options_.max_running;
  in.kv_budget_mb = options_.kv_budget_mb;
  in.fit = options_.fit;
  in.max_blocks = KvStorage::max_blocks(backend, shape, ec.block_size, ec.kv_type);
  if (auto free = backend.free_memory_bytes()) {
    size_t left = *free;
    // Weights read from the mapped file count as reclaimable cache, but must stay resident.
    if (backend.buffers_in_host_memory())
      left = left > model_->mapped_weight_bytes() ? left - model_->mapped_weight_bytes() : 0;
    in.free_bytes = left;
  }
  auto plan = plan_kv(in);
  if (!plan) return plan.status();
  plan_ = std::move(plan.value());
  for (const std::string& change : plan_.adjustments) log_.warn("-", "--fit: " + change);
  return Status::ok();
}

std::string ModelHost::startup_summary() const {
  std::string s = "loaded in " + load_time_ + ": model " + info_.name + " (" +
                  info_.parameter_size + ", " + info_.quantization + ") | context " +
                  std::to_string(plan_.context) + " | KV " + options_.kv_type + " " +
                  format_bytes(plan_.bytes) + " = " + std::to_string(plan_.pool_tokens()) +
                  " tokens (" + plan_.pool_reason + ") | " + std::to_string(options_.max_running) +
                  " sequences | " + std::to_string(pool_->size()) + " threads | backend " +
                  model_->backend().name();
  return s;
}

// The file's chat template, or Qwen3's built-in one when it has none that parses.
Status ModelHost::load_chat_template() {
  if (const GgufValue* v = model_->gguf().find("tokenizer.chat_template"); v && v->as_string()) {
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
  return Status::ok();
}

}  // namespace duet
