// What one ThreadPool job costs on two threads (Google Benchmark): the hand-over of a
// decode step's many small jobs, which is what a step pays for between its kernels.
//
//   build/duet_bench_pool        # ns per job
//
// Each job has two tasks that add 1 to 4,096 floats (16 KB): "own half" has each thread
// update the same half every job (its data stays in its cache), "swapped halves" swaps them
// every job (every job moves 16 KB each way between the cores), "four tasks" hands out four
// 8 KB tasks through the shared counter. Where the two vCPUs sit on different dies these
// cost two to three times what they cost on one (docs/PERF.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"

namespace {

void add_one(float* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) p[j] += 1.0f;
}

// Times job(pool, buf, i) for i = 0, 1, ...: one pool job each, on a two-thread pool and
// an 8,192-float buffer.
template <typename Job>
void time_jobs(benchmark::State& state, Job job) {
  duet::ThreadPool pool(2);
  std::vector<float> buf(8192, 0.0f);
  int64_t i = 0;
  for (auto _ : state) job(pool, buf.data(), i++);
  benchmark::DoNotOptimize(buf.data());
}

void BM_JobOwnHalf(benchmark::State& state) {
  time_jobs(state, [](duet::ThreadPool& pool, float* buf, int64_t) {
    pool.parallel_for_ranges(2, [&](int64_t t, int) { add_one(buf + t * 4096, 4096); });
  });
}

void BM_JobSwappedHalves(benchmark::State& state) {
  time_jobs(state, [](duet::ThreadPool& pool, float* buf, int64_t i) {
    pool.parallel_for_ranges(2, [&](int64_t t, int) { add_one(buf + ((t + i) & 1) * 4096, 4096); });
  });
}

void BM_JobFourTasks(benchmark::State& state) {
  time_jobs(state, [](duet::ThreadPool& pool, float* buf, int64_t) {
    pool.parallel_for(4, [&](int64_t t, int) { add_one(buf + t * 2048, 2048); });
  });
}

BENCHMARK(BM_JobOwnHalf);
BENCHMARK(BM_JobSwappedHalves);
BENCHMARK(BM_JobFourTasks);

}  // namespace

BENCHMARK_MAIN();
