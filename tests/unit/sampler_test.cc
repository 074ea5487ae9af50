// Sampler and SamplingParams: every filter on hand-computed distributions, the penalties on
// exact logits, determinism per seed, a chi-square check against the softmax, raw logprobs,
// and validate()'s rejections.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace duet {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kQwenVocab = 151936;

std::vector<float> logits_from_probs(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

std::vector<float> random_logits(size_t n, uint32_t seed, float stddev = 3.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> out(n);
  for (float& v : out) v = normal(gen);
  return out;
}

SamplingParams with_temperature(float t) {
  SamplingParams p;
  p.temperature = t;
  return p;
}

std::set<int32_t> support(const std::vector<TokenProb>& dist) {
  std::set<int32_t> out;
  for (const TokenProb& tp : dist) out.insert(tp.token);
  return out;
}

// The tokens `draws` samples land on.
std::map<int32_t, int> sample_counts(Sampler& sampler, std::span<const float> logits, int draws) {
  std::map<int32_t, int> counts;
  for (int i = 0; i < draws; ++i) ++counts[sampler.sample(logits, {}).token];
  return counts;
}

std::set<int32_t> keys(const std::map<int32_t, int>& counts) {
  std::set<int32_t> out;
  for (const auto& [token, n] : counts) out.insert(token);
  return out;
}

// --- validate -----------------------------------------------------------------------------

TEST(SamplingParamsValidate, AcceptsDefaultsAndEdgesOfEachRange) {
  EXPECT_TRUE(validate(SamplingParams{}, 10).is_ok());
  SamplingParams p;
  p.temperature = 0;
  p.top_p = 1;
  p.top_k = 5;
  p.min_p = 1;
  p.presence_penalty = -2;
  p.frequency_penalty = 2;
  p.repetition_penalty = 0.01f;
  p.logit_bias = {{0, -100}, {9, 100}};
  p.top_logprobs = 20;
  EXPECT_TRUE(validate(p, 10).is_ok()) << validate(p, 10).message();
  p.temperature = 100;
  p.top_p = 1e-6f;
  EXPECT_TRUE(validate(p, 10).is_ok());
}

TEST(SamplingParamsValidate, RejectsEachBadValueWithAMessageNamingTheField) {
  struct Case {
    std::function<void(SamplingParams&)> spoil;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {[](auto& p) { p.temperature = kNaN; }, "temperature must be a finite number"},
      {[](auto& p) { p.temperature = kInf; }, "temperature must be a finite number"},
      {[](auto& p) { p.temperature = -1; }, "temperature must be in [0, 100], got -1"},
      {[](auto& p) { p.temperature = 100.5f; }, "temperature must be in [0, 100], got 100.5"},
      {[](auto& p) { p.top_p = 0; }, "top_p must be in (0, 1], got 0"},
      {[](auto& p) { p.top_p = 2; }, "top_p must be in (0, 1], got 2"},
      {[](auto& p) { p.top_p = kNaN; }, "top_p must be a finite number"},
      {[](auto& p) { p.top_k = -1; }, "top_k must be >= 0 (0 disables it), got -1"},
      {[](auto& p) { p.top_k = -2; }, "top_k must be >= 0"},
      {[](auto& p) { p.min_p = -0.1f; }, "min_p must be in [0, 1], got -0.1"},
      {[](auto& p) { p.min_p = 1.5f; }, "min_p must be in [0, 1], got 1.5"},
      {[](auto& p) { p.min_p = -kInf; }, "min_p must be a finite number"},
      {[](auto& p) { p.presence_penalty = 2.5f; }, "presence_penalty must be in [-2, 2], got 2.5"},
      {[](auto& p) { p.presence_penalty = kNaN; }, "presence_penalty must be a finite number"},
      {[](auto& p) { p.frequency_penalty = -3; }, "frequency_penalty must be in [-2, 2], got -3"},
      {[](auto& p) { p.frequency_penalty = kInf; }, "frequency_penalty must be a finite number"},
      {[](auto& p) { p.repetition_penalty = 0; }, "repetition_penalty must be > 0, got 0"},
      {[](auto& p) { p.repetition_penalty = -1; }, "repetition_penalty must be > 0, got -1"},
      {[](auto& p) { p.repetition_penalty = kInf; }, "repetition_penalty must be a finite"},
      {[](auto& p) {
         p.logit_bias = {{-1, 1}};
       },
       "logit_bias token -1 is outside the vocabulary [0, 10)"},
      {[](auto& p) {
         p.logit_bias = {{10, 1}};
       },
       "logit_bias token 10 is outside the vocabulary [0, 10)"},
      {[](auto& p) {
         p.logit_bias = {{3, 100.5f}};
       },
       "logit_bias for token 3 must be in [-100, 100], got 100.5"},
      {[](auto& p) {
         p.logit_bias = {{3, -101}};
       },
       "logit_bias for token 3 must be in [-100, 100], got -101"},
      {[](auto& p) {
         p.logit_bias = {{3, kNaN}};
       },
       "logit_bias for token 3 must be a finite"},
      {[](auto& p) { p.top_logprobs = -1; }, "top_logprobs must be in [0, 20], got -1"},
      {[](auto& p) { p.top_logprobs = 21; }, "top_logprobs must be in [0, 20], got 21"},
      {[](auto& p) { p.top_logprobs = 1000000000; }, "top_logprobs must be in [0, 20]"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SamplingParams p;
    cases[i].spoil(p);
    const Status s = validate(p, 10);
    ASSERT_FALSE(s.is_ok()) << "case " << i;
    EXPECT_NE(s.message().find(cases[i].message_part), std::string::npos)
        << "case " << i << ": " << s.message();
  }
}

// --- greedy and temperature ---------------------------------------------------------------

TEST(Sampler, GreedyPicksTheArgmaxAndBreaksTiesToTheLowestId) {
  Sampler greedy(with_temperature(0), 1);
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 3.0f, 2.9f};
  EXPECT_EQ(greedy.sample(logits, {}).token, 1);
  const std::vector<float> flat(7, 0.25f);
  EXPECT_EQ(greedy.sample(flat, {}).token, 0);
  const std::vector<float> last = {-5, -4, -3, 10};
  EXPECT_EQ(greedy.sample(last, {}).token, 3);
  // Below vLLM's 1e-5 threshold a temperature is greedy too, ties included.
  Sampler tiny(with_temperature(1e-6f), 1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(tiny.sample(logits, {}).token, 1);
}

TEST(Sampler, GreedyTakesBiasAndPenaltiesIntoAccount) {
  SamplingParams p = with_temperature(0);
  p.logit_bias = {{2, 5.0f}};
  Sampler biased(p, 1);
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.0f};
  EXPECT_EQ(biased.sample(logits, {}).token, 2);  // -1 + 5 = 4 > 3

  SamplingParams q = with_temperature(0);
  q.presence_penalty = 2;
  Sampler penalised(q, 1);
  const std::vector<int32_t> generated = {1};
  EXPECT_EQ(penalised.sample(logits, {{}, generated}).token, 3);  // 3 - 2 = 1 < 2
  EXPECT_EQ(penalised.sample(logits, {generated, {}}).token, 1);  // prompt tokens: no presence
}

TEST(Sampler, VanishingTemperatureConvergesToGreedy) {
  std::vector<float> logits = random_logits(1000, 7);
  const size_t top = std::max_element(logits.begin(), logits.end()) - logits.begin();
  logits[top] += 0.5f;  // a clear winner: others are at least 0.5 below
  double previous = 0;
  for (float t : {2.0f, 1.0f, 0.5f, 0.1f, 0.01f}) {
    Sampler s(with_temperature(t), 3);
    const std::vector<TokenProb> dist = s.distribution(logits, {});
    ASSERT_EQ(dist.front().token, static_cast<int32_t>(top));
    EXPECT_GT(dist.front().prob, previous) << "temperature " << t;
    previous = dist.front().prob;
  }
  EXPECT_GT(previous, 1 - 1e-15);  // the runner-up is e^-50 times less likely
  Sampler cold(with_temperature(1e-3f), 3);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(cold.sample(logits, {}).token, static_cast<int32_t>(top));
}

TEST(Sampler, TopKOfOneEqualsGreedyEvenWithTies) {
  SamplingParams p;
  p.top_k = 1;
  Sampler top1(p, 11);
  Sampler greedy(with_temperature(0), 11);
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::vector<float> logits = random_logits(500, seed);
    for (float& v : logits) v = std::round(v * 2) / 2;  // many ties, at the top too
    ASSERT_EQ(top1.sample(logits, {}).token, greedy.sample(logits, {}).token) << seed;
  }
}

