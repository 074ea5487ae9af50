// The bounded queue: with --max-running 1 --max-queue 0, a second request while one runs
// is refused at once with 429, Retry-After and the dialect's error body — never left to wait.
import http from 'node:http';
import { request, getMetrics, metric, check, checkEq, finish, sleep } from './lib/http_util.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const port = process.env.DUET_PORT;
let firstChunk;
const started = new Promise((r) => { firstChunk = r; });
const a = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false,
                         headers: { 'content-type': 'application/json' } }, (res) => {
  res.on('data', () => firstChunk());
  res.on('error', () => {});
});
a.on('error', () => {});
a.end(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3000, stream: true,
                       logit_bias: BAN_SPECIAL, reasoning_effort: 'none' }));
await started;

// At once, by structure: a server that queued B instead would answer 200 after A's 3000
// tokens, not 429.
const b = await request({ method: 'POST', path: '/v1/chat/completions',
                          body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
checkEq(b.status, 429, 'OpenAI: 429 when the queue is full');
check(Number(b.headers['retry-after']) >= 1, 'Retry-After');
checkEq(JSON.parse(b.body).error.type, 'rate_limit_error', 'OpenAI 429 body');
const o = await request({ method: 'POST', path: '/api/generate', body: JSON.stringify({ prompt: 'hi', stream: false }) });
checkEq(o.status, 429, 'Ollama: 429 when the queue is full');
check(typeof JSON.parse(o.body).error === 'string', 'Ollama 429 body');
const m = await getMetrics();
checkEq(metric(m, 'duet:requests_rejected_total', 'reason="queue_full"'), 2, 'rejections counted');
checkEq((await request({ path: '/health' })).status, 200, '/health answers while saturated');
checkEq((await request({ path: '/v1/models' })).status, 200, 'listings answer while saturated');

a.destroy();
for (let i = 0; i < 100; i++) {
  const mm = await getMetrics();
  if (metric(mm, 'vllm:request_success_total', 'finished_reason="abort"') === 1) break;
  await sleep(20);
}
const c = await request({ method: 'POST', path: '/v1/chat/completions',
                          body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
checkEq(c.status, 200, 'room again once the first request is gone');
finish('serve_queue');
