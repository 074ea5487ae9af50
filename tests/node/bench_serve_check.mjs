// Checks a `duet bench serve --json` report against the server it measured: request and
// token counts equal /metrics and the usage totals, client-side timings sit at or above the
// server's own (TTFT, E2E) and close to them, inter-token sums agree, the thinking modes it
// sent are the ones the server counted, and the summary is consistent with the per-request
// records. Usage: DUET_PORT=… node bench_serve_check.mjs REPORT.json EXPECT.json
// EXPECT: {"num_prompts", "warmup", "output_len", "slack_ms"} (see tests/cli/bench_serve.sh).
import fs from 'node:fs';
import { getMetrics, metric, check, checkEq, finish } from './lib/http_util.mjs';

const report = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const expect = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const m = await getMetrics();

// The documented shape.
for (const k of ['tool', 'date', 'url', 'model', 'config', 'summary', 'errors', 'requests'])
  check(k in report, `report has ${k}`);
const s = report.summary;
for (const k of ['completed', 'failed', 'duration_s', 'total_input_tokens', 'total_output_tokens',
                 'request_throughput', 'output_throughput', 'total_token_throughput', 'mean_concurrency',
                 'max_in_flight', 'ttft_ms', 'ttft_answer_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'stutter'])
  check(k in s, `summary has ${k}`);
for (const k of ['mean', 'median', 'std', 'p50', 'p90', 'p99', 'min', 'max', 'count'])
  check(k in s.ttft_ms && k in s.itl_ms && k in s.tpot_ms && k in s.e2e_ms, `distributions have ${k}`);

const all = report.requests;
const measured = all.filter((r) => !r.warmup);
checkEq(all.length, expect.num_prompts + expect.warmup, 'one record per request, warm-up included');
checkEq(measured.length, expect.num_prompts, 'measured records');
checkEq(s.completed, expect.num_prompts, 'every measured request completed');
checkEq(s.failed, 0, 'no failures');
check(all.every((r) => r.ok && r.http_status === 200), 'every request (warm-up too) succeeded');

// Counts: the server's counters moved by exactly what the client sent and was told.
const before = expect.metrics_before ?? {};  // a fresh server: all zero
const delta = (name, label = '') => metric(m, name, label) - (before[name + label] ?? 0);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
checkEq(delta('vllm:request_success_total', 'finished_reason="length"'), all.length, 'server finished every request at its length');
checkEq(delta('vllm:generation_tokens_total'), sum(all.map((r) => r.completion_tokens)), 'generated tokens = usage totals');
checkEq(sum(all.map((r) => r.completion_tokens)), all.length * expect.output_len, 'ignore_eos: exactly output_len each');
checkEq(s.total_output_tokens, expect.num_prompts * expect.output_len, 'summary output tokens');
checkEq(delta('vllm:prompt_tokens_total'), sum(all.map((r) => r.prompt_tokens)), 'prompt tokens = usage totals');
checkEq(s.total_input_tokens, sum(measured.map((r) => r.prompt_tokens)), 'summary input tokens');
checkEq(delta('vllm:time_to_first_token_seconds_count'), all.length, 'server TTFT samples');
checkEq(delta('vllm:inter_token_latency_seconds_count'), all.length * (expect.output_len - 1), 'server ITL samples');

// Modes: what the client sent per request is what the server decided from.
const on = all.filter((r) => r.think === 'on').length, off = all.filter((r) => r.think === 'off').length;
check(on > 0 && off > 0, `--think mix sent both modes (on ${on}, off ${off})`);
checkEq(delta('duet:thinking_mode_decisions_total', 'mode="thinking",source="chat_template_kwargs"'), on, 'thinking requests');
checkEq(delta('duet:thinking_mode_decisions_total', 'mode="non_thinking",source="chat_template_kwargs"'), off, 'non-thinking requests');

// Timings. The server's TTFT runs from the engine's submit to the first token and its E2E
// from submit to the last; the client's start earlier (connect, request parsing, template,
// tokenizing) and end later (the write and the loopback), so each client sum is at least the
// server's. "Close": at most `slack_ms` per request more — the transport and HTTP work on
// this machine, plus the one or two byte tokens that the detokenizer holds until a UTF-8
// character is complete (the demo model's vocabulary is bytes). That work slows down with
// the machine as the engine does, so the allowance is `slack_ms` plus half the server's mean
// E2E: a loaded machine or the sanitizer build stays inside it, while the errors this
// guards against stay outside (a time in the wrong unit; a client that starts its clock
// when it queues a request instead of when it sends it, behind --max-concurrency).
const serverE2eMean = delta('vllm:e2e_request_latency_seconds_sum') / all.length;
const slack = expect.slack_ms + 500 * serverE2eMean;
const clientTtft = sum(all.map((r) => r.ttft_ms)) / 1e3;
const serverTtft = delta('vllm:time_to_first_token_seconds_sum');
check(clientTtft >= serverTtft, `client TTFT sum ${clientTtft.toFixed(4)} s >= server ${serverTtft.toFixed(4)} s`);
check(clientTtft - serverTtft <= all.length * slack / 1e3,
      `client TTFT within ${slack.toFixed(1)} ms a request of the server's (client ${clientTtft.toFixed(4)} s, server ${serverTtft.toFixed(4)} s)`);
const clientE2e = sum(all.map((r) => r.e2e_ms)) / 1e3;
const serverE2e = delta('vllm:e2e_request_latency_seconds_sum');
check(clientE2e >= serverE2e, `client E2E sum ${clientE2e.toFixed(4)} s >= server ${serverE2e.toFixed(4)} s`);
check(clientE2e - serverE2e <= all.length * slack / 1e3,
      `client E2E within ${slack.toFixed(1)} ms a request of the server's (client ${clientE2e.toFixed(4)}, server ${serverE2e.toFixed(4)})`);
// First to last token: the server's inter-token sum against the client's span of arrivals.
const clientSpan = sum(all.map((r) => (r.arrival_ms.at(-1) - r.arrival_ms[0]))) / 1e3;
const serverItl = delta('vllm:inter_token_latency_seconds_sum');
check(Math.abs(clientSpan - serverItl) <= all.length * slack / 1e3,
      `first-to-last token spans agree (client ${clientSpan.toFixed(4)} s, server ${serverItl.toFixed(4)} s)`);

// Each record is consistent with itself, and the summary with the records.
const close = (a, b, what, eps = 1e-6) => check(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
for (const r of all) {
  check(r.arrival_ms.every((t, i) => i === 0 || t >= r.arrival_ms[i - 1]), `arrivals in order (#${r.index})`);
  check(r.ttft_ms === r.arrival_ms[0] && r.e2e_ms >= r.arrival_ms.at(-1), `TTFT is the first arrival, E2E after the last (#${r.index})`);
  close(r.ttft_ms + r.tpot_ms * (r.output_tokens - 1), r.e2e_ms, `TTFT + TPOT·(n−1) = E2E (#${r.index})`);
  check(r.sent_s >= r.scheduled_s, `sent no earlier than planned (#${r.index})`);
}
const mean = (xs) => sum(xs) / xs.length;
close(s.ttft_ms.mean, mean(measured.map((r) => r.ttft_ms)), 'summary TTFT mean');
close(s.e2e_ms.mean, mean(measured.map((r) => r.e2e_ms)), 'summary E2E mean');
close(s.tpot_ms.mean, mean(measured.map((r) => r.tpot_ms)), 'summary TPOT mean');
const gaps = measured.flatMap((r) => r.arrival_ms.slice(1).map((t, i) => t - r.arrival_ms[i]));
checkEq(s.itl_ms.count, gaps.length, 'ITL samples = gaps between events');
close(s.itl_ms.mean, mean(gaps), 'summary ITL mean', 1e-6);
close(s.output_throughput, s.total_output_tokens / s.duration_s, 'output throughput');
close(s.request_throughput, s.completed / s.duration_s, 'request throughput');
check(s.max_in_flight <= report.config.max_concurrency, 'never above --max-concurrency');
const lastEnd = Math.max(...measured.map((r) => r.sent_s + r.e2e_ms / 1e3));
// The run ends when its last request does; 0.5 s only absorbs a stalled scheduler.
check(s.duration_s >= lastEnd - 1e-3 && s.duration_s <= lastEnd + 0.5, `duration ends with the last request (${s.duration_s} vs ${lastEnd})`);
console.log(`bench_serve_check: TTFT client ${clientTtft.toFixed(4)} s / server ${serverTtft.toFixed(4)} s; ` +
            `E2E ${clientE2e.toFixed(4)} / ${serverE2e.toFixed(4)}; spans ${clientSpan.toFixed(4)} / ${serverItl.toFixed(4)}`);
finish('bench_serve_check');
