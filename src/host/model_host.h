// The model duet serves: a GGUF file, or the built-in demo model (host/demo_model.h). Owns the
// backend, the weights, the tokenizer, the chat template and the engine thread. `duet serve`
// loads it in the background while /ready says 503; `duet run` loads it before the first
// prompt. start_generation.h turns a parsed request into a running generation on it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "api/prompt_builder.h"
#include "base/log.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "host/host_options.h"
#include "host/kv_plan.h"
#include "host/mask_precompute.h"
#include "host/model_info.h"
#include "model/qwen3_model.h"
#include "text/grammar/token_trie.h"
#include "text/mode/thinking_mode.h"
#include "text/template/chat_template.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace duet {

// Control and marker tokens the host needs by id (-1 when the vocabulary lacks one).
struct SpecialTokens {
  int32_t im_start = -1, im_end = -1, endoftext = -1;
  int32_t think_open = -1, think_close = -1;
};

class ModelHost {
 public:
  // The options' values that need no model: the default mode and the engine's limits.
  static Status check_options(const HostOptions& options);
  // --kv-type's name to the stored type: f16, bf16, q8_0.
  static std::optional<GgmlType> kv_cache_type(const std::string& name);

  // `options` must pass check_options and outlive the host.
  ModelHost(const HostOptions& options, Logger& log);
  ~ModelHost();

  // Loads (or forges) the model, starts the engine. Blocking; call once.
  Status load();
  // From another thread: a load in progress stops at its next step and fails with
  // kLoadCancelled (qwen3_model.h).
  void cancel_load() { cancel_load_.store(true); }
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  // Stops the engine thread and ends every request it holds (queued ones too) with a final
  // cancelled event; later submits are refused. The engine object stays, so a caller that
  // still calls engine() meanwhile is safe. The server calls it while its I/O threads run, so
  // that those final events reach their writers and every request's objects are released.
  void stop_engine();
  // Stops and destroys the engine (every live request ends as cancelled). Afterwards only
  // info() is valid.
  void shutdown();

  // Valid once loaded() is true; immutable afterwards (the engine is thread-safe).
  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ModelInfo& info() const { return info_; }
  const Qwen3Config& config() const { return model_->config(); }
  ThinkDefault think_default() const { return think_default_; }
  double request_timeout_seconds() const { return options_.request_timeout_seconds; }
  bool jump_forward() const { return !options_.no_jump_forward; }
  // The engine's think-block ids; every output pipeline reads its tokens with these.
  const std::shared_ptr<const ReasoningTokenIds>& reasoning_ids() const { return reasoning_ids_; }
  // The tokens structured output may write, with their bytes (control tokens, think tags and
  // end tokens left out).
  const std::shared_ptr<const grammar::TokenTrie>& token_trie() const { return token_trie_; }
  // Computes a grammar's stack masks in the background, once (host/mask_precompute.h).
  MaskPrecompute& mask_precompute() { return *mask_precompute_; }
  // What the prompt builder needs (tokenizer, template, vocabulary and context sizes).
  PromptContext prompt_context() const;
  // One line for the log once loaded: load time, model, format, context, KV type and memory,
  // sequences, threads, backend.
  std::string startup_summary() const;
  const KvPlan& kv_plan() const { return plan_; }

 private:
  // No -m: the built-in demo model is served.
  bool demo() const { return options_.model_path.empty(); }
  Status load_file(const std::string& path);
  Status load_model(const std::string& path);
  Status load_tokenizer();
  Status make_engine();
  Status plan_kv_cache(const EngineConfig& ec);
  Status load_chat_template();

  const HostOptions& options_;
  Logger& log_;
  ThinkDefault think_default_ = ThinkDefault::kAuto;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Qwen3Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ChatTemplate> template_;
  std::unique_ptr<Engine> engine_;
  ModelInfo info_;
  SpecialTokens special_;
  KvPlan plan_;
  std::string load_time_;  // "1.32 s"
  std::shared_ptr<const ReasoningTokenIds> reasoning_ids_;
  std::shared_ptr<const grammar::TokenTrie> token_trie_;
  std::unique_ptr<MaskPrecompute> mask_precompute_;
  std::atomic<bool> loaded_{false};
  std::atomic<bool> cancel_load_{false};
};

}  // namespace duet
