// duet bench engine -m FILE -t THREADS -p 512 -n 128 [--json]
// Prefill and decode tokens/s like llama-bench (warm-up, repetitions, median and spread),
// achieved weight-read GB/s against this machine's measured read bandwidth, and a hash of
// the final logits so that a fast path computing something else shows at once.
// --concurrency N also measures N sequences decoding together (aggregate tokens/s).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "base/progress.h"
#include "base/thread_pool.h"
#include "cli/commands.h"
#include "engine/sampler.h"
#include "model/qwen3_model.h"

namespace duet::cli {
namespace {

struct BenchArgs {
  std::string model;
  int threads = 0;
  int prompt = 512;
  int gen = 128;
  int reps = 5;
  int concurrency = 0;
  std::string backend = "auto";
  bool json = false;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Summary {
  double median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

// Read bandwidth of this machine with the same threads: sum a 1 GiB buffer, best of 3.
double measure_read_gbps(ThreadPool& pool) {
  const size_t n = (size_t{1} << 30) / sizeof(uint64_t);
  std::vector<uint64_t> buf(n);
  pool.parallel_for(pool.size(), [&](int64_t task, int) {
    const size_t lo = n * task / pool.size(), hi = n * (task + 1) / pool.size();
    for (size_t i = lo; i < hi; ++i) buf[i] = i;
  });
  double best = 0;
  std::vector<uint64_t> sums(pool.size());
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    pool.parallel_for(pool.size(), [&](int64_t task, int) {
      const size_t lo = n * task / pool.size(), hi = n * (task + 1) / pool.size();
      uint64_t a = 0, b = 0, c = 0, d = 0;
      for (size_t i = lo; i + 4 <= hi; i += 4) {
        a += buf[i];
        b += buf[i + 1];
        c += buf[i + 2];
        d += buf[i + 3];
      }
      sums[task] = a + b + c + d;
    });
    best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / seconds_since(t0) / 1e9);
  }
  return best;
}

uint64_t fnv1a(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// A fresh cache for `n_seqs` sequences of up to `len` positions, identity block tables.
struct Caches {
  std::unique_ptr<KvStorage> kv;
  std::vector<std::vector<int32_t>> tables;
};
Result<Caches> make_caches(Qwen3Model& model, int n_seqs, int64_t len) {
  constexpr int64_t kBlock = 16;
  const int64_t per_seq = (len + kBlock - 1) / kBlock;
  auto kv = model.new_kv_storage(per_seq * n_seqs, kBlock, GgmlType::F16);
  if (!kv) return kv.status();
  Caches c;
  c.kv = std::move(kv.value());
  for (int s = 0; s < n_seqs; ++s) {
    std::vector<int32_t> t(static_cast<size_t>(per_seq));
    std::iota(t.begin(), t.end(), static_cast<int32_t>(s * per_seq));
    c.tables.push_back(std::move(t));
  }
  return c;
}

int run_bench(const BenchArgs& a) {
  ThreadPool pool(a.threads);
  auto backend = make_backend(a.backend, pool);
  if (!backend) return fail(backend.message());
  Progress loading("loading " + a.model, 0, "matrices");
  ModelLoadOptions load_options;
  load_options.progress = [&loading](int64_t done, int64_t total) { loading.set(done, total); };
  auto model = Qwen3Model::load(a.model, std::move(backend->backend), load_options);
  loading.finish();
  if (!model) return fail("cannot load " + a.model + ": " + model.message());
  Qwen3Model& m = **model;
  const Qwen3Config& cfg = m.config();
  if (a.prompt < 1 || a.gen < 1 || a.reps < 1) return fail("-p, -n and -r must be at least 1");
  if (a.prompt + a.gen + 64 > cfg.max_context()) return fail("-p + -n exceed the model's context");

  std::vector<int32_t> prompt(static_cast<size_t>(a.prompt));
  for (int i = 0; i < a.prompt; ++i)
    prompt[i] = static_cast<int32_t>((i * 7919 + 13) % cfg.n_vocab);

  std::vector<double> pp, tg;
  uint64_t hash = 0;
  // Caches are made once and overwritten by every repetition (as llama-bench reuses its
  // context), so first-touch page faults of a fresh cache stay out of the timings.
  auto caches = make_caches(m, 1, a.prompt + a.gen);
  if (!caches) return fail(caches.message());
  auto fresh = make_caches(m, 1, a.gen);
  if (!fresh) return fail(fresh.message());
  // Each repetition (and the warm-up) of each test is one step of the progress.
  Progress progress("bench " + a.model, (a.reps + 1) * (a.concurrency > 0 ? 2 : 1), "runs");
  for (int rep = -1; rep < a.reps; ++rep) {  // rep -1 is the warm-up
    std::vector<float> logits;
    ForwardChunk chunk{prompt, 0, caches->tables[0], LogitsFor::kLast};
    auto t0 = Clock::now();
    Status s = m.forward_batch(std::span<const ForwardChunk>(&chunk, 1), *caches->kv, logits);
    if (!s) return fail(s.message());
    const double t_pp = seconds_since(t0);
    // Decode from an empty context, as llama-bench's tg test does.
    int32_t tok = 1;
    t0 = Clock::now();
    for (int i = 0; i < a.gen; ++i) {
      ForwardChunk one{std::span<const int32_t>(&tok, 1), i, fresh->tables[0], LogitsFor::kLast};
      s = m.forward_batch(std::span<const ForwardChunk>(&one, 1), *fresh->kv, logits);
      if (!s) return fail(s.message());
      tok = greedy_pick(logits);
    }
    const double t_tg = seconds_since(t0);
    if (rep >= 0) {
      pp.push_back(a.prompt / t_pp);
      tg.push_back(a.gen / t_tg);
      hash = fnv1a(logits);
    }
    progress.advance();
  }

  std::vector<double> agg;
  if (a.concurrency > 0) {
    const int C = a.concurrency;
    auto shared = make_caches(m, C, 16 + a.gen);
    if (!shared) return fail(shared.message());
    for (int rep = -1; rep < a.reps; ++rep) {
      Caches* caches = &shared.value();
      std::vector<std::vector<int32_t>> toks(C);
      std::vector<ForwardChunk> chunks(C);
      std::vector<float> logits;
      for (int sq = 0; sq < C; ++sq) {  // a short distinct prompt each
        toks[sq].resize(16);
        for (int i = 0; i < 16; ++i)
          toks[sq][i] = static_cast<int32_t>((sq * 131 + i * 17 + 1) % cfg.n_vocab);
        chunks[sq] = {toks[sq], 0, caches->tables[sq], LogitsFor::kLast};
      }
      Status s = m.forward_batch(chunks, *caches->kv, logits);
      if (!s) return fail(s.message());
      std::vector<int32_t> next(C);
      const auto t0 = Clock::now();
      for (int i = 0; i < a.gen; ++i) {
        // Each sequence's greedy pick on the pool's threads, as the engine draws a step's tokens.
        pool.parallel_for(C, [&](int64_t sq, int) {
          next[sq] =
              greedy_pick(std::span<const float>(logits).subspan(sq * cfg.n_vocab, cfg.n_vocab));
        });
        for (int sq = 0; sq < C; ++sq)
          chunks[sq] = {std::span<const int32_t>(&next[sq], 1), 16 + i, caches->tables[sq],
                        LogitsFor::kLast};
        s = m.forward_batch(chunks, *caches->kv, logits);
        if (!s) return fail(s.message());
      }
      if (rep >= 0) agg.push_back(static_cast<double>(C) * a.gen / seconds_since(t0));
      progress.advance();
    }
  }

  progress.finish();
  const double bw = measure_read_gbps(pool);
  const double bytes_per_token = static_cast<double>(m.weight_bytes_read_per_token());
  const Summary spp = summarize(pp), stg = summarize(tg);
  const double achieved = stg.median * bytes_per_token / 1e9;
  nlohmann::json j = {
      {"model", a.model},
      {"backend", m.backend().name()},
      {"threads", pool.size()},
      {"prompt_tokens", a.prompt},
      {"gen_tokens", a.gen},
      {"reps", a.reps},
      {"prefill_tok_s", {{"median", spp.median}, {"min", spp.min}, {"max", spp.max}}},
      {"decode_tok_s", {{"median", stg.median}, {"min", stg.min}, {"max", stg.max}}},
      {"weight_bytes_per_token", bytes_per_token},
      {"achieved_gb_s", achieved},
      {"measured_read_gb_s", bw},
      {"decode_floor_tok_s", bw * 1e9 / bytes_per_token},
      {"logits_hash", hash}};
  if (!agg.empty()) {
    const Summary sa = summarize(agg);
    j["concurrency"] = a.concurrency;
    j["aggregate_decode_tok_s"] = {{"median", sa.median}, {"min", sa.min}, {"max", sa.max}};
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("model %s, backend %s, %d threads\n", a.model.c_str(), m.backend().name().c_str(),
              pool.size());
  std::printf("pp%-5d %9.1f tok/s  (min %.1f, max %.1f)\n", a.prompt, spp.median, spp.min, spp.max);
  std::printf("tg%-5d %9.1f tok/s  (min %.1f, max %.1f)\n", a.gen, stg.median, stg.min, stg.max);
  std::printf(
      "weights read per token %.1f MiB: %.1f GB/s achieved of %.1f GB/s measured (%.0f%%); floor "
      "%.1f tok/s\n",
      bytes_per_token / (1 << 20), achieved, bw, 100.0 * achieved / bw, bw * 1e9 / bytes_per_token);
  if (!agg.empty()) {
    const Summary sa = summarize(agg);
    std::printf("decode x%d   %9.1f tok/s aggregate  (min %.1f, max %.1f)\n", a.concurrency,
                sa.median, sa.min, sa.max);
  }
  std::printf("logits hash %016" PRIx64 "\n", hash);
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Action* run) {
  CLI::App* bench = app.add_subcommand(
      "bench", "benchmarks: engine (tokens/s of a model) and serve (latency of a server)");
  bench->require_subcommand(1);
  auto a = std::make_shared<BenchArgs>();
  CLI::App* eng =
      bench->add_subcommand("engine", "prefill and decode tokens/s of a model, like llama-bench");
  eng->add_option("-m,--model", a->model, "GGUF model file")->required();
  eng->add_option("-t,--threads", a->threads, "threads (default: all cores)");
  eng->add_option("-p,--prompt", a->prompt, "prompt tokens for the prefill test")->default_val(512);
  eng->add_option("-n,--gen", a->gen, "tokens for the decode test")->default_val(128);
  eng->add_option("-r,--reps", a->reps, "repetitions after one warm-up")->default_val(5);
  eng->add_option("--concurrency", a->concurrency, "also decode N sequences together");
  add_backend_option(eng, &a->backend);
  eng->add_flag("--json", a->json, "machine-readable output");
  eng->callback([run, a] { *run = [a] { return run_bench(*a); }; });
  add_bench_serve_command(*bench, run);
}

}  // namespace duet::cli
