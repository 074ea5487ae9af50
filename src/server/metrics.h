// /metrics in Prometheus' text format. The names mirror vLLM's (vllm:...) so existing
// dashboards and load-aware routers read duet unchanged; duet's own additions are duet:...
// (reasoning tokens, thinking-mode decisions, cancellations by phase, rejections).
// Thread-safe: observations come from every connection's strand.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace duet {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Lines for `name` with `labels` ("model_name=\"x\""), cumulative buckets, +Inf, sum, count.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // one per bound, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

// Where a request was when its client went away.
enum class CancelPhase { kQueued, kPrefill, kDecode };

class ServerMetrics {
 public:
  explicit ServerMetrics(std::string model_name);
  void set_model_name(std::string name);

  void observe_ttft(double seconds);
  void observe_inter_token(double seconds);
  void observe_e2e(double seconds);
  void observe_queue_time(double seconds);
  // A finished request: its finish reason ("stop", "length", "abort", ...) and token counts.
  void request_finished(const std::string& reason, int64_t prompt_tokens, int64_t generation_tokens,
                        int64_t reasoning_tokens, int64_t cached_tokens);
  void cancelled(CancelPhase phase);
  void mode_decision(bool thinking, const std::string& source);
  void rejected(const std::string& reason);  // "queue_full", "draining", ...

  std::string render(const EngineStats* engine, bool ready) const;

 private:
  mutable std::mutex mu_;
  std::string model_name_;
  Histogram ttft_, itl_, e2e_, queue_;
  int64_t prompt_tokens_ = 0, generation_tokens_ = 0, reasoning_tokens_ = 0, cached_tokens_ = 0;
  std::map<std::string, int64_t> finished_;                       // by finish reason
  std::map<std::string, int64_t> cancelled_;                      // by phase
  std::map<std::pair<std::string, std::string>, int64_t> modes_;  // (mode, source)
  std::map<std::string, int64_t> rejected_;
};

}  // namespace duet
