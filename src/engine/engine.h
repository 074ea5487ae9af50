// The engine: one thread that serves every request at once. Each step it takes new
// requests and cancellations, asks the scheduler what to compute, runs one batched forward
// pass over all of it (so each weight is read once per step), samples (the sequences' draws
// in parallel on the sampling pool when there is one), and pushes one event per sequence.
// Cancelled or finished sequences give their KV blocks back in the same step.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/reasoning_tracker.h"
#include "engine/request.h"
#include "engine/scheduler.h"
#include "kv/block_manager.h"
#include "kv/kv_storage.h"
#include "model/qwen3_model.h"

namespace duet {

// Rewrites one sequence's logits before sampling, given its prompt and what it generated so
// far. duet itself never sets one: a test binary does (tests/support/scripted_serve.cc), to
// make a random model write a chosen reply (a tool call) through the production path.
using LogitsOverride = std::function<void(
    std::span<const int32_t> prompt, std::span<const int32_t> generated, std::span<float> logits)>;

struct EngineConfig {
  int64_t kv_blocks = 0;    // 0: from kv_budget_bytes
  int64_t max_context = 0;  // tokens one sequence may hold (-c); 0: the model's context
  size_t kv_budget_bytes = size_t{1} << 30;
  int64_t block_size = 16;
  GgmlType kv_type = GgmlType::F16;
  SchedulerConfig scheduler;
  std::vector<int32_t> end_token_ids;  // e.g. <|im_end|> 151645 and <|endoftext|> 151643
  // <think>, </think> and the whitespace tokens, for the thinking budget and the reasoning
  // count; the output pipeline reads the same ids (engine/reasoning_tracker.h). nullptr: the
  // vocabulary has no think block.
  std::shared_ptr<const ReasoningTokenIds> reasoning_ids;
  // The engine thread waits this long after every step that did work (0: never). Latency
  // tests pace generation with it, so that the stream path (engine → writer → socket →
  // client) is measured on its own instead of behind a compute thread that holds a core.
  std::chrono::microseconds step_pause{0};
  LogitsOverride logits_override;  // tests only; empty in duet
  // Threads for drawing the step's tokens: each request's sampler is its own, so the rows of
  // a step are sampled in parallel (the backend's pool, idle between forward passes). nullptr:
  // on the engine thread, one after another.
  ThreadPool* sampling_pool = nullptr;
};

// SchedulerConfig::key_cost for this model: the multiply-adds of one prompt token against
// one earlier position (a score and a value row per head, every layer) over those of one
// token through the layers' matrices, times how much slower attention's float arithmetic
// runs than the matrices' (measured on the CPU: about 2).
double prompt_key_cost(const Qwen3Config& c);

struct EngineStats {
  int64_t running = 0, waiting = 0;
  BlockManagerStats kv;
  int64_t block_size = 0;
  int64_t preemptions = 0;
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0, generated_tokens = 0;
  int64_t steps = 0, requests_finished = 0, requests_cancelled = 0;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> create(Qwen3Model& model, const EngineConfig& config);
  ~Engine();

  // Checks the request (prompt ids, context, cache capacity, sampling values) and queues it.
  // Thread-safe. The request runs once the engine thread (start()) or step() picks it up.
  Result<std::shared_ptr<RequestHandle>> submit(GenerateRequest request);

  void start();  // runs step() on the engine thread until stop()
  void stop();
  // Stops the thread and ends every request it holds, queued ones included, with a final
  // kCancelled event; later submits are refused. The engine object stays valid (stats(),
  // a refused submit()), so threads that still hold a reference may call it meanwhile.
  void shutdown();
  // One engine iteration on the calling thread (tests, or when no thread was started).
  // Returns false when there was nothing to do.
  bool step();

  EngineStats stats() const;
  const Qwen3Model& model() const { return model_; }
  int64_t max_sequence_tokens() const;

 private:
  struct Live;
  Engine(Qwen3Model& model, const EngineConfig& config);
  void finish(Live& live, FinishReason reason, const std::string& error = {});
  FinishReason after_sample(Live& live, const SampleResult& r);
  void push_event(Live& live, TokenEvent ev, int64_t n_tokens);
  void inject(Live& live, std::vector<int32_t> tokens, bool in_reasoning);
  FinishReason jump_forward(Live& live);
  bool constraint_active(const Live& live) const;
  FinishReason advance_constraint(Live& live, int32_t token);
  void apply_constraint(Live& live, std::span<float> logits) const;
  void sample_step(const StepPlan& plan, std::vector<float>& logits);
  void wake();

  Qwen3Model& model_;
  EngineConfig config_;
  std::unique_ptr<KvStorage> kv_;
  std::vector<float> step_logits_;  // one step's logits, reused by the engine thread
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<std::unique_ptr<Live>> live_;

  mutable std::mutex mu_;  // guards inbox_, stats_ and the wake flag
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Live>> inbox_;
  bool wake_flag_ = false;
  EngineStats stats_;
  std::atomic<bool> stop_{false};
  bool closed_ = false;  // after shutdown(): submit() refuses (guarded by mu_)
  std::thread thread_;
  int64_t next_id_ = 1;
};

}  // namespace duet