// --- top-k, top-p, min-p ------------------------------------------------------------------

// Token ids 0..4 with these probabilities; sorted: 1 (0.5), 3 (0.2), 4 (0.15), 2 (0.1), 0.
const std::vector<double> kProbs = {0.05, 0.5, 0.1, 0.2, 0.15};

void expect_distribution(const std::vector<TokenProb>& got,
                         const std::vector<std::pair<int32_t, double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].token, want[i].first) << "rank " << i;
    EXPECT_NEAR(got[i].prob, want[i].second, 1e-6) << "rank " << i;
  }
}

TEST(Sampler, TopKKeepsTheKMostLikelyRenormalised) {
  SamplingParams p;
  p.top_k = 3;
  Sampler s(p, 5);
  const std::vector<float> logits = logits_from_probs(kProbs);
  expect_distribution(s.distribution(logits, {}),
                      {{1, 0.5 / 0.85}, {3, 0.2 / 0.85}, {4, 0.15 / 0.85}});
  EXPECT_EQ(keys(sample_counts(s, logits, 20000)), (std::set<int32_t>{1, 3, 4}));
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingTheMass) {
  const std::vector<float> logits = logits_from_probs(kProbs);
  SamplingParams p;
  p.top_p = 0.8f;  // 0.5 + 0.2 = 0.7 < 0.8 <= 0.85
  Sampler s(p, 5);
  expect_distribution(s.distribution(logits, {}),
                      {{1, 0.5 / 0.85}, {3, 0.2 / 0.85}, {4, 0.15 / 0.85}});
  const auto counts = sample_counts(s, logits, 20000);
  EXPECT_EQ(keys(counts), (std::set<int32_t>{1, 3, 4}));
  p.top_p = 0.6f;
  Sampler narrow(p, 5);
  expect_distribution(narrow.distribution(logits, {}), {{1, 0.5 / 0.7}, {3, 0.2 / 0.7}});
  EXPECT_EQ(keys(sample_counts(narrow, logits, 20000)), (std::set<int32_t>{1, 3}));
  p.top_p = 0.3f;  // the top token alone is enough
  Sampler single(p, 5);
  expect_distribution(single.distribution(logits, {}), {{1, 1.0}});
}

