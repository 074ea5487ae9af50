// What a client asks the engine for (token ids and limits; text lives in text/), and the
// stream of events it gets back. A RequestHandle is shared by the engine thread, which
// pushes events, and the consumer (an HTTP writer, the CLI), which pops them or cancels.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "engine/sampling_params.h"
#include "engine/token_constraint.h"

namespace duet {

using Clock = std::chrono::steady_clock;

struct GenerateRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int64_t max_tokens = 256;  // generated tokens (injected budget tokens included)
  int64_t min_tokens = 0;    // end tokens are banned until this many were generated
  bool ignore_eos = false;
  std::vector<int32_t> stop_token_ids;  // besides the model's end tokens
  // Thinking budget: once this many tokens were generated inside <think>, the engine
  // appends `budget_closing_tokens` (Qwen's closing phrase and </think>) and lets the
  // model answer. nullopt: no cap.
  std::optional<int64_t> thinking_budget;
  bool starts_in_reasoning = false;  // the prompt leaves the model inside <think>
  std::vector<int32_t> budget_closing_tokens;
  // Structured output: the tokens the answer may consist of (null: any). With
  // constraint_after_reasoning the constraint starts once the think block has closed: before
  // the model opens it only <think> may come, and inside it everything but the
  // end tokens (the answer must still follow).
  std::shared_ptr<TokenConstraint> constraint;
  bool constraint_after_reasoning = false;
  // Past this time the request ends as a length stop after its next token (serve's
  // --request-timeout, or the request's own "timeout"). nullopt: only max_tokens ends it.
  std::optional<Clock::time_point> deadline;
};

enum class FinishReason { kNone, kStop, kLength, kCancelled, kError };
const char* finish_reason_name(FinishReason r);

struct TokenEvent {
  std::vector<int32_t> tokens;  // one sampled token, or the injected budget tokens
  bool injected = false;        // tokens the engine wrote, not sampled
  float logprob = 0;
  std::vector<TokenLogprob> top_logprobs;
  bool in_reasoning = false;                  // the (first) token was generated inside <think>
  FinishReason finish = FinishReason::kNone;  // set on the last event of a request
  std::string error;                          // with kError
  Clock::time_point emitted;                  // when the engine produced it
};

// Per-request counts and times, final once the last event was pushed.
struct RequestStats {
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // reused from the prefix cache
  int64_t generated_tokens = 0;      // sampled plus injected
  int64_t reasoning_tokens = 0;
  int64_t preemptions = 0;
  Clock::time_point submitted, scheduled, first_token, finished;
};

class RequestHandle {
 public:
  // Waits up to `timeout` for the next event; false on timeout.
  bool pop(TokenEvent& out, std::chrono::milliseconds timeout);
  bool try_pop(TokenEvent& out);
  // Stops the generation; the engine frees its KV blocks in its next step and pushes a
  // final kCancelled event. Safe from any thread, any number of times.
  void cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  bool finished() const;
  RequestStats stats() const;
  int64_t id() const { return id_; }
  // Sets what the engine thread calls after each push (an async writer's wake-up). Safe at
  // any time: events pushed before it was set are already in the queue, so a caller that
  // sets it late should drain once afterwards.
  void set_on_event(std::function<void()> fn);

 private:
  friend class Engine;
  void push(TokenEvent ev);

  int64_t id_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> events_;
  bool done_ = false;
  RequestStats stats_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> wake_engine_;
  std::function<void()> on_event_;  // guarded by mu_
};

}  // namespace duet
