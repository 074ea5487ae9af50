#include "server/metrics.h"

#include <cstdio>
#include <utility>

namespace duet {
namespace {

// vLLM's bucket boundaries, so histograms line up with theirs on shared dashboards.
std::vector<double> ttft_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> itl_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> e2e_buckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Label values are written by duet itself (model names, reasons), but escape anyway.
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size(), 0) {}

void Histogram::observe(double value) {
  ++count_;
  sum_ += value;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++counts_[i];
      return;
    }
  }
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{" + labels + ",le=\"" + number(bounds_[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

ServerMetrics::ServerMetrics(std::string model_name)
    : model_name_(std::move(model_name)),
      ttft_(ttft_buckets()),
      itl_(itl_buckets()),
      e2e_(e2e_buckets()),
      queue_(e2e_buckets()) {}

void ServerMetrics::set_model_name(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  model_name_ = std::move(name);
}

void ServerMetrics::observe_ttft(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  ttft_.observe(s);
}
void ServerMetrics::observe_inter_token(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  itl_.observe(s);
}
void ServerMetrics::observe_e2e(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  e2e_.observe(s);
}
void ServerMetrics::observe_queue_time(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.observe(s);
}

void ServerMetrics::request_finished(const std::string& reason, int64_t prompt_tokens,
                                     int64_t generation_tokens, int64_t reasoning_tokens,
                                     int64_t cached_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  finished_[reason]++;
  prompt_tokens_ += prompt_tokens;
  generation_tokens_ += generation_tokens;
  reasoning_tokens_ += reasoning_tokens;
  cached_tokens_ += cached_tokens;
}

void ServerMetrics::cancelled(CancelPhase phase) {
  static constexpr const char* kNames[] = {"queued", "prefill", "decode"};
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_[kNames[static_cast<int>(phase)]]++;
}

void ServerMetrics::mode_decision(bool thinking, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  modes_[{thinking ? "thinking" : "non_thinking", source}]++;
}

void ServerMetrics::rejected(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  rejected_[reason]++;
}

std::string ServerMetrics::render(const EngineStats* engine, bool ready) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string model = "model_name=\"" + label_value(model_name_) + "\"";
  std::string out;
  auto gauge = [&](const char* name, const char* help, double v) {
    header(out, name, "gauge", help);
    out += std::string(name) + "{" + model + "} " + number(v) + "\n";
  };
  auto counter = [&](const char* name, const char* help, double v) {
    header(out, name, "counter", help);
    out += std::string(name) + "{" + model + "} " + number(v) + "\n";
  };
  const EngineStats e = engine ? *engine : EngineStats{};
  gauge("vllm:num_requests_running", "Requests being computed (prefill or decode).",
        static_cast<double>(e.running));
  gauge("vllm:num_requests_waiting", "Requests waiting for a place in the batch.",
        static_cast<double>(e.waiting));
  const double usage = e.kv.total_blocks > 0 ? static_cast<double>(e.kv.used_blocks) /
                                                   static_cast<double>(e.kv.total_blocks)
                                             : 0.0;
  gauge("vllm:kv_cache_usage_perc", "Fraction of KV-cache blocks in use (1 = full).", usage);
  counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
          static_cast<double>(e.kv.prefix_queries * e.block_size));
  counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.",
          static_cast<double>(e.kv.prefix_hits * e.block_size));
  counter("vllm:num_preemptions_total", "Sequences preempted because the KV cache was full.",
          static_cast<double>(e.preemptions));
  counter("vllm:prompt_tokens_total", "Prompt tokens of finished requests.",
          static_cast<double>(prompt_tokens_));
  counter("vllm:generation_tokens_total", "Generated tokens of finished requests.",
          static_cast<double>(generation_tokens_));
  header(out, "vllm:request_success_total", "counter", "Finished requests by finish reason.");
  for (const auto& [reason, n] : finished_)
    out += "vllm:request_success_total{" + model + ",finished_reason=\"" + label_value(reason) +
           "\"} " + std::to_string(n) + "\n";
  header(out, "vllm:time_to_first_token_seconds", "histogram", "Time to first token.");
  ttft_.render(out, "vllm:time_to_first_token_seconds", model);
  header(out, "vllm:inter_token_latency_seconds", "histogram", "Time between output tokens.");
  itl_.render(out, "vllm:inter_token_latency_seconds", model);
  header(out, "vllm:e2e_request_latency_seconds", "histogram", "End-to-end request latency.");
  e2e_.render(out, "vllm:e2e_request_latency_seconds", model);
  header(out, "vllm:request_queue_time_seconds", "histogram", "Time requests spent waiting.");
  queue_.render(out, "vllm:request_queue_time_seconds", model);

  counter("duet:reasoning_tokens_total", "Generated tokens inside <think>.",
          static_cast<double>(reasoning_tokens_));
  counter("duet:prompt_tokens_cached_total", "Prompt tokens reused from the prefix cache.",
          static_cast<double>(cached_tokens_));
  header(out, "duet:thinking_mode_decisions_total", "counter",
         "Requests by the mode they ran in and what decided it.");
  for (const auto& [key, n] : modes_)
    out += "duet:thinking_mode_decisions_total{" + model + ",mode=\"" + key.first + "\",source=\"" +
           label_value(key.second) + "\"} " + std::to_string(n) + "\n";
  header(out, "duet:requests_cancelled_total", "counter",
         "Requests whose client went away, by the phase they were in.");
  for (const char* phase : {"queued", "prefill", "decode"}) {
    const auto it = cancelled_.find(phase);
    out += "duet:requests_cancelled_total{" + model + ",phase=\"" + phase + "\"} " +
           std::to_string(it == cancelled_.end() ? 0 : it->second) + "\n";
  }
  header(out, "duet:requests_rejected_total", "counter", "Requests refused before running.");
  for (const auto& [reason, n] : rejected_)
    out += "duet:requests_rejected_total{" + model + ",reason=\"" + label_value(reason) + "\"} " +
           std::to_string(n) + "\n";
  gauge("duet:kv_blocks_used", "KV-cache blocks held by running sequences.",
        static_cast<double>(e.kv.used_blocks));
  gauge("duet:kv_blocks_total", "KV-cache blocks in the pool.",
        static_cast<double>(e.kv.total_blocks));
  counter("duet:engine_requests_cancelled_total", "Requests the engine ended as cancelled.",
          static_cast<double>(e.requests_cancelled));
  gauge("duet:ready", "1 when the server takes requests (model loaded, not draining).",
        ready ? 1.0 : 0.0);
  return out;
}

}  // namespace duet