TEST(Sampler, TopPAppliesToTheTopKSurvivors) {
  const std::vector<float> logits = logits_from_probs(kProbs);
  SamplingParams p;
  p.top_p = 0.65f;  // over all tokens: 0.5 < 0.65 <= 0.7 keeps {1, 3}
  Sampler alone(p, 5);
  EXPECT_EQ(support(alone.distribution(logits, {})), (std::set<int32_t>{1, 3}));
  p.top_k = 2;  // over the top two renormalised: 0.5 / 0.7 = 0.714 >= 0.65 keeps {1}
  Sampler after_k(p, 5);
  expect_distribution(after_k.distribution(logits, {}), {{1, 1.0}});
}

TEST(Sampler, TopPTakesEqualWeightsLowestIdFirst) {
  SamplingParams p;
  p.top_p = 0.5f;
  Sampler s(p, 5);
  // Sorting path (few candidates) and radix-select path (a whole vocabulary) agree.
  const std::vector<float> small(10, 1.0f);
  EXPECT_EQ(support(s.distribution(small, {})), (std::set<int32_t>{0, 1, 2, 3, 4}));
  // A mass of exactly top_p is enough: 2 of 4 equal weights reach 0.5 (after top-k, sorted).
  p.top_k = 4;
  Sampler after_k(p, 5);
  EXPECT_EQ(support(after_k.distribution(std::vector<float>{1, 1, 1, 1, -10, -10}, {})),
            (std::set<int32_t>{0, 1}));
  // 4.5 of 10 equal weights needs 5 tokens, not 4.
  p.top_k = 0;
  p.top_p = 0.45f;
  Sampler partial(p, 5);
  EXPECT_EQ(support(partial.distribution(small, {})), (std::set<int32_t>{0, 1, 2, 3, 4}));
  const std::vector<float> thousand(1000, 2.0f);  // enough for the radix select: 450.5 -> 451
  p.top_p = 0.4505f;
  Sampler radix(p, 5);
  const std::vector<TokenProb> most = radix.distribution(thousand, {});
  ASSERT_EQ(most.size(), 451u);
  EXPECT_EQ(most.back().token, 450);
  // A power-of-two band holding exactly the mass needed: 300 weights of 1 and 600 of 0.5
  // (exp(-ln 2) rounds to exactly 0.5), top_p 0.5 of 600 -> the 300 heavy ones, no more.
  std::vector<float> bands(900, -0.69314718f);
  std::fill(bands.begin(), bands.begin() + 300, 0.0f);
  p.top_p = 0.5f;
  Sampler banded(p, 5);
  const std::vector<TokenProb> heavy = banded.distribution(bands, {});
  ASSERT_EQ(heavy.size(), 300u);
  EXPECT_EQ(heavy.back().token, 299);
  const std::vector<float> flat(kQwenVocab, 0.0f);
  const std::vector<TokenProb> dist = s.distribution(flat, {});
  ASSERT_EQ(dist.size(), static_cast<size_t>(kQwenVocab / 2));
  EXPECT_EQ(dist.front().token, 0);
  EXPECT_EQ(dist.back().token, kQwenVocab / 2 - 1);
  for (const TokenProb& tp : dist) ASSERT_LT(tp.token, kQwenVocab / 2);
}

