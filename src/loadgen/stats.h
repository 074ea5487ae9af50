// The metric math, with the definitions of vLLM's and SGLang's serving benchmarks
// (benchmark_serving.py): percentiles interpolate linearly between order statistics (numpy's
// default), std is the population one, TPOT = (E2E − TTFT) / (output tokens − 1) for requests
// with more than one token, ITL pools the gaps of every request. Added here: TTFT to the first
// answer token (apart from reasoning) and stutter = a request's longest gap over its median gap.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "loadgen/record.h"

namespace duet::loadgen {

struct Distribution {
  int64_t count = 0;
  double mean = 0, std = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
};

// p in [0, 100] over sorted values (not empty).
double percentile_sorted(const std::vector<double>& sorted, double p);
// Empty input gives an all-zero Distribution with count 0.
Distribution summarize(std::vector<double> values);

// What the metrics need from one finished request.
struct RequestMetrics {
  int64_t output_tokens = 0;
  bool tokens_from_usage = false;  // else counted as the stream's token-bearing events
  // First token of any kind (reasoning or answer); none when the stream carried no text (a
  // model that stopped at once): such a request counts as completed, with no latency samples.
  std::optional<double> ttft;
  std::optional<double> ttft_answer;  // first answer token
  double e2e = 0;
  std::optional<double> tpot;     // when output_tokens > 1
  std::vector<double> itl;        // gaps between successive token-bearing events
  std::optional<double> stutter;  // max gap / median gap, when there are at least 2 gaps
  double max_gap = 0;
};

// For a successful request.
RequestMetrics request_metrics(const RequestRecord& r);
// max / median of `gaps` (needs 2 or more, and a median above zero).
std::optional<double> stutter_of(const std::vector<double>& gaps);

struct BenchSummary {
  int64_t completed = 0, failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0, reasoning_tokens = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  // SGLang's "concurrency": the sum of request latencies over the run's duration, i.e. the
  // mean number of requests in flight.
  double mean_concurrency = 0;
  Distribution ttft, ttft_answer, tpot, itl, e2e, stutter;  // seconds (stutter: a ratio)
  int64_t usage_missing = 0;  // successful requests whose tokens were counted from chunks
  int64_t without_text = 0;   // successful requests that streamed no text (no TTFT)
};

// Warm-up records are skipped. duration_s: start of the measured run → last completion.
BenchSummary summarize_run(const std::vector<RequestRecord>& records, double duration_s);

}  // namespace duet::loadgen
