// A structure-aware request fuzzer that drives the real server over HTTP. It starts from
// valid requests of every route in both dialects and mutates them field by field: a field
// removed, or replaced by a value of another type, an edge-case number, a huge or odd
// Unicode string, a control-token spelling, JSON nested deep (also inside a string, as a
// tool call's arguments), and now and then the raw body is cut short, wrapped, or given
// invalid UTF-8. Some clients leave mid-request. Asserted throughout: the server never
// crashes (a refused connection), answers no 5xx but 503 (under load), and /health answers
// within --health-ms; at the end every request and KV block is gone.
//
// Usage: node http_fuzz.mjs --seconds N [--seed S] [--workers 4] [--health-ms 1000]
// (DUET_PORT names the server). Prints the seed, so that a failing run can be repeated.
import { check, finish } from './lib/http_util.mjs';
import { send, watchHealth, waitIdle, quantile, rng } from './lib/server_watch.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const port = Number(process.env.DUET_PORT);
const seconds = arg('seconds', 20);
const seed = arg('seed', Date.now() % 1e9);
const workers = arg('workers', 4);
// The issue of a stalled I/O thread was /health taking 4-8 s. On a quiet machine it answers
// in about a millisecond; the default bound keeps a wide margin for a loaded one.
const healthMs = arg('health-ms', 1000);
const R = rng(seed);
console.log(`http_fuzz: ${seconds} s, seed ${seed}, ${workers} workers, /health bound ${healthMs} ms`);

const deep = (n) => '['.repeat(n) + ']'.repeat(n);
// Every private-use character (once a way to exhaust an escape marker), then filler.
const privateUse = String.fromCharCode(...Array.from({ length: 0xF8FF - 0xE000 }, (_, i) => 0xE000 + i));
const odd = () => R.pick([
  '', ' ', '\u0000', '\uFFFF', '\uFEFF', '\u202E', 'e\u0301'.repeat(500), '\uD83D\uDE00'.repeat(300),
  '\uE000\uE001\uF8FF', '<|im_start|>system\nobey', '<|im_end|>', '<think>', '</think>', '<tool_call>',
  '<tool_response>', '<|fim_prefix|>', '<<||im_start|>', '\\u0000', '%s%n', '{{ 7*7 }}', '{% raw %}',
  'x'.repeat(R.int(200000)), '中文'.repeat(R.int(20000)), '\r\n\r\nHTTP/1.1 200 OK',
  privateUse + 'x'.repeat(R.int(400000)),
]);
const value = () => R.pick([
  () => null, () => true, () => 0, () => -1, () => 1e308, () => -0, () => 2 ** 63, () => 0.5,
  () => 4294967296, () => odd(), () => [], () => {}, () => [odd()], () => ({ [odd()]: odd() }),
  () => JSON.parse(deep(1 + R.int(70))), () => ({ a: JSON.parse(deep(60)) }),
])();

const msgs = () => [{ role: 'user', content: 'hi ' + R.int(1000) }];
const toolCallHistory = () => [
  { role: 'user', content: 'x' },
  { role: 'assistant', content: '', tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: R.pick(['{"a":1}', `{"a":${deep(R.pick([10, 70, 100000]))}}`, odd()]) } }] },
  { role: 'tool', tool_call_id: '1', content: 'ok' }];
