// duet bench engine -m FILE -t THREADS -p 512 -n 128 [-d DEPTH] [--json]
// Prefill and decode tokens/s like llama-bench (warm-up, repetitions, median and spread),
// achieved weight-read GB/s against this machine's measured read bandwidth, and a hash of
// the final logits so that a fast path computing something else shows at once.
// -d D (llama-bench's -d): both tests run after D tokens are already in the cache, and the
// decode floor counts the KV cache bytes each token then reads beside the weights.
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
#include <optional>
#include <string>
#include <vector>

#include "base/progress.h"
#include "base/thread_pool.h"
#include "cli/commands.h"
#include "engine/sampler.h"
#include "host/model_host.h"
#include "model/qwen3_model.h"

namespace duet::cli {
namespace {

struct BenchArgs {
  std::string model;
  int threads = 0;
  int prompt = 512;
  int gen = 128;
  int reps = 5;
  int depth = 0;
  int batch = 512;
  std::string kv_type = "f16";
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
Result<Caches> make_caches(Qwen3Model& model, int n_seqs, int64_t len, GgmlType kv_type) {
  constexpr int64_t kBlock = 16;
  const int64_t per_seq = (len + kBlock - 1) / kBlock;
  auto kv = model.new_kv_storage(per_seq * n_seqs, kBlock, kv_type);
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

// Computes `tokens` at positions from..from+size−1 of the cache's first sequence in chunks of
// at most `batch` tokens, as the engine's steps do; logits of the last token only.
Status prefill(Qwen3Model& m, Caches& c, std::span<const int32_t> tokens, int64_t from,
               int64_t batch, std::vector<float>& logits) {
  for (int64_t i = 0; i < static_cast<int64_t>(tokens.size()); i += batch) {
    const auto part = tokens.subspan(
        static_cast<size_t>(i), std::min<size_t>(batch, tokens.size() - static_cast<size_t>(i)));
    ForwardChunk chunk{part, static_cast<int32_t>(from + i), c.tables[0], LogitsFor::kLast};
    Status s = m.forward_batch(std::span<const ForwardChunk>(&chunk, 1), *c.kv, logits);
    if (!s) return s;
  }
  return Status::ok();
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
  if (a.prompt < 1 || a.gen < 1 || a.reps < 1 || a.batch < 1)
    return fail("-p, -n, -r and -b must be at least 1");
  if (a.depth < 0) return fail("-d must not be negative");
  const int64_t positions = int64_t{a.depth} + std::max(a.prompt, a.gen);
  if (positions > cfg.max_context())
    return fail("-d " + std::to_string(a.depth) + " + max(-p, -n) = " + std::to_string(positions) +
                " positions exceed the model's context of " + std::to_string(cfg.max_context()));
  const std::optional<GgmlType> kv_type = ModelHost::kv_cache_type(a.kv_type);
  if (!kv_type) return fail("--kv-type " + a.kv_type + ": not a KV cache type");

  auto token_at = [&](int64_t i, int64_t salt) {
    return static_cast<int32_t>((i * 7919 + salt) % cfg.n_vocab);
  };
  std::vector<int32_t> prompt(static_cast<size_t>(a.prompt));
  for (int i = 0; i < a.prompt; ++i) prompt[i] = token_at(i, 13);

  std::vector<double> pp, tg;
  uint64_t hash = 0;
  // Caches are made once and overwritten by every repetition (as llama-bench reuses its
  // context), so first-touch page faults of a fresh cache stay out of the timings.
  // Both tests start at position `depth`: the prefill's prompt, then decode from the same
  // place (each token written before it is read), as llama-bench's pp and tg tests at -d do.
  auto caches = make_caches(m, 1, positions, *kv_type);
  if (!caches) return fail(caches.message());
  if (a.depth > 0) {
    std::vector<int32_t> context(static_cast<size_t>(a.depth));
    for (int i = 0; i < a.depth; ++i) context[i] = token_at(i, 101);
    std::vector<float> logits;
    Progress filling("filling " + std::to_string(a.depth) + " tokens of context", a.depth,
                     "tokens");
    for (int64_t i = 0; i < a.depth; i += a.batch) {  // in steps, for the progress
      const int64_t n = std::min<int64_t>(a.batch, a.depth - i);
      Status s =
          prefill(m, *caches, std::span<const int32_t>(context).subspan(i, n), i, a.batch, logits);
      if (!s) return fail(s.message());
      filling.set(i + n, a.depth);
    }
    filling.finish();
  }
  // Each repetition (and the warm-up) of each test is one step of the progress.
  Progress progress("bench " + a.model, (a.reps + 1) * (a.concurrency > 0 ? 2 : 1), "runs");
  for (int rep = -1; rep < a.reps; ++rep) {  // rep -1 is the warm-up
    std::vector<float> logits;
    auto t0 = Clock::now();
    Status s = prefill(m, *caches, prompt, a.depth, a.batch, logits);
    if (!s) return fail(s.message());
    const double t_pp = seconds_since(t0);
    int32_t tok = 1;
    t0 = Clock::now();
    for (int i = 0; i < a.gen; ++i) {
      ForwardChunk one{std::span<const int32_t>(&tok, 1), a.depth + i, caches->tables[0],
                       LogitsFor::kLast};
      s = m.forward_batch(std::span<const ForwardChunk>(&one, 1), *caches->kv, logits);
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
    auto shared = make_caches(m, C, 16 + a.gen, *kv_type);
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
  // What one decode step reads: every weight once, and K and V of every cached position — on
  // average depth + gen/2 of them over the decode test.
  const double weight_bytes = static_cast<double>(m.weight_bytes_read_per_token());
  const double kv_bytes =
      static_cast<double>(KvStorage::bytes_per_token(cfg.kv_shape(), *kv_type)) *
      (a.depth + a.gen / 2.0);
  const double bytes_per_token = weight_bytes + kv_bytes;
  const Summary spp = summarize(pp), stg = summarize(tg);
  const double achieved = stg.median * bytes_per_token / 1e9;
  nlohmann::json j = {
      {"model", a.model},
      {"backend", m.backend().name()},
      {"threads", pool.size()},
      {"prompt_tokens", a.prompt},
      {"gen_tokens", a.gen},
      {"depth", a.depth},
      {"batch", a.batch},
      {"kv_type", a.kv_type},
      {"reps", a.reps},
      {"prefill_tok_s", {{"median", spp.median}, {"min", spp.min}, {"max", spp.max}}},
      {"decode_tok_s", {{"median", stg.median}, {"min", stg.min}, {"max", stg.max}}},
      {"weight_bytes_per_token", weight_bytes},
      {"kv_bytes_per_token", kv_bytes},
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
  std::printf("model %s, backend %s, %d threads, KV %s\n", a.model.c_str(),
              m.backend().name().c_str(), pool.size(), a.kv_type.c_str());
  const std::string at = a.depth > 0 ? " @ d" + std::to_string(a.depth) : "";
  std::printf("pp%-5d%s %9.1f tok/s  (min %.1f, max %.1f)\n", a.prompt, at.c_str(), spp.median,
              spp.min, spp.max);
  std::printf("tg%-5d%s %9.1f tok/s  (min %.1f, max %.1f)\n", a.gen, at.c_str(), stg.median,
              stg.min, stg.max);
  std::printf(
      "read per token %.1f MiB (weights %.1f, KV %.1f): %.1f GB/s achieved of %.1f GB/s measured "
      "(%.0f%%); floor %.1f tok/s\n",
      bytes_per_token / (1 << 20), weight_bytes / (1 << 20), kv_bytes / (1 << 20), achieved, bw,
      100.0 * achieved / bw, bw * 1e9 / bytes_per_token);
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
  eng->add_option("-d,--depth", a->depth,
                  "tokens already in the cache before both tests (llama-bench's -d)")
      ->default_val(0);
  eng->add_option("-b,--batch", a->batch,
                  "prompt tokens computed per step, as the server's --max-batch-tokens")
      ->default_val(512);
  eng->add_option("--kv-type", a->kv_type, "the KV cache's type: f16, bf16 or q8_0")
      ->default_val("f16");
  eng->add_option("--concurrency", a->concurrency, "also decode N sequences together");
  add_backend_option(eng, &a->backend);
  eng->add_flag("--json", a->json, "machine-readable output");
  eng->callback([run, a] { *run = [a] { return run_bench(*a); }; });
  add_bench_serve_command(*bench, run);
}

}  // namespace duet::cli