// The nucleus by the definition: sort by probability (ties: lower id), keep the shortest
// prefix whose mass reaches top_p × total. Weights computed exactly as the sampler does.
std::set<int32_t> reference_nucleus(const std::vector<float>& logits, float temperature,
                                    float top_p) {
  const float max = *std::max_element(logits.begin(), logits.end());
  std::vector<std::pair<float, int32_t>> w;
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    w.push_back({std::exp((logits[i] - max) * (1.0f / temperature)), static_cast<int32_t>(i)});
    total += w.back().first;
  }
  std::sort(w.begin(), w.end(), [](auto& a, auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::set<int32_t> out;
  double sum = 0;
  for (const auto& [weight, id] : w) {
    if (weight > 0) out.insert(id);
    sum += weight;
    if (top_p < 1 && sum >= top_p * total) break;
  }
  return out;
}

TEST(Sampler, TopPFastPathMatchesTheDefinitionOnLargeVocabularies) {
  int checked = 0;
  for (size_t n : {300u, 5000u, 60000u}) {
    for (float stddev : {0.01f, 1.0f, 4.0f}) {
      for (float top_p : {0.05f, 0.5f, 0.9f, 0.95f, 0.999f}) {
        const std::vector<float> logits = random_logits(n, static_cast<uint32_t>(n + checked));
        SamplingParams p;
        p.top_p = top_p;
        p.temperature = 0.7f;
        Sampler s(p, 1);
        const std::vector<float> scaled = [&] {
          std::vector<float> v = logits;
          for (float& x : v) x *= stddev;
          return v;
        }();
        ASSERT_EQ(support(s.distribution(scaled, {})), reference_nucleus(scaled, 0.7f, top_p))
            << "n " << n << " stddev " << stddev << " top_p " << top_p;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 45);
}

TEST(Sampler, LargeTopKThenTopPMatchesTheDefinition) {
  // k above the single-scan limit (1024) takes the partitioning path.
  std::vector<float> logits = random_logits(5000, 21, 2.0f);
  for (size_t i = 0; i < logits.size(); i += 7) logits[i] = logits[0];  // ties at the k-th place
  SamplingParams p;
  p.top_k = 2000;
  p.temperature = 0.8f;
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<float> masked(logits.size(), -kInf);  // the top 2000, lower id first on ties
  for (size_t i = 0; i < 2000; ++i) masked[order[i]] = logits[order[i]];
  Sampler top_k(p, 1);
  EXPECT_EQ(support(top_k.distribution(logits, {})), reference_nucleus(masked, 0.8f, 1.0f));
  p.top_p = 0.9f;
  Sampler both(p, 1);
  EXPECT_EQ(support(both.distribution(logits, {})), reference_nucleus(masked, 0.8f, 0.9f));
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTopProbability) {
  const std::vector<float> logits = logits_from_probs(kProbs);
  SamplingParams p;
  p.min_p = 0.35f;  // threshold 0.175: keeps 0.5 and 0.2
  Sampler s(p, 5);
  expect_distribution(s.distribution(logits, {}), {{1, 0.5 / 0.7}, {3, 0.2 / 0.7}});
  EXPECT_EQ(keys(sample_counts(s, logits, 20000)), (std::set<int32_t>{1, 3}));
  p.min_p = 0.25f;  // threshold 0.125: keeps 0.15 too
  Sampler looser(p, 5);
  EXPECT_EQ(support(looser.distribution(logits, {})), (std::set<int32_t>{1, 3, 4}));
  p.min_p = 0.35f;  // after top-p 0.9 ({1, 3, 4, 2}) min-p still cuts to {1, 3}
  p.top_p = 0.9f;
  Sampler both(p, 5);
  EXPECT_EQ(support(both.distribution(logits, {})), (std::set<int32_t>{1, 3}));
}

// --- bias and penalties -------------------------------------------------------------------

const std::vector<float> kPenaltyLogits = {2, -1, 3, 0.5f, -2, 1};
// Seen in the prompt: 0, 1. Generated: 2 three times, 4 once. 5 and 3 never seen.
// -1, 6 and 1000 lie outside the vocabulary and must be ignored.
const std::vector<int32_t> kPrompt = {0, 1, 1, -1, 1000};
const std::vector<int32_t> kGenerated = {2, 4, 2, 6, 2};

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogitsOfSeenTokens) {
  SamplingParams p;
  p.repetition_penalty = 2;
  Sampler s(p, 1);
  EXPECT_EQ(s.adjusted_logits(kPenaltyLogits, {kPrompt, kGenerated}),
            (std::vector<float>{1, -2, 1.5f, 0.5f, -4, 1}));
}

TEST(Sampler, FrequencyAndPresencePenaltiesCountOnlyGeneratedTokens) {
  SamplingParams p;
  p.frequency_penalty = 0.5f;
  Sampler freq(p, 1);
  // 2: 3 - 0.5 * 3; 4: -2 - 0.5 * 1; prompt tokens 0 and 1 untouched.
  EXPECT_EQ(freq.adjusted_logits(kPenaltyLogits, {kPrompt, kGenerated}),
            (std::vector<float>{2, -1, 1.5f, 0.5f, -2.5f, 1}));
  p.frequency_penalty = 0;
  p.presence_penalty = 0.25f;
  Sampler presence(p, 1);
  EXPECT_EQ(presence.adjusted_logits(kPenaltyLogits, {kPrompt, kGenerated}),
            (std::vector<float>{2, -1, 2.75f, 0.5f, -2.25f, 1}));
}

TEST(Sampler, BiasThenRepetitionThenFrequencyAndPresence) {
  SamplingParams p;
  p.logit_bias = {{1, 3}, {5, -0.5f}, {5, -0.25f}};  // entries for one token add up
  p.repetition_penalty = 2;
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  Sampler s(p, 1);
  // 1: (-1 + 3) / 2 = 1. 2: 3 / 2 - 1.5 - 0.25 = -0.25. 4: -2 * 2 - 0.5 - 0.25 = -4.75.
  EXPECT_EQ(s.adjusted_logits(kPenaltyLogits, {kPrompt, kGenerated}),
            (std::vector<float>{1, 1, -0.25f, 0.5f, -4.75f, 0.25f}));
  // The same again: the bookkeeping inside the scratch buffer leaves nothing behind.
  EXPECT_EQ(s.adjusted_logits(kPenaltyLogits, {kPrompt, kGenerated}),
            (std::vector<float>{1, 1, -0.25f, 0.5f, -4.75f, 0.25f}));
  // Without history only the bias applies.
  EXPECT_EQ(s.adjusted_logits(kPenaltyLogits, {}), (std::vector<float>{2, 2, 3, 0.5f, -2, 0.25f}));
}

TEST(Sampler, LogitBiasOfMinus100BansAndPlus100ForcesAToken) {
  const std::vector<float> flat(5, 0.0f);
  SamplingParams ban;
  ban.logit_bias = {{2, -100}};
  Sampler banned(ban, 9);
  const auto counts = sample_counts(banned, flat, 20000);
  EXPECT_EQ(keys(counts), (std::set<int32_t>{0, 1, 3, 4}));
  for (const TokenProb& tp : banned.distribution(flat, {})) {
    if (tp.token == 2) {
      EXPECT_LT(tp.prob, 1e-40);
    }
  }

  const std::vector<float> logits = {10, 9, 8, -5, 7};
  SamplingParams force;
  force.logit_bias = {{3, 100}};
  Sampler forced(force, 9);
  EXPECT_EQ(keys(sample_counts(forced, logits, 1000)), (std::set<int32_t>{3}));
  force.temperature = 0;
  Sampler forced_greedy(force, 9);
  EXPECT_EQ(forced_greedy.sample(logits, {}).token, 3);
}

// --- randomness ---------------------------------------------------------------------------

TEST(Xoshiro256, StreamIsPinned) {
  // Cross-checked with an independent Python implementation of splitmix64 + xoshiro256**.
  Xoshiro256 zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(zero.next(), 0x1a5f849d4933e6e0ull);
  Xoshiro256 answer(42);
  EXPECT_EQ(answer.next(), 0x15780b2e0c2ec716ull);
  EXPECT_EQ(answer.next(), 0x6104d9866d113a7eull);
  for (int i = 0; i < 1000; ++i) {
    const double u = answer.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

std::vector<int32_t> draw_sequence(uint64_t seed, std::span<const float> logits, int n) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 50;
  p.top_p = 0.95f;
  Sampler s(p, seed);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.sample(logits, {}).token);
  return out;
}

TEST(Sampler, SameSeedGivesTheSameTokensAndDifferentSeedsDiffer) {
  const std::vector<float> logits = random_logits(32000, 3, 1.0f);
  const std::vector<int32_t> a = draw_sequence(1234, logits, 1000);
  EXPECT_EQ(a, draw_sequence(1234, logits, 1000));
  EXPECT_NE(a, draw_sequence(1235, logits, 1000));
  EXPECT_GT(std::set<int32_t>(a.begin(), a.end()).size(), 20u);  // it really samples
}

TEST(Sampler, OtherSequencesInTheBatchDoNotChangeTheDraws) {
  const std::vector<float> logits = random_logits(1000, 4, 1.0f);
  const std::vector<float> other = random_logits(1000, 5, 2.0f);
  Sampler alone(SamplingParams{}, 77);
  std::vector<int32_t> expected;
  for (int i = 0; i < 200; ++i) expected.push_back(alone.sample(logits, {}).token);
  Sampler mine(SamplingParams{}, 77), neighbour(with_temperature(0.5f), 78);
  std::vector<int32_t> got;
  for (int i = 0; i < 200; ++i) {
    for (int j = 0; j < i % 3; ++j) neighbour.sample(other, {});
    got.push_back(mine.sample(logits, {}).token);
  }
  EXPECT_EQ(got, expected);
}

// Pearson chi-square over `draws` samples against `probs`; every expected count is >= 400.
double chi_square(Sampler& s, std::span<const float> logits, const std::vector<double>& probs,
                  int draws) {
  std::vector<int> counts(probs.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts.at(s.sample(logits, {}).token);
  double chi2 = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
      continue;
    }
    const double expected = probs[i] * draws;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi2;
}

// 99.9% quantile of chi-square with 9 degrees of freedom: a correct sampler exceeds it for
// one seed in 1000 (the seed here is fixed, so the test is deterministic).
constexpr double kChiSquare9At999 = 27.877;

TEST(Sampler, EmpiricalDistributionMatchesTheSoftmax) {
  const std::vector<float> logits = {1.0f,  0.5f,  0.2f,  0.0f, -0.3f,
                                     -0.5f, -1.0f, -1.5f, 2.0f, 0.7f};
  std::vector<double> probs;
  double z = 0;
  for (float l : logits) z += std::exp(static_cast<double>(l));
  for (float l : logits) probs.push_back(std::exp(static_cast<double>(l)) / z);
  Sampler s(SamplingParams{}, 2024);
  EXPECT_LT(chi_square(s, logits, probs, 100000), kChiSquare9At999);
  // A wrong temperature is caught: the same counts judged against softmax(l / 0.9) fail.
  std::vector<double> wrong;
  double zw = 0;
  for (float l : logits) zw += std::exp(l / 0.9);
  for (float l : logits) wrong.push_back(std::exp(l / 0.9) / zw);
  Sampler again(SamplingParams{}, 2024);
  EXPECT_GT(chi_square(again, logits, wrong, 100000), kChiSquare9At999);
}

TEST(Sampler, EmpiricalDistributionMatchesTheFilteredDistribution) {
  // 14 tokens; temperature 0.7, top-k 12 and top-p 0.99 leave 10 (9 degrees of freedom): the
  // top nine hold 0.9858 of the top-12 mass, the top ten 0.9937.
  const std::vector<float> logits = {1.0f,  0.5f, 0.2f, 0.0f,  -0.3f, -0.5f, -1.0f,
                                     -4.0f, 2.0f, 0.7f, -1.2f, -3.0f, -6.0f, -0.8f};
  SamplingParams p;
  p.temperature = 0.7f;
  p.top_k = 12;
  p.top_p = 0.99f;
  Sampler s(p, 99);
  const std::vector<TokenProb> dist = s.distribution(logits, {});
  ASSERT_EQ(dist.size(), 10u);
  std::vector<double> probs(logits.size(), 0);
  for (const TokenProb& tp : dist) probs[tp.token] = tp.prob;
  EXPECT_LT(chi_square(s, logits, probs, 100000), kChiSquare9At999);
}

// --- logprobs -----------------------------------------------------------------------------

TEST(Sampler, LogSoftmaxOfAWholeVocabularySumsToOne) {
  const std::vector<float> logits = random_logits(kQwenVocab, 8, 4.0f);
  std::vector<float> lp(logits.size());
  log_softmax(logits, lp);
  double sum = 0;
  for (float v : lp) sum += std::exp(static_cast<double>(v));
  EXPECT_NEAR(sum, 1.0, 1e-5);
  // NaN counts as impossible; the rest still sums to one.
  const std::vector<float> with_nan = {kNaN, 1.0f, 2.0f, kNaN};
  std::vector<float> lp2(4);
  log_softmax(with_nan, lp2);
  EXPECT_EQ(lp2[0], -kInf);
  EXPECT_EQ(lp2[3], -kInf);
  EXPECT_NEAR(std::exp(lp2[1]) + std::exp(lp2[2]), 1.0, 1e-6);
}

TEST(Sampler, LogprobsAreThoseOfTheRawModelDistribution) {
  std::vector<float> logits = random_logits(2000, 12, 2.0f);
  logits[500] = logits[501] = 20.0f;  // a tie at the top: the lower id is listed first
  std::vector<float> raw(logits.size());
  log_softmax(logits, raw);
  std::vector<float> sorted = raw;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());

  SamplingParams p;
  p.temperature = 0.5f;
  p.top_k = 40;
  p.repetition_penalty = 1.3f;
  p.logit_bias = {{7, 5.0f}};
  p.top_logprobs = 5;
  Sampler s(p, 3);
  const std::vector<int32_t> generated = {500, 7};
  for (int i = 0; i < 50; ++i) {
    const SampleResult r = s.sample(logits, {{}, generated});
    EXPECT_EQ(r.logprob, raw[r.token]);  // not the processed distribution's
    ASSERT_EQ(r.top_logprobs.size(), 5u);
    EXPECT_EQ(r.top_logprobs[0].token, 500);
    EXPECT_EQ(r.top_logprobs[1].token, 501);
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(r.top_logprobs[k].logprob, sorted[k]) << k;
      EXPECT_EQ(r.top_logprobs[k].logprob, raw[r.top_logprobs[k].token]) << k;
    }
  }
  // Not asked for: NaN, and no list.
  Sampler quiet(SamplingParams{}, 3);
  const SampleResult r = quiet.sample(logits, {});
  EXPECT_TRUE(std::isnan(r.logprob));
  EXPECT_TRUE(r.top_logprobs.empty());
  // logprobs alone: the chosen token's, no list.
  SamplingParams only;
  only.logprobs = true;
  only.temperature = 0;
  Sampler chosen(only, 3);
  const SampleResult g = chosen.sample(logits, {});
  EXPECT_EQ(g.token, 500);
  EXPECT_EQ(g.logprob, raw[500]);
  EXPECT_TRUE(g.top_logprobs.empty());
}