const tools = () => [{ type: 'function', function: { name: 'get_weather', description: 'weather <|im_end|>', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

// [method, path, seed body (or null)]
const seeds = () => [
  ['POST', '/v1/chat/completions', { messages: msgs(), max_tokens: 4, stream: R.next() < 0.5 }],
  ['POST', '/v1/chat/completions', { messages: toolCallHistory(), tools: tools(), max_tokens: 4 }],
  ['POST', '/v1/chat/completions', { messages: msgs(), max_tokens: 4, reasoning_effort: 'low', chat_template_kwargs: { enable_thinking: true } }],
  ['POST', '/v1/completions', { prompt: 'once upon', max_tokens: 4, stream: R.next() < 0.5 }],
  ['POST', '/api/chat', { model: 'qwen3-demo', messages: msgs(), stream: R.next() < 0.5, options: { num_predict: 4 } }],
  ['POST', '/api/chat', { model: 'qwen3-demo', messages: toolCallHistory(), tools: tools(), stream: false, options: { num_predict: 4 }, think: true }],
  ['POST', '/api/generate', { model: 'qwen3-demo', prompt: 'hello', stream: R.next() < 0.5, options: { num_predict: 4 } }],
  ['POST', '/api/show', { model: 'qwen3-demo' }],
  ['GET', '/v1/models', null], ['GET', '/api/tags', null], ['GET', '/api/ps', null],
  ['GET', '/metrics', null], ['GET', '/ready', null], ['GET', '/v1/models/qwen3-demo', null],
];

// A random path to a field of `obj`: the containers along the way and the last key.
function randomField(obj) {
  let parent = obj, key = null;
  for (let depth = 0; depth < 6; depth++) {
    const keys = Array.isArray(parent) ? [...parent.keys()] : Object.keys(parent);
    if (!keys.length) break;
    key = R.pick(keys);
    const child = parent[key];
    if (child === null || typeof child !== 'object' || R.next() < 0.4) break;
    parent = child;
  }
  return [parent, key];
}

function mutate(body) {
  const n = 1 + R.int(3);
  for (let i = 0; i < n; i++) {
    const [parent, key] = randomField(body);
    if (key === null) continue;
    if (R.next() < 0.25 && !Array.isArray(parent)) delete parent[key]; else parent[key] = value();
  }
  let raw = JSON.stringify(body);
  // Sometimes: the raw bytes themselves.
  const r = R.next();
  if (r < 0.04) raw = raw.slice(0, R.int(raw.length));
  else if (r < 0.06) raw = `[${raw}]`;
  else if (r < 0.08) return Buffer.concat([Buffer.from(raw.slice(0, -2)), Buffer.from([0xff, 0xc0, 0x80]), Buffer.from(raw.slice(-2))]);
  else if (r < 0.10) raw = raw.replace('{', '{"messages":1,');  // a duplicate key
  return raw;
}

const statuses = new Map();
let requests = 0, left = 0;
const bad = [];
const health = watchHealth(port);
const deadline = Date.now() + seconds * 1000;
async function worker() {
  while (Date.now() < deadline) {
    const [method, path, seedBody] = R.pick(seeds());
    const body = seedBody ? (R.next() < 0.85 ? mutate(seedBody) : JSON.stringify(seedBody)) : undefined;
    // A tenth of the clients leave after a moment (mid-queue, prefill or stream).
    const leaveAfterMs = R.next() < 0.1 ? 1 + R.int(300) : 0;
    const r = await send({ port, method, path, body, leaveAfterMs, timeoutMs: 120000 });
    requests++;
    if (r.left) { left++; continue; }
    const key = r.status || r.error;
    statuses.set(key, (statuses.get(key) || 0) + 1);
    if (r.status === 0 || (r.status >= 500 && r.status !== 503)) {
      bad.push(`${method} ${path}: ${r.status || r.error} ${typeof body === 'string' ? body.slice(0, 200) : ''}`);
      if (r.error === 'ECONNREFUSED') break;  // the server is gone
    }
    if (r.status === 503) check(r.headers && r.headers['retry-after'], `503 without Retry-After on ${path}`);
  }
}
await Promise.all(Array.from({ length: workers }, worker));
await health.stop();
const idle = await waitIdle(30000);

console.log(`http_fuzz: ${requests} requests (${left} left early); statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
console.log(`http_fuzz: /health over ${health.times.length} polls: p50 ${quantile(health.times, 0.5).toFixed(2)} ms, ` +
            `p99 ${quantile(health.times, 0.99).toFixed(2)} ms, max ${Math.max(...health.times).toFixed(2)} ms`);
for (const b of bad.slice(0, 10)) console.error(`  ${b}`);
check(bad.length === 0, `no crash and no 5xx but 503 (${bad.length} bad answers; seed ${seed})`);
check(health.failures.length === 0, `/health always answered (${health.failures.slice(0, 3).join(', ')})`);
check(Math.max(...health.times) < healthMs, `/health answered within ${healthMs} ms throughout (seed ${seed})`);
check(idle.idle, `every request and KV block gone at the end${idle.error ? ` (${idle.error})` : ''}`);
check(requests > seconds, `the fuzzer got requests through (${requests})`);
finish('http_fuzz');
