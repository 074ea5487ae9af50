// The model the server serves: a GGUF file named with -m, or the built-in demo model (a
// small Qwen3 with random weights, forged at start so a new user sees the whole system work
// before downloading gigabytes). Owns the weights, the tokenizer, the chat template and the
// engine thread. Loading runs once, in the background, while /ready says 503.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "api/prompt_builder.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "model/qwen3_model.h"
#include "server/log.h"
#include "server/serve_options.h"
#include "text/bpe_tokenizer.h"
#include "text/chat_template.h"

namespace duet {

// What the listing routes (/v1/models, /api/tags, /api/show, /api/ps) say about the model.
struct ModelInfo {
  std::string name;      // e.g. "qwen3-demo" (clients may add ":latest")
  bool demo = false;     // random weights: the output is noise
  std::string owned_by;  // "duet", or "duet-demo"
  std::string description;
  int64_t created = 0;  // unix seconds
  uint64_t size_bytes = 0;
  std::string digest;          // hex; identifies the file's header and size, not a checksum
  std::string parameter_size;  // "0.6B", "1.2M"
  std::string quantization;    // "Q8_0", "Q4_K"...
  int64_t context_length = 0;  // what one sequence may hold on this server
  std::string chat_template;   // the Jinja source the prompts are rendered with
  std::string architecture_summary;
};

// Control and marker tokens the server needs by id (-1 when the vocabulary lacks one).
struct SpecialTokens {
  int32_t im_start = -1, im_end = -1, endoftext = -1;
  int32_t think_open = -1, think_close = -1;
  int32_t tool_call_open = -1, tool_call_close = -1;
};

class ModelHost {
 public:
  ModelHost(const ServeOptions& options, Logger& log);
  ~ModelHost();

  // Loads (or forges) the model, starts the engine. Blocking; call once.
  Status load();
  // From another thread: a load in progress stops at its next step and fails with
  // kLoadCancelled (qwen3_model.h).
  void cancel_load() { cancel_load_.store(true); }
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  // Stops the engine thread and ends every request it holds (queued ones too) with a final
  // cancelled event; later submits are refused. The engine object stays, so a route that
  // still calls engine() meanwhile is safe. Call while the I/O threads run, so that those
  // final events reach their writers and every request's objects are released.
  void stop_engine();
  // Stops and destroys the engine (every live request ends as cancelled). Afterwards only
  // info() is valid.
  void shutdown();

  // Valid once loaded() is true; immutable afterwards (the engine is thread-safe).
  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ModelInfo& info() const { return info_; }
  const SpecialTokens& special() const { return special_; }
  const Qwen3Config& config() const { return model_->config(); }
  std::vector<int32_t> end_tokens() const;
  // The engine's think-block ids; every output pipeline reads its tokens with these.
  const std::shared_ptr<const ReasoningTokenIds>& reasoning_ids() const { return reasoning_ids_; }
  // What the prompt builder needs (tokenizer, template, vocabulary and context sizes).
  PromptContext prompt_context() const;

 private:
  Status load_file(const std::string& path);
  Result<std::string> forge_demo();

  const ServeOptions& options_;
  Logger& log_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Qwen3Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ChatTemplate> template_;
  std::unique_ptr<Engine> engine_;
  ModelInfo info_;
  SpecialTokens special_;
  std::shared_ptr<const ReasoningTokenIds> reasoning_ids_;
  std::atomic<bool> loaded_{false};
  std::atomic<bool> cancel_load_{false};
};

// "0.6B", "14.8B", "3.2M": Ollama's parameter_size spelling.
std::string format_parameter_count(uint64_t n);

}  // namespace duet
