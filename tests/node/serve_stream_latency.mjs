// Zero buffering: every token's emit time on the server against its arrival here.
// The server runs with --debug-timestamps, so every engine event becomes one event on the
// wire (an SSE event or an NDJSON line) carrying duet_debug.engine_ns, the moment the engine
// sampled that token. Each 'data' callback of the response is stamped on arrival, before any
// parsing, and every event found in it gets that stamp.
//
// Clocks: the server stamps with std::chrono::steady_clock and this process with
// process.hrtime.bigint(); on Linux both read clock_gettime(CLOCK_MONOTONIC) (libstdc++'s
// steady_clock; libuv's uv_hrtime), one clock for every process on the machine, in
// nanoseconds, never stepped by NTP. Server and client run on the same machine, so the
// difference is the true emit→arrival time: the engine→writer hand-off, detokenizing,
// formatting, the socket (and nginx when PORT is nginx's), and node's own read.
//
// Usage: node serve_stream_latency.mjs check|bench LABEL PORT STREAMS TOKENS
//   check (the test): structure only, no number of milliseconds. Each token is its own
//     event (tokens === 1 on every stamped event, as many stamped events as the usage
//     counts), and a token's bytes arrive here before the engine samples the next token, for
//     at least MIN_BEFORE_NEXT of the tokens. The server paces its steps (a pause after each,
//     --debug-step-pause-ms), so a healthy path has the whole pause to deliver each token; a
//     layer that coalesces tokens or holds chunks (a buffering proxy, a flush timer, Nagle)
//     delivers token i together with or after token i+1, which fails that for at least half
//     of the tokens by construction, while a scheduler hiccup on a loaded machine delays a
//     few.
//   bench (bench/stream_latency.sh): the same run and structure, and prints p50/p99/max of
//     emit→arrival; it asserts no number (the numbers go to docs/BENCHMARKS.md).
import http from 'node:http';
import { check, checkEq, finish } from './lib/http_util.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const [mode, label, port, streams, tokens] = [process.argv[2], process.argv[3], Number(process.argv[4]),
                                              Number(process.argv[5]), Number(process.argv[6])];
if (mode !== 'check' && mode !== 'bench') {
  console.error('usage: node serve_stream_latency.mjs check|bench LABEL PORT STREAMS TOKENS');
  process.exit(2);
}
const MIN_BEFORE_NEXT = 0.9;

// One streamed request; resolves { arrivals: [[arrival_ns, body_chunk]], status }.
function streamOnce(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, agent: false,
                               headers: { 'content-type': 'application/json' } }, (res) => {
      const arrivals = [];
      res.on('data', (c) => arrivals.push([process.hrtime.bigint(), c]));
      res.on('end', () => resolve({ status: res.statusCode, arrivals }));
      res.on('error', reject);
    });
    req.setTimeout(120000, () => req.destroy(new Error(`timeout: ${path}`)));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

// Splits the body into events (SSE: "data: ...\n\n"; NDJSON: one object a line), each with
// the arrival time of the read that completed it.
function events(arrivals, sse) {
  const out = [];
  let buf = '';
  const sep = sse ? '\n\n' : '\n';
  for (const [t, chunk] of arrivals) {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf(sep)) >= 0) {
      const e = buf.slice(0, i);
      buf = buf.slice(i + sep.length);
      if (sse && !e.startsWith('data: {')) continue;
      out.push({ t, json: JSON.parse(sse ? e.slice(6) : e) });
    }
  }
  check(buf === '', `${label}: the stream ends on an event boundary`);
  return out;
}

const lags = [];
const handoffs = [];  // engine_ns → write_ns: inside the server, for the report only
let reads = 0, stamped = 0, followed = 0, beforeNext = 0;
for (let s = 0; s < streams; s++) {
  const openai = s % 2 === 0;  // both dialects: SSE and NDJSON
  const r = openai
    ? await streamOnce('/v1/chat/completions', {
      messages: [{ role: 'user', content: `hello ${s}` }], stream: true, max_tokens: tokens,
      stream_options: { include_usage: true }, logit_bias: BAN_SPECIAL, reasoning_effort: 'none' })
    : await streamOnce('/api/chat', {
      messages: [{ role: 'user', content: `hello ${s}` }], stream: true, think: false,
      options: { num_predict: tokens } });
  checkEq(r.status, 200, `${label}: stream ${s} status`);
  reads += r.arrivals.length;
  const evs = events(r.arrivals, openai);
  // Stamped events that carry tokens (the last one before the end may carry none: it flushes
  // bytes held back for an incomplete UTF-8 character).
  const withStamp = evs.filter((e) => e.json.duet_debug && e.json.duet_debug.tokens > 0);
  const last = evs[evs.length - 1].json;
  const generated = openai ? last.usage.completion_tokens : last.eval_count;
  check(withStamp.every((e) => e.json.duet_debug.tokens === 1),
        `${label}: stream ${s}: every stamped event carries exactly one token`);
  checkEq(withStamp.length, generated, `${label}: stream ${s}: one event per generated token`);
  if (openai) checkEq(generated, tokens, `${label}: stream ${s} ran to max_tokens`);
  stamped += withStamp.length;
  withStamp.forEach((e, i) => {
    const emitted = BigInt(e.json.duet_debug.engine_ns);
    lags.push(Number(e.t - emitted) / 1e6);
    handoffs.push((e.json.duet_debug.write_ns - e.json.duet_debug.engine_ns) / 1e6);
    if (i + 1 < withStamp.length) {
      followed++;
      if (e.t < BigInt(withStamp[i + 1].json.duet_debug.engine_ns)) beforeNext++;
    }
  });
}

const quantiles = (xs) => {
  xs.sort((a, b) => a - b);
  const q = (p) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];
  return [q(0.5), q(0.99), xs[xs.length - 1]];
};
const [p50, p99, max] = quantiles(lags);
const [h50, h99, hmax] = quantiles(handoffs);
console.log(`${label}: emit→arrival over ${lags.length} tokens in ${streams} streams (${reads} reads): ` +
            `p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms, max ${max.toFixed(3)} ms ` +
            `(of which engine→socket write in the server: p50 ${h50.toFixed(3)}, p99 ${h99.toFixed(3)}, ` +
            `max ${hmax.toFixed(3)} ms)`);
console.log(`${label}: ${beforeNext} of ${followed} tokens arrived before the next one was sampled`);
check(lags.length >= streams * tokens / 2, `${label}: enough samples (${lags.length})`);
check(lags.every((l) => l >= 0), `${label}: no token arrives before it was emitted (same clock)`);
if (mode === 'check') {
  check(beforeNext >= MIN_BEFORE_NEXT * followed,
        `${label}: at least ${MIN_BEFORE_NEXT * 100} % of tokens arrive before the next is sampled ` +
        `(${beforeNext} of ${followed})`);
}
finish(`serve_stream_latency ${mode} (${label}, ${stamped} events)`);
