#include "loadgen/stats.h"

#include <algorithm>
#include <cmath>

namespace duet::loadgen {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  // numpy's "linear": the rank p/100·(n−1), interpolated between its neighbours.
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Distribution summarize(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = static_cast<int64_t>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - d.mean) * (x - d.mean);
  d.std = std::sqrt(sq / static_cast<double>(v.size()));
  d.min = v.front();
  d.max = v.back();
  d.p50 = percentile_sorted(v, 50);
  d.p90 = percentile_sorted(v, 90);
  d.p99 = percentile_sorted(v, 99);
  return d;
}

std::optional<double> stutter_of(const std::vector<double>& gaps) {
  if (gaps.size() < 2) return std::nullopt;
  std::vector<double> sorted = gaps;
  std::sort(sorted.begin(), sorted.end());
  const double median = percentile_sorted(sorted, 50);
  if (median <= 0) return std::nullopt;
  return sorted.back() / median;
}

RequestMetrics request_metrics(const RequestRecord& r) {
  RequestMetrics m;
  m.e2e = r.e2e;
  if (!r.tokens.empty()) m.ttft = r.tokens.front().t;
  for (const TokenArrival& t : r.tokens) {
    if (t.answer) {
      m.ttft_answer = t.t;
      break;
    }
  }
  for (size_t i = 1; i < r.tokens.size(); ++i) {
    const double gap = r.tokens[i].t - r.tokens[i - 1].t;
    m.itl.push_back(gap);
    m.max_gap = std::max(m.max_gap, gap);
  }
  m.stutter = stutter_of(m.itl);
  // The server's count when it gave one: a chunk may carry several tokens (bytes of one
  // character held back until it is complete, a server that batches its writes).
  m.tokens_from_usage = r.usage_completion >= 0;
  m.output_tokens =
      m.tokens_from_usage ? r.usage_completion : static_cast<int64_t>(r.tokens.size());
  if (m.ttft && m.output_tokens > 1)
    m.tpot = (m.e2e - *m.ttft) / static_cast<double>(m.output_tokens - 1);
  return m;
}

BenchSummary summarize_run(const std::vector<RequestRecord>& records, double duration_s) {
  BenchSummary s;
  s.duration_s = duration_s;
  std::vector<double> ttft, ttft_answer, tpot, itl, e2e, stutter;
  double latency_sum = 0;
  for (const RequestRecord& r : records) {
    if (r.warmup) continue;
    if (!r.ok) {
      ++s.failed;
      continue;
    }
    ++s.completed;
    const RequestMetrics m = request_metrics(r);
    s.total_output_tokens += m.output_tokens;
    if (!m.tokens_from_usage) ++s.usage_missing;
    if (r.usage_prompt >= 0) s.total_input_tokens += r.usage_prompt;
    if (r.usage_reasoning >= 0) s.reasoning_tokens += r.usage_reasoning;
    if (m.ttft)
      ttft.push_back(*m.ttft);
    else
      ++s.without_text;
    if (m.ttft_answer) ttft_answer.push_back(*m.ttft_answer);
    if (m.tpot) tpot.push_back(*m.tpot);
    itl.insert(itl.end(), m.itl.begin(), m.itl.end());
    e2e.push_back(m.e2e);
    if (m.stutter) stutter.push_back(*m.stutter);
    latency_sum += m.e2e;
  }
  if (duration_s > 0) {
    s.request_throughput = static_cast<double>(s.completed) / duration_s;
    s.output_throughput = static_cast<double>(s.total_output_tokens) / duration_s;
    s.total_token_throughput =
        static_cast<double>(s.total_input_tokens + s.total_output_tokens) / duration_s;
    s.mean_concurrency = latency_sum / duration_s;
  }
  s.ttft = summarize(ttft);
  s.ttft_answer = summarize(ttft_answer);
  s.tpot = summarize(tpot);
  s.itl = summarize(itl);
  s.e2e = summarize(e2e);
  s.stutter = summarize(stutter);
  return s;
}

const char* think_name(Think t) {
  switch (t) {
    case Think::kOn:
      return "on";
    case Think::kOff:
      return "off";
    case Think::kAuto:
      return "auto";
    default:
      return "default";
  }
}

}  // namespace duet::loadgen