// --- hostile logits -----------------------------------------------------------------------

TEST(Sampler, NonFiniteLogitsNeverWinAndNeverCrash) {
  const std::vector<float> with_nan = {kNaN, 1.0f, kNaN, 0.5f};
  Sampler greedy(with_temperature(0), 1);
  EXPECT_EQ(greedy.sample(with_nan, {}).token, 1);
  Sampler s(SamplingParams{}, 1);
  EXPECT_EQ(keys(sample_counts(s, with_nan, 2000)), (std::set<int32_t>{1, 3}));

  const std::vector<float> all_nan(6, kNaN), all_neg_inf(6, -kInf);
  SamplingParams p;
  p.top_p = 0.9f;
  p.top_k = 3;
  p.logprobs = true;
  for (const auto* logits : {&all_nan, &all_neg_inf}) {
    EXPECT_EQ(greedy.sample(*logits, {}).token, 0);
    Sampler filtered(p, 1);
    const SampleResult r = filtered.sample(*logits, {});
    EXPECT_EQ(r.token, 0);
    EXPECT_EQ(r.logprob, -kInf);
  }
  const std::vector<float> with_inf = {1.0f, kInf, 2.0f, kInf};
  EXPECT_EQ(greedy.sample(with_inf, {}).token, 1);
  Sampler hot(SamplingParams{}, 1);
  const auto counts = sample_counts(hot, with_inf, 2000);
  EXPECT_EQ(keys(counts), (std::set<int32_t>{1, 3}));  // the two +inf share the mass
}

}  // namespace
}  // namespace duet
