// Matmul throughput of the fast CPU kernels against the scalar reference (Google Benchmark).
//
//   build/duet_bench_matmul [--threads=N] [--benchmark_filter=decode]
//
// decode/<type>/<rows>x<cols>/<path>: T = 1, reported as GB/s of weight bytes read (decode
//   reads every weight once per token, so this is the number to hold against the memory
//   bandwidth). Shapes: 1024×3072 (Qwen3-0.6B's FFN down projection) and 151936×1024
//   (its output layer).
// prefill/<type>/<rows>x<cols>/<path>: T = 512, reported as GFLOP/s (2·rows·cols·T).
// batch8/<type>/<rows>x<cols>/<path>: T = 8 (eight sequences decoding together), GFLOP/s.
// <path> is ref (kernels/ref, one thread) or an ISA path of kernels/cpu on the pool;
// <path>-packed reads the weights packed at load (packed_weights.h) where the path has it.
// Weights are seeded random blocks with realistic scales; the numbers depend only on sizes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/thread_pool.h"
#include "kernels/cpu/matmul.h"
#include "kernels/ref/ops.h"

namespace {

using duet::CpuIsa;
using duet::GgmlType;

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float uniform(uint64_t& s) { return static_cast<float>(splitmix(s) >> 40) / 16777216.0f * 2 - 1; }

// Random bytes are valid codes for every block format; only the fp16 scales need sane values.
std::vector<uint8_t> make_weights(GgmlType type, int64_t rows, int64_t cols) {
  const auto& tr = duet::ggml_traits(type);
  const size_t bytes = duet::ggml_row_bytes(type, cols) * static_cast<size_t>(rows);
  std::vector<uint8_t> w(bytes);
  uint64_t s = 42;
  if (tr.block_elems == 1) {
    for (size_t i = 0; i < bytes / tr.block_bytes; ++i) {
      const float v = uniform(s) * 0.05f;
      if (type == GgmlType::F32) std::memcpy(&w[i * 4], &v, 4);
      const uint16_t h = type == GgmlType::F16 ? duet::float_to_fp16(v) : duet::float_to_bf16(v);
      if (type != GgmlType::F32) std::memcpy(&w[i * 2], &h, 2);
    }
    return w;
  }
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t r = splitmix(s);
    std::memcpy(&w[i], &r, 8);
  }
  const uint16_t scale = duet::float_to_fp16(0.002f);
  const size_t d_at = type == GgmlType::Q6_K ? 208 : 0;
  const bool has_dmin = type == GgmlType::Q4_K || type == GgmlType::Q5_K;
  for (size_t b = 0; b < bytes / tr.block_bytes; ++b) {
    std::memcpy(&w[b * tr.block_bytes + d_at], &scale, 2);
    if (has_dmin) std::memcpy(&w[b * tr.block_bytes + 2], &scale, 2);
  }
  return w;
}

// path < 0: the reference kernel.
void run_matmul(benchmark::State& state, duet::ThreadPool& pool, GgmlType type, int64_t rows,
                int64_t cols, int64_t T, int path, bool packed) {
  const std::vector<uint8_t> w = make_weights(type, rows, cols);
  std::vector<float> x(static_cast<size_t>(T * cols)), y(static_cast<size_t>(T * rows));
  uint64_t s = 7;
  for (float& v : x) v = uniform(s);
  const size_t row_bytes = duet::ggml_row_bytes(type, cols);
  duet::cpu::MatmulScratch scratch;
  duet::cpu::MatmulArgs a{type, w.data(), rows, cols, row_bytes, x.data(), T, y.data()};
  std::unique_ptr<duet::cpu::PackedWeights> p;
  if (packed) {
    p = duet::cpu::pack_for_kernels(duet::cpu::cpu_kernels(static_cast<CpuIsa>(path)), type,
                                    w.data(), rows, cols, row_bytes);
    a.packed = p.get();
  }
  for (auto _ : state) {
    if (path < 0)
      duet::ref::matmul(type, w.data(), rows, cols, row_bytes, x.data(), T, y.data());
    else
      duet::cpu::matmul(duet::cpu::cpu_kernels(static_cast<CpuIsa>(path)), pool, scratch, a);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double iters = static_cast<double>(state.iterations());
  if (T == 1) {
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.size()) * iters / 1e9,
                                                benchmark::Counter::kIsRate);
  } else {
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * rows * cols * T * iters / 1e9, benchmark::Counter::kIsRate);
  }
}

void register_all(duet::ThreadPool& pool) {
  const GgmlType types[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                            GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};
  struct Shape {
    int64_t rows, cols, T;
  };
  const Shape shapes[] = {
      {1024, 3072, 1}, {151936, 1024, 1}, {1024, 3072, 8}, {86016, 1024, 8}, {1024, 3072, 512}};
  for (const Shape& sh : shapes) {
    for (GgmlType type : types) {
      std::vector<int> paths = {-1};
      for (CpuIsa isa : duet::supported_cpu_isas()) paths.push_back(static_cast<int>(isa));
      for (int path : paths) {
        // The reference needs minutes for the big shapes; its rate is the same at any size.
        if (path < 0 && (sh.rows > 100000 || sh.T > 1) && type != GgmlType::Q8_0) continue;
        const bool can_pack =
            path >= 0 &&
            duet::cpu::cpu_kernels(static_cast<CpuIsa>(path)).for_type(type)->packed_tile !=
                nullptr;
        for (bool packed : {false, true}) {
          if (packed && !can_pack) continue;
          const std::string name =
              std::string(sh.T == 1   ? "decode/"
                          : sh.T <= 8 ? "batch8/"
                                      : "prefill/") +
              duet::ggml_type_name(type) + "/" + std::to_string(sh.rows) + "x" +
              std::to_string(sh.cols) + "/" +
              (path < 0 ? "ref" : duet::cpu_isa_name(static_cast<CpuIsa>(path))) +
              (packed ? "-packed" : "");
          auto* b = benchmark::RegisterBenchmark(name.c_str(), [=, &pool](benchmark::State& st) {
            run_matmul(st, pool, type, sh.rows, sh.cols, sh.T, path, packed);
          });
          b->Unit(benchmark::kMillisecond)->UseRealTime();
          if (path < 0) b->Iterations(1);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --threads=N (default: all hardware threads) is ours; the rest goes to the library.
  int threads = 0;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = std::atoi(argv[i] + 10);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  duet::ThreadPool pool(threads);
  benchmark::AddCustomContext("threads", std::to_string(pool.size()));
  register_all(pool);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
