#include "loadgen/report.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace duet::loadgen {
namespace {

using Json = nlohmann::json;

// "label      value\n" with the label padded to 40 columns; the value is never cut.
std::string line(const char* label, const std::string& value) {
  std::string out = label;
  if (out.size() < 40) out.append(40 - out.size(), ' ');
  return out + " " + value + "\n";
}

// An error message on one line of the table: servers' messages may carry newlines and
// whatever text the model produced.
std::string one_line(const std::string& s, size_t max = 300) {
  std::string out;
  for (char c : s.substr(0, max)) out += (c == '\n' || c == '\r') ? ' ' : c;
  return s.size() > max ? out + "..." : out;
}
std::string fmt(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string rule(const char* title) {
  std::string t = std::string(" ") + title + " ";
  const size_t width = 56;
  const size_t left = t.size() < width ? (width - t.size()) / 2 : 0;
  std::string out(left, '-');
  out += t;
  out += std::string(width > out.size() ? width - out.size() : 0, '-');
  return out + "\n";
}

// Rows for one distribution in ms (or as a ratio when scale is 1).
std::string rows(const char* name, const char* unit, const Distribution& d, double scale) {
  if (d.count == 0) return line((std::string("(no ") + name + " samples)").c_str(), "");
  std::string out;
  const auto row = [&](const char* stat, double v) {
    const std::string label = std::string(stat) + " " + name + " (" + unit + "):";
    out += line(label.c_str(), fmt(v * scale));
  };
  row("Mean", d.mean);
  row("Median", d.p50);
  row("P90", d.p90);
  row("P99", d.p99);
  row("Std", d.std);
  row("Max", d.max);
  return out;
}

Json dist_json(const Distribution& d, double scale) {
  if (d.count == 0) return {{"count", 0}};
  return {{"count", d.count},     {"mean", d.mean * scale},  {"std", d.std * scale},
          {"min", d.min * scale}, {"median", d.p50 * scale}, {"p50", d.p50 * scale},
          {"p90", d.p90 * scale}, {"p99", d.p99 * scale},    {"max", d.max * scale}};
}

Json opt(const std::optional<double>& v, double scale) {
  return v ? Json(*v * scale) : Json(nullptr);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::map<std::string, int> errors_by_kind(const RunResult& run) {
  std::map<std::string, int> out;
  for (const RequestRecord& r : run.records)
    if (!r.warmup && !r.ok) out[r.error_kind]++;
  return out;
}

}  // namespace

std::string summary_table(const RunResult& run, const BenchSummary& s, const ReportContext& c) {
  std::string out = rule("Serving Benchmark Result");
  out += line("Server:", c.url);
  out += line("Model:", run.model);
  out += line("Successful requests:", std::to_string(s.completed));
  out += line("Failed requests:", std::to_string(s.failed));
  out += line("Benchmark duration (s):", fmt(s.duration_s));
  out += line("Total input tokens:", std::to_string(s.total_input_tokens));
  out += line("Total generated tokens:", std::to_string(s.total_output_tokens));
  out += line("  of which reasoning (server's count):", std::to_string(s.reasoning_tokens));
  out += line("Request throughput (req/s):", fmt(s.request_throughput));
  out += line("Output token throughput (tok/s):", fmt(s.output_throughput));
  out += line("Total token throughput (tok/s):", fmt(s.total_token_throughput));
  out += line("Mean concurrency (sum E2E / duration):", fmt(s.mean_concurrency));
  out += line("Most requests in flight:", std::to_string(run.max_in_flight));
  out += rule("Time to First Token (any token)");
  out += rows("TTFT", "ms", s.ttft, 1e3);
  out += rule("Time to First Answer Token");
  out += rows("TTFT-answer", "ms", s.ttft_answer, 1e3);
  out += rule("Time per Output Token (excl. 1st token)");
  out += rows("TPOT", "ms", s.tpot, 1e3);
  out += rule("Inter-token Latency");
  out += rows("ITL", "ms", s.itl, 1e3);
  out += rule("End-to-end Latency");
  out += rows("E2EL", "ms", s.e2e, 1e3);
  out += rule("Stutter (longest gap / median gap)");
  out += rows("stutter", "x", s.stutter, 1.0);
  if (s.without_text > 0)
    out += line("Requests with no text (no TTFT):", std::to_string(s.without_text));
  if (s.usage_missing > 0)
    out += line("Requests without usage (chunks counted):", std::to_string(s.usage_missing));
  const auto errors = errors_by_kind(run);
  if (!errors.empty()) {
    out += rule("Errors");
    for (const auto& [kind, n] : errors) out += line((kind + ":").c_str(), std::to_string(n));
    for (const RequestRecord& r : run.records) {
      if (r.warmup || r.ok) continue;
      out += line("First error:", one_line(r.error));
      break;
    }
  }
  out += std::string(56, '=') + "\n";
  return out;
}

Json report_json(const RunResult& run, const BenchSummary& s, const ReportContext& c) {
  Json j;
  j["tool"] = "duet bench serve";
  j["date"] = utc_now();
  j["url"] = c.url;
  j["model"] = run.model;
  j["config"] = c.config;
  j["summary"] = {{"completed", s.completed},
                  {"failed", s.failed},
                  {"duration_s", s.duration_s},
                  {"total_input_tokens", s.total_input_tokens},
                  {"total_output_tokens", s.total_output_tokens},
                  {"reasoning_tokens", s.reasoning_tokens},
                  {"request_throughput", s.request_throughput},
                  {"output_throughput", s.output_throughput},
                  {"total_token_throughput", s.total_token_throughput},
                  {"mean_concurrency", s.mean_concurrency},
                  {"max_in_flight", run.max_in_flight},
                  {"requests_without_usage", s.usage_missing},
                  {"requests_without_text", s.without_text},
                  {"ttft_ms", dist_json(s.ttft, 1e3)},
                  {"ttft_answer_ms", dist_json(s.ttft_answer, 1e3)},
                  {"tpot_ms", dist_json(s.tpot, 1e3)},
                  {"itl_ms", dist_json(s.itl, 1e3)},
                  {"e2e_ms", dist_json(s.e2e, 1e3)},
                  {"stutter", dist_json(s.stutter, 1.0)}};
  Json errors = Json::object();
  for (const auto& [kind, n] : errors_by_kind(run)) errors[kind] = n;
  j["errors"] = errors;
  Json reqs = Json::array();
  for (const RequestRecord& r : run.records) {
    Json q;
    q["index"] = r.plan.index;
    q["warmup"] = r.warmup;
    q["think"] = think_name(r.plan.think);
    q["input_len"] = r.plan.input_len;
    q["output_len"] = r.plan.output_len;
    q["scheduled_s"] = r.plan.scheduled_s;
    q["sent_s"] = r.sent_s;
    q["ok"] = r.ok;
    q["http_status"] = r.http_status;
    if (!r.ok) {
      q["error_kind"] = r.error_kind;
      q["error"] = r.error;
    }
    q["prompt_tokens"] = r.usage_prompt >= 0 ? Json(r.usage_prompt) : Json(nullptr);
    q["completion_tokens"] = r.usage_completion >= 0 ? Json(r.usage_completion) : Json(nullptr);
    q["reasoning_tokens"] = r.usage_reasoning >= 0 ? Json(r.usage_reasoning) : Json(nullptr);
    q["finish_reason"] = r.finish_reason;
    q["e2e_ms"] = r.e2e * 1e3;
    Json arrivals = Json::array(), kinds = Json::array();
    for (const TokenArrival& t : r.tokens) {
      arrivals.push_back(t.t * 1e3);
      kinds.push_back(t.answer ? "a" : "r");
    }
    q["token_events"] = r.tokens.size();
    q["arrival_ms"] = arrivals;  // each token-bearing event, ms after the send
    q["arrival_kind"] = kinds;   // "a" answer, "r" reasoning
    if (r.ok) {
      const RequestMetrics m = request_metrics(r);
      q["output_tokens"] = m.output_tokens;
      q["ttft_ms"] = opt(m.ttft, 1e3);
      q["ttft_answer_ms"] = opt(m.ttft_answer, 1e3);
      q["tpot_ms"] = opt(m.tpot, 1e3);
      q["max_gap_ms"] = m.max_gap * 1e3;
      q["stutter"] = opt(m.stutter, 1.0);
    }
    reqs.push_back(std::move(q));
  }
  j["requests"] = std::move(reqs);
  return j;
}

}  // namespace duet::loadgen
