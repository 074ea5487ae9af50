// Sampler cost per token (Google Benchmark) over one row of Qwen3's 151,936 logits.
//
//   build/duet_bench_sampler        # µs per sample() for each setting
//
// Logits are seeded normal noise (sd 2.5, like a real model's bulk) plus a few clear
// favourites; "flat" cases use sd 0.05, the shape of a random-weight model, which is the
// worst case for nucleus (top-p) selection.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/sampler.h"

namespace {

using duet::Sampler;
using duet::SamplingParams;

constexpr size_t kVocab = 151936;

std::vector<float> make_logits(float stddev) {
  std::mt19937 gen(42);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> logits(kVocab);
  for (float& v : logits) v = normal(gen);
  if (stddev > 1) {
    for (size_t id : {198u, 1000u, 2000u, 35000u, 99999u}) logits[id] += 12.0f + (id % 7);
  }
  return logits;
}

void run(benchmark::State& state, const SamplingParams& params, float stddev,
         size_t history_tokens = 0) {
  const std::vector<float> logits = make_logits(stddev);
  std::vector<int32_t> history(history_tokens);
  std::mt19937 gen(7);
  for (int32_t& t : history) t = static_cast<int32_t>(gen() % kVocab);
  Sampler sampler(params, 1);
  const size_t prompt = history.size() / 2;
  const duet::TokenHistory seen{std::span(history).first(prompt),
                                std::span(history).subspan(prompt)};
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(logits, seen).token);
}

SamplingParams make(float temperature, int top_k, float top_p, float min_p = 0) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  return p;
}

void BM_Greedy(benchmark::State& s) { run(s, make(0, 0, 1), 2.5f); }
void BM_GreedyPenalties(benchmark::State& s) {
  SamplingParams p = make(0, 0, 1);
  p.presence_penalty = 1.5f;
  p.repetition_penalty = 1.1f;
  run(s, p, 2.5f, 4096);
}
// Qwen3's advice for thinking mode.
void BM_TopK20TopP095(benchmark::State& s) { run(s, make(0.6f, 20, 0.95f), 2.5f); }
void BM_TopK20TopP095Penalties(benchmark::State& s) {
  SamplingParams p = make(0.6f, 20, 0.95f);
  p.presence_penalty = 1.5f;
  run(s, p, 2.5f, 4096);
}
void BM_TopK20TopP095Logprobs(benchmark::State& s) {
  SamplingParams p = make(0.6f, 20, 0.95f);
  p.top_logprobs = 5;
  run(s, p, 2.5f);
}
void BM_TopPOnly(benchmark::State& s) { run(s, make(0.7f, 0, 0.95f), 2.5f); }
void BM_TopPOnlyFlat(benchmark::State& s) { run(s, make(0.7f, 0, 0.95f), 0.05f); }
void BM_FullSoftmax(benchmark::State& s) { run(s, make(1, 0, 1), 2.5f); }
void BM_MinP(benchmark::State& s) { run(s, make(1, 0, 1, 0.05f), 2.5f); }

BENCHMARK(BM_Greedy)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GreedyPenalties)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopK20TopP095)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopK20TopP095Penalties)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopK20TopP095Logprobs)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopPOnly)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopPOnlyFlat)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FullSoftmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MinP)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
