// The workload of `duet bench serve`: seeded plans are reproducible, arrival gaps have the
// asked-for mean, lengths stay in range, bodies carry the thinking mode the way servers read it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "loadgen/workload.h"

namespace duet::loadgen {
namespace {

TEST(LoadgenWorkload, FixedRateIsExact) {
  const auto t = arrival_times(5, 4.0, /*poisson=*/false, 1.0, 0);
  ASSERT_EQ(t.size(), 5u);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], 0.25 * i, 1e-12);
  for (double x : arrival_times(3, INFINITY, true, 1.0, 0)) EXPECT_EQ(x, 0.0);
}

TEST(LoadgenWorkload, PoissonIsSeededAndHasTheMeanRate) {
  const int n = 20001;
  const double rate = 8.0;
  const auto a = arrival_times(n, rate, true, 1.0, 42);
  EXPECT_EQ(a, arrival_times(n, rate, true, 1.0, 42));
  EXPECT_NE(a, arrival_times(n, rate, true, 1.0, 43));
  // 20000 exponential gaps: the mean is 1/rate within 4 standard errors (1/rate/sqrt(n)).
  const double mean_gap = a.back() / (n - 1);
  EXPECT_NEAR(mean_gap, 1.0 / rate, 4 * (1.0 / rate) / std::sqrt(n - 1.0));
  // An exponential's share of gaps below its mean is 1 − 1/e.
  int below = 0;
  for (int i = 1; i < n; ++i) below += (a[i] - a[i - 1]) < 1.0 / rate;
  EXPECT_NEAR(below / (n - 1.0), 1 - std::exp(-1.0), 0.015);
  // Gamma gaps (burstiness 4: more even) keep the mean rate.
  const auto g = arrival_times(n, rate, true, 4.0, 42);
  EXPECT_NEAR(g.back() / (n - 1), 1.0 / rate, 4 * (1.0 / rate) / std::sqrt(4.0 * (n - 1)));
}

TEST(LoadgenWorkload, RandomDatasetLengthsModesAndSeeds) {
  WorkloadOptions o;
  o.num_prompts = 400;
  o.input_len = 100;
  o.output_len = 50;
  o.range_ratio = 0.2;
  o.think = ThinkPlan::kMix;
  o.seed = 7;
  auto p = plan_requests(o);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 400u);
  int on = 0;
  for (const PlannedRequest& r : *p) {
    EXPECT_GE(r.input_len, 80);
    EXPECT_LE(r.input_len, 120);
    EXPECT_GE(r.output_len, 40);
    EXPECT_LE(r.output_len, 60);
    // Words separated by single spaces: input_len words.
    EXPECT_EQ(std::count(r.prompt.begin(), r.prompt.end(), ' '), r.input_len - 1);
    on += r.think == Think::kOn;
    EXPECT_TRUE(r.think == Think::kOn || r.think == Think::kOff);
  }
  EXPECT_NEAR(on / 400.0, 0.5, 0.1);
  auto again = plan_requests(o);
  for (size_t i = 0; i < p->size(); ++i) {
    EXPECT_EQ((*p)[i].prompt, (*again)[i].prompt);
    EXPECT_EQ((*p)[i].think, (*again)[i].think);
  }
  // The rate does not change the prompts (independent streams).
  o.request_rate = 3;
  auto rated = plan_requests(o);
  EXPECT_EQ((*rated)[17].prompt, (*p)[17].prompt);
  EXPECT_GT((*rated)[17].scheduled_s, 0);
}

TEST(LoadgenWorkload, JsonlDatasetAndItsErrors) {
  const std::string path = ::testing::TempDir() + "loadgen_ds.jsonl";
  {
    std::ofstream f(path);
    f << R"({"prompt": "why is the sky blue", "output_len": 7, "think": "on"})"
      << "\n\n";
    f << R"({"messages": [{"role": "user", "content": "hi"}], "think": false})"
      << "\n";
    f << R"({"prompt": "plain"})"
      << "\n";
  }
  WorkloadOptions o;
  o.dataset_file = path;
  o.num_prompts = 5;  // cycles through the three lines
  o.output_len = 9;
  o.think = ThinkPlan::kAuto;
  auto p = plan_requests(o);
  ASSERT_TRUE(p) << p.message();
  ASSERT_EQ(p->size(), 5u);
  EXPECT_EQ((*p)[0].output_len, 7);
  EXPECT_EQ((*p)[0].think, Think::kOn);  // the line's own mode wins
  EXPECT_EQ((*p)[1].think, Think::kOff);
  EXPECT_EQ((*p)[2].think, Think::kAuto);  // --think for lines that do not say
  EXPECT_EQ((*p)[2].output_len, 9);
  EXPECT_EQ((*p)[3].prompt, "why is the sky blue");
  o.num_prompts = 0;
  EXPECT_EQ(plan_requests(o)->size(), 3u);

  {
    std::ofstream f(path);
    f << R"({"prompt": "ok"})"
      << "\n"
      << R"({"text": "no prompt"})"
      << "\n";
  }
  auto bad = plan_requests(o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("line 2"), std::string::npos) << bad.message();
  o.dataset_file = path + ".missing";
  EXPECT_FALSE(plan_requests(o));
}

TEST(LoadgenWorkload, BodiesCarryModeLimitsAndExtras) {
  PlannedRequest p;
  p.prompt = "hello";
  p.output_len = 32;
  BodyOptions b;
  b.model = "m";
  b.ignore_eos = true;
  b.extra = {{"top_k", 1}};
  p.think = Think::kOff;
  auto j = nlohmann::json::parse(request_body(p, b));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["max_tokens"], 32);
  EXPECT_EQ(j["min_tokens"], 32);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_EQ(j["top_k"], 1);
  EXPECT_EQ(j["messages"][0]["content"], "hello");
  p.think = Think::kAuto;
  j = nlohmann::json::parse(request_body(p, b));
  EXPECT_EQ(j["mode"], "auto");
  EXPECT_FALSE(j.contains("chat_template_kwargs"));
  p.think = Think::kServerDefault;
  b.ignore_eos = false;
  j = nlohmann::json::parse(request_body(p, b));
  EXPECT_FALSE(j.contains("mode") || j.contains("chat_template_kwargs") ||
               j.contains("ignore_eos"));
}

}  // namespace
}  // namespace duet::loadgen
