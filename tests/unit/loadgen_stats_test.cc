// The metric math of `duet bench serve` against values computed by hand (and, for the
// percentiles, numpy's linear interpolation, which vLLM's numbers use).
#include <gtest/gtest.h>

#include <cmath>

#include "loadgen/stats.h"

namespace duet::loadgen {
namespace {

TEST(LoadgenStats, PercentilesInterpolateLikeNumpy) {
  const std::vector<double> v = {1, 2, 3, 4, 10};  // sorted
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 3);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 10);
  // np.percentile([1,2,3,4,10], 90): rank 0.9*4 = 3.6 -> 4 + 0.6*(10-4) = 7.6
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 90), 7.6);
  // p99: rank 3.96 -> 4 + 0.96*6 = 9.76
  EXPECT_NEAR(percentile_sorted(v, 99), 9.76, 1e-12);
  EXPECT_DOUBLE_EQ(percentile_sorted({5}, 99), 5);
  // Even count: the median is the mean of the middle two.
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, 3, 4}, 50), 2.5);
}

TEST(LoadgenStats, SummarizeMeanStdAndOrder) {
  const Distribution d = summarize({10, 2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(d.count, 9);
  EXPECT_DOUBLE_EQ(d.mean, 50.0 / 9);
  // Population std (numpy's default, ddof = 0).
  double sq = 0;
  for (double x : {10, 2, 4, 4, 4, 5, 5, 7, 9}) sq += (x - 50.0 / 9) * (x - 50.0 / 9);
  EXPECT_NEAR(d.std, std::sqrt(sq / 9), 1e-12);
  EXPECT_DOUBLE_EQ(d.min, 2);
  EXPECT_DOUBLE_EQ(d.max, 10);
  EXPECT_DOUBLE_EQ(d.p50, 5);
  EXPECT_EQ(summarize({}).count, 0);
}

RequestRecord record(std::vector<double> times, double e2e, int64_t usage_completion) {
  RequestRecord r;
  r.ok = true;
  for (double t : times) r.tokens.push_back({t, true});
  r.e2e = e2e;
  r.usage_completion = usage_completion;
  return r;
}

TEST(LoadgenStats, RequestMetricsByHand) {
  // Events at 100, 110, 120, 160, 170 ms; the stream ends at 175 ms; the server counted 6
  // tokens (one event carried two).
  RequestRecord r = record({0.100, 0.110, 0.120, 0.160, 0.170}, 0.175, 6);
  r.tokens[0].answer = false;  // reasoning first
  r.tokens[1].answer = false;
  const RequestMetrics m = request_metrics(r);
  EXPECT_DOUBLE_EQ(*m.ttft, 0.100);
  ASSERT_TRUE(m.ttft_answer.has_value());
  EXPECT_DOUBLE_EQ(*m.ttft_answer, 0.120);
  EXPECT_EQ(m.output_tokens, 6);
  EXPECT_TRUE(m.tokens_from_usage);
  // TPOT = (E2E - TTFT) / (tokens - 1) = (175 - 100) / 5 = 15 ms
  ASSERT_TRUE(m.tpot.has_value());
  EXPECT_NEAR(*m.tpot, 0.015, 1e-12);
  // Gaps 10, 10, 40, 10 ms: median 10, longest 40 -> stutter 4.
  ASSERT_EQ(m.itl.size(), 4u);
  EXPECT_NEAR(m.itl[2], 0.040, 1e-12);
  EXPECT_NEAR(m.max_gap, 0.040, 1e-12);
  ASSERT_TRUE(m.stutter.has_value());
  EXPECT_NEAR(*m.stutter, 4.0, 1e-9);
}

TEST(LoadgenStats, WithoutUsageChunksAreCountedAndShortStreamsHaveNoTpot) {
  RequestRecord r = record({0.2, 0.3, 0.5}, 0.5, -1);
  RequestMetrics m = request_metrics(r);
  EXPECT_FALSE(m.tokens_from_usage);
  EXPECT_EQ(m.output_tokens, 3);
  EXPECT_NEAR(*m.tpot, 0.15, 1e-12);           // (0.5 - 0.2) / 2
  EXPECT_NEAR(*m.stutter, 0.2 / 0.15, 1e-12);  // gaps 0.1, 0.2: median 0.15
  m = request_metrics(record({}, 0.01, 1));    // EOS at once: no text, no TTFT
  EXPECT_FALSE(m.ttft.has_value());
  EXPECT_FALSE(m.tpot.has_value());
  m = request_metrics(record({0.2}, 0.25, 1));
  EXPECT_FALSE(m.tpot.has_value());
  EXPECT_FALSE(m.stutter.has_value());
  EXPECT_FALSE(stutter_of({0.1}).has_value());
  EXPECT_FALSE(stutter_of({0, 0, 1}).has_value());  // a zero median has no ratio
}

TEST(LoadgenStats, RunSummarySkipsWarmupAndCountsFailures) {
  std::vector<RequestRecord> rs;
  rs.push_back(record({0.1, 0.2}, 0.3, 4));
  rs.back().usage_prompt = 10;
  rs.push_back(record({0.3, 0.4, 0.5}, 0.5, 3));
  rs.back().usage_prompt = 20;
  rs.push_back(record({9.0}, 9.0, 100));
  rs.back().warmup = true;
  rs.push_back(record({}, 0.05, 1));  // completed without text: no TTFT sample
  RequestRecord bad;
  bad.ok = false;
  bad.error_kind = "timeout";
  rs.push_back(bad);
  const BenchSummary s = summarize_run(rs, 2.0);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.without_text, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.total_output_tokens, 8);
  EXPECT_EQ(s.total_input_tokens, 30);
  EXPECT_DOUBLE_EQ(s.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(s.output_throughput, 4.0);
  EXPECT_DOUBLE_EQ(s.total_token_throughput, 19.0);
  EXPECT_DOUBLE_EQ(s.mean_concurrency, 0.425);  // (0.3 + 0.5 + 0.05) / 2
  EXPECT_EQ(s.ttft.count, 2);
  EXPECT_DOUBLE_EQ(s.ttft.mean, 0.2);
  // TPOTs: (0.3-0.1)/3 and (0.5-0.3)/2; ITLs pooled: 0.1, 0.1, 0.1.
  EXPECT_NEAR(s.tpot.mean, (0.2 / 3 + 0.1) / 2, 1e-12);
  EXPECT_EQ(s.itl.count, 3);
  EXPECT_NEAR(s.itl.mean, 0.1, 1e-12);
}

}  // namespace
}  // namespace duet::loadgen
