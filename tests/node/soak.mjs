// The soak: mixed routes of both dialects, streaming and not, with a fifth of the clients
// leaving mid-request, for --minutes, at --concurrency. Every --sample seconds it prints the
// requests so far, errors by kind, the server's resident memory (/proc/PID/status VmRSS) and
// its KV blocks in use. It fails if anything but a 4xx or a 503 comes back, if KV blocks are
// still held once the load stops, or if memory keeps growing: resident memory may grow to
// what it reached once the KV cache had filled (the first quarter of the run), then must
// stay flat (the last quarter's median within 5 % + 16 MiB of the second quarter's).
// Usage: node soak.mjs --minutes N --pid SERVER_PID [--concurrency 8] [--sample 10] [--seed S]
// (DUET_PORT names the server). scripts/soak starts a server and runs this.
import fs from 'node:fs';
import { check, finish, getMetrics, metric } from './lib/http_util.mjs';
import { send, waitIdle, quantile, rng } from './lib/server_watch.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const port = Number(process.env.DUET_PORT);
const minutes = arg('minutes', 1);
const pid = arg('pid', 0);
const concurrency = arg('concurrency', 8);
const sampleS = arg('sample', 10);
const seed = arg('seed', Date.now() % 1e9);
const R = rng(seed);

const rssMiB = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const words = ['alpha', 'beta', 'gamma', 'delta', 'why', 'prove', 'translate', 'hello', '中文', 'code'];
const prompt = () => Array.from({ length: 4 + R.int(60) }, () => R.pick(words)).join(' ');

function nextRequest() {
  const stream = R.next() < 0.6;
  const n = 16 + R.int(240);
  const think = R.pick([true, false, undefined]);
  return R.pick([
    () => ['/v1/chat/completions', { messages: [{ role: 'user', content: prompt() }], max_tokens: n, stream,
                                     logit_bias: BAN_SPECIAL, ...(think === undefined ? {} : { chat_template_kwargs: { enable_thinking: think } }) }],
    () => ['/v1/completions', { prompt: prompt(), max_tokens: n, stream }],
    () => ['/api/chat', { model: 'qwen3-demo', messages: [{ role: 'user', content: prompt() }], stream,
                          options: { num_predict: n }, ...(think === undefined ? {} : { think }) }],
    () => ['/api/generate', { model: 'qwen3-demo', prompt: prompt(), stream, options: { num_predict: n } }],
  ])();
}

const errors = new Map();
let requests = 0, completed = 0, left = 0;
const samples = [];  // { t, rss, kv }
const t0 = Date.now();
const deadline = t0 + minutes * 60000;

async function client() {
  while (Date.now() < deadline) {
    const [path, body] = nextRequest();
    const leaveAfterMs = R.next() < 0.2 ? 1 + R.int(100) : 0;  // a fifth of the clients leave
    const r = await send({ port, path, body: JSON.stringify(body), leaveAfterMs, timeoutMs: 120000 });
    requests++;
    if (r.left) left++;
    else if (r.status === 200) completed++;
    else {
      const kind = r.status ? `http_${r.status}` : r.error;
      errors.set(kind, (errors.get(kind) || 0) + 1);
    }
  }
}

async function sampler() {
  console.log('   t (s)  requests  completed  left  errors          RSS (MiB)  KV blocks');
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, sampleS * 1000));
    const m = await getMetrics().catch(() => null);
    const s = { t: (Date.now() - t0) / 1000, rss: rssMiB(), kv: m ? metric(m, 'duet:kv_blocks_used') : NaN };
    samples.push(s);
    console.log(`${s.t.toFixed(0).padStart(8)}  ${String(requests).padStart(8)}  ${String(completed).padStart(9)}  ` +
                `${String(left).padStart(4)}  ${JSON.stringify(Object.fromEntries(errors)).padEnd(14)}  ` +
                `${s.rss.toFixed(1).padStart(9)}  ${String(s.kv).padStart(9)}`);
  }
}

console.log(`soak: ${minutes} min, concurrency ${concurrency}, seed ${seed}, server pid ${pid}`);
await Promise.all([sampler(), ...Array.from({ length: concurrency }, client)]);
const idle = await waitIdle(60000);
const final = rssMiB();
console.log(`soak: ${requests} requests, ${completed} completed, ${left} left mid-request, errors ${JSON.stringify(Object.fromEntries(errors))}`);

// Errors: a 4xx never comes from these requests; 503 only under load (with Retry-After).
const serverErrors = [...errors].filter(([k]) => k !== 'http_503');
check(serverErrors.length === 0, `no errors but 503 (${JSON.stringify(serverErrors)})`);
check(idle.idle, 'no request or KV block held once the load stopped');
const quarter = (i) => samples.filter((s) => s.t >= (i * minutes * 60) / 4 && s.t < ((i + 1) * minutes * 60) / 4).map((s) => s.rss);
const q2 = quantile(quarter(1), 0.5), q4 = quantile(quarter(3), 0.5);
console.log(`soak: RSS median ${q2.toFixed(1)} MiB in the second quarter, ${q4.toFixed(1)} MiB in the last; ${final.toFixed(1)} MiB at rest`);
if (samples.length >= 8)
  check(q4 <= q2 * 1.05 + 16, `resident memory flat after the first quarter (${q2.toFixed(1)} → ${q4.toFixed(1)} MiB)`);
else
  console.log('soak: too short for the memory check (8 samples needed)');
finish('soak');
