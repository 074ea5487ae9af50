// duet bench serve --url URL [--model NAME] ...: a load generator for any OpenAI-compatible
// server (duet, llama.cpp's llama-server, vLLM, SGLang, Ollama's /v1). The work is in
// src/loadgen; this file turns flags into its options and writes the results.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "loadgen/report.h"
#include "loadgen/runner.h"
#include "loadgen/stats.h"
#include "loadgen/svg_plot.h"
#include "loadgen/workload.h"

namespace duet::cli {
namespace {

using namespace duet::loadgen;

struct ServeBenchArgs {
  WorkloadOptions w;
  RunOptions run;
  std::string model;
  std::string rate = "inf";
  std::string arrival = "poisson";
  std::string think = "default";
  std::string extra_body;
  std::string json_out;
  std::string plot_out;
  bool ignore_eos = false;
  double temperature = -1;
  bool progress = false;
  bool dry_run = false;
};

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

Status finish_options(ServeBenchArgs& a) {
  char* end = nullptr;
  const double rate = std::strtod(a.rate.c_str(), &end);
  if (end == a.rate.c_str() || *end != '\0' || !(rate > 0))
    return Status::error("--request-rate must be a positive number of requests/s or inf, got '" +
                         a.rate + "'");
  a.w.request_rate = rate;
  a.w.poisson = a.arrival == "poisson";
  static const std::pair<const char*, ThinkPlan> kThink[] = {{"default", ThinkPlan::kServerDefault},
                                                             {"on", ThinkPlan::kOn},
                                                             {"off", ThinkPlan::kOff},
                                                             {"auto", ThinkPlan::kAuto},
                                                             {"mix", ThinkPlan::kMix}};
  for (const auto& [name, plan] : kThink)
    if (a.think == name) a.w.think = plan;
  if (!a.extra_body.empty()) {
    a.run.body.extra = nlohmann::json::parse(a.extra_body, nullptr, false);
    if (!a.run.body.extra.is_object()) return Status::error("--extra-body must be a JSON object");
  }
  if (a.w.dataset_file.empty() && a.w.num_prompts < 1)
    return Status::error("--num-prompts must be at least 1");
  a.run.body.model = a.model;
  a.run.body.ignore_eos = a.ignore_eos;
  a.run.body.temperature = a.temperature;
  a.run.progress = a.progress || isatty(STDERR_FILENO);
  a.run.progress_tty = isatty(STDERR_FILENO);
  return Status::ok();
}

nlohmann::json config_json(const ServeBenchArgs& a) {
  return {{"dataset", a.w.dataset_file.empty() ? "random" : a.w.dataset_file},
          {"num_prompts", a.w.num_prompts},
          {"input_len", a.w.input_len},
          {"output_len", a.w.output_len},
          {"range_ratio", a.w.range_ratio},
          {"request_rate", std::isfinite(a.w.request_rate) ? nlohmann::json(a.w.request_rate)
                                                           : nlohmann::json("inf")},
          {"arrival", a.arrival},
          {"burstiness", a.w.burstiness},
          {"max_concurrency", a.run.max_concurrency},
          {"warmup", a.w.warmup},
          {"think", a.think},
          {"mix_thinking_fraction", a.w.mix_thinking_fraction},
          {"ignore_eos", a.ignore_eos},
          {"seed", a.w.seed},
          {"timeout_s", a.run.timeout_s}};
}

int emit_json(const std::string& where, const nlohmann::json& j) {
  const std::string text = j.dump(2) + "\n";
  if (where == "-") {
    std::cout << text << std::flush;
    return 0;
  }
  if (!write_file(where, text)) return fail("cannot write " + where);
  return 0;
}

int run_serve_bench(ServeBenchArgs& a) {
  if (Status s = finish_options(a); !s) return fail(s.message());
  auto warmup = plan_warmup(a.w);
  if (!warmup) return fail(warmup.message());
  auto plan = plan_requests(a.w);
  if (!plan) return fail(plan.message());

  if (a.dry_run) {  // the plan only: arrival times, lengths, modes, bodies; nothing is sent
    nlohmann::json reqs = nlohmann::json::array();
    for (const PlannedRequest& p : *plan) {
      BodyOptions b = a.run.body;
      if (b.model.empty()) b.model = "MODEL";
      reqs.push_back({{"index", p.index},
                      {"scheduled_s", p.scheduled_s},
                      {"think", think_name(p.think)},
                      {"input_len", p.input_len},
                      {"output_len", p.output_len},
                      {"body", nlohmann::json::parse(request_body(p, b))}});
    }
    return emit_json(a.json_out.empty() ? "-" : a.json_out,
                     {{"config", config_json(a)}, {"warmup", warmup->size()}, {"requests", reqs}});
  }

  auto run = run_benchmark(a.run, *warmup, *plan);
  if (!run) return fail(run.message());
  const BenchSummary s = summarize_run(run->records, run->duration_s);
  ReportContext ctx{a.run.url, config_json(a)};
  // The table goes to stdout, unless stdout carries the JSON.
  const std::string table = summary_table(*run, s, ctx);
  std::fputs(table.c_str(), a.json_out == "-" ? stderr : stdout);
  if (!a.json_out.empty())
    if (int rc = emit_json(a.json_out, report_json(*run, s, ctx))) return rc;
  if (!a.plot_out.empty()) {
    PlotSeries ttft{"Time to first token (ms)", {}}, itl{"Inter-token latency (ms)", {}};
    for (const RequestRecord& r : run->records) {
      if (r.warmup || !r.ok) continue;
      const RequestMetrics m = request_metrics(r);
      if (m.ttft) ttft.values.push_back(*m.ttft * 1e3);
      for (double g : m.itl) itl.values.push_back(g * 1e3);
    }
    const std::string caption =
        a.run.url + " · " + run->model + " · " + std::to_string(s.completed) +
        " requests, concurrency " +
        (a.run.max_concurrency > 0 ? std::to_string(a.run.max_concurrency) : "unlimited") +
        ", rate " + a.rate + "/s · " + report_json(*run, s, ctx)["date"].get<std::string>();
    if (!write_file(a.plot_out, render_distributions_svg({ttft, itl}, caption)))
      return fail("cannot write " + a.plot_out);
  }
  if (s.failed > 0) {
    std::fprintf(stderr, "duet: %lld of %lld requests failed\n", static_cast<long long>(s.failed),
                 static_cast<long long>(s.failed + s.completed));
    return 2;
  }
  return 0;
}

}  // namespace

void add_bench_serve_command(CLI::App& bench, Action* run) {
  auto a = std::make_shared<ServeBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "serve",
      "TTFT / TPOT / ITL / throughput of any OpenAI-compatible server, like vLLM's bench serve");
  cmd->add_option("--url", a->run.url,
                  "the server: http://HOST:PORT (or .../v1, or the full chat path)")
      ->required();
  cmd->add_option("--model", a->model, "model name to send (default: the first of GET /v1/models)");
  cmd->add_option("--api-key", a->run.api_key, "sent as 'Authorization: Bearer KEY'");
  cmd->add_option(
         "--dataset", a->w.dataset_file,
         "JSONL prompts, one per line: {\"prompt\": \"...\"} or {\"messages\": [...]}, optional "
         "\"output_len\" and \"think\" (on|off|auto|true|false); default: random words")
      ->check(CLI::ExistingFile);
  cmd->add_option("-n,--num-prompts", a->w.num_prompts,
                  "measured requests (default 100; with --dataset, 0 = one per line, more cycle)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--input-len", a->w.input_len,
                  "random dataset: prompt length in words, about tokens (default 256)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--output-len", a->w.output_len, "max_tokens per request (default 128)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--range-ratio", a->w.range_ratio,
                  "lengths drawn uniformly from [len*(1-r), len*(1+r)] (default 0: fixed)")
      ->check(CLI::Range(0.0, 0.999));
  cmd->add_option("--request-rate", a->rate,
                  "arrivals per second, or inf: all at once (default inf)");
  cmd->add_option("--arrival", a->arrival,
                  "poisson (gaps drawn, see --burstiness) or fixed (1/rate apart)")
      ->check(CLI::IsMember({"poisson", "fixed"}));
  cmd->add_option("--burstiness", a->w.burstiness,
                  "gamma shape of the gaps: 1 = Poisson, <1 burstier, >1 more even (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-concurrency,--concurrency", a->run.max_concurrency,
                  "most requests open at once; the rest wait (default: no limit)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--warmup", a->w.warmup,
                  "requests sent and finished before the measured run (default 0)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option(
         "--think", a->think,
         "reasoning mode per request: on, off, auto (duet's), mix (a seeded split of on and "
         "off), default (send nothing)")
      ->check(CLI::IsMember({"default", "on", "off", "auto", "mix"}));
  cmd->add_option("--mix-ratio", a->w.mix_thinking_fraction,
                  "with --think mix: the share of thinking requests (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag(
      "--ignore-eos", a->ignore_eos,
      "ask for exactly max_tokens (ignore_eos + min_tokens, as vLLM, llama.cpp and duet accept)");
  cmd->add_option("--temperature", a->temperature, "sampling temperature (default: the server's)")
      ->check(CLI::Range(0.0, 2.0));
  cmd->add_option("--extra-body", a->extra_body, "a JSON object merged into every request body");
  cmd->add_option("--seed", a->w.seed, "seed of prompts, lengths, modes and arrivals (default 0)");
  cmd->add_option("--timeout", a->run.timeout_s,
                  "seconds one request may take, connect to last byte (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--progress", a->progress,
                "a progress line on stderr even when it is not a terminal");
  cmd->add_option("--json", a->json_out,
                  "write every metric and per-request record as JSON to FILE, or - for stdout");
  cmd->add_option("--plot", a->plot_out,
                  "draw the TTFT and inter-token latency distributions to FILE.svg");
  cmd->add_flag("--dry-run", a->dry_run,
                "print the planned requests (times, lengths, modes, bodies) and send nothing");
  cmd->footer(
      "Metrics follow vLLM's benchmark_serving definitions, from client-side arrival times: TTFT "
      "=\n"
      "send -> first generated text (reasoning or answer); TTFT-answer = send -> first answer "
      "text;\n"
      "ITL = gaps between events carrying text; TPOT = (E2E - TTFT) / (tokens - 1), tokens from "
      "the\n"
      "server's usage; stutter = a request's longest gap / its median gap. Exit status: 0 when "
      "every\n"
      "request succeeded, 2 when some failed (the report says why), 1 when the run could not "
      "start.\n"
      "See docs/BENCHMARKS.md.");
  cmd->callback([run, a] { *run = [a] { return run_serve_bench(*a); }; });
}

}  // namespace duet::cli
