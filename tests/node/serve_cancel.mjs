// A client that goes away cancels its generation at once, whatever the phase — queued,
// prefilling or decoding — and its KV blocks go back to the pool. The server runs a slower
// forged model (so that each phase lasts long enough to be caught) with --max-running 1
// (so a second request queues), --max-batch-tokens 32 (short steps) and
// --sse-keepalive-ms 100 (comments while prefilling).
import http from 'node:http';
import { Ollama } from 'ollama';
import { getMetrics, metric, check, checkEq, finish, sleep, request } from './lib/http_util.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const port = process.env.DUET_PORT;

// Starts a request and returns { req, events, text, waitFor(pred) }; nothing is read beyond
// what arrives.
function open(path, body) {
  const state = { text: '', status: 0, ended: false };
  const waiters = [];
  const notify = () => { for (const w of [...waiters]) if (w.pred(state)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); } };
  const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, agent: false,
                             headers: { 'content-type': 'application/json' } }, (res) => {
    state.status = res.statusCode;
    res.on('data', (c) => { state.text += c.toString('utf8'); notify(); });
    res.on('end', () => { state.ended = true; notify(); });
    res.on('error', () => {});
    notify();
  });
  req.on('error', () => {});
  req.end(JSON.stringify(body));
  state.req = req;
  state.waitFor = (pred, ms = 20000) => new Promise((resolve, reject) => {
    if (pred(state)) return resolve();
    waiters.push({ pred, resolve });
    setTimeout(() => reject(new Error('timed out waiting')), ms).unref();
  });
  return state;
}

// The waits are generous (a loaded machine, the sanitizer build): what tells a server that
// does not cancel apart is structure — the cancel is counted in its phase, the queued request
// is cancelled while the one ahead of it still streams, and the long generation stops short
// of its max_tokens — not how many milliseconds the count took. Each wait's time is printed.
async function waitMetrics(pred, what, ms = 20000) {
  const t0 = Date.now();
  let m;
  while (Date.now() - t0 < ms) {
    m = await getMetrics();
    if (pred(m)) return Date.now() - t0;
    await sleep(25);
  }
  check(false, `${what} (waited ${ms} ms)`);
  return -1;
}

const cancelled = (m, phase) => metric(m, 'duet:requests_cancelled_total', `phase="${phase}"`);
const idle = (m) => metric(m, 'vllm:num_requests_running') === 0 && metric(m, 'vllm:num_requests_waiting') === 0 &&
                    metric(m, 'duet:kv_blocks_used') === 0;
const longDecode = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3000, stream: true,
                     logit_bias: BAN_SPECIAL, reasoning_effort: 'none' };

// Decode and queued: A decodes; B waits behind it (one running slot); B's client leaves,
// then A's.
{
  const before = await getMetrics();
  checkEq(cancelled(before, 'queued') + cancelled(before, 'prefill') + cancelled(before, 'decode'), 0, 'no cancellations yet');
  const a = open('/v1/chat/completions', longDecode);
  await a.waitFor((s) => (s.text.match(/"content":"[^"]/g) || []).length >= 3);
  const b = open('/v1/chat/completions', { ...longDecode, max_tokens: 5 });
  await waitMetrics((m) => metric(m, 'vllm:num_requests_waiting') === 1 && metric(m, 'vllm:num_requests_running') === 1,
                    'B waits while A runs');
  check(!/"content":"[^"]/.test(b.text), 'B has no tokens while queued');
  b.req.destroy();
  const qms = await waitMetrics((m) => cancelled(m, 'queued') === 1, 'queued cancel counted');
  console.log(`queued cancel counted after ${qms} ms`);
  check(!a.ended, 'A still streaming');
  a.req.destroy();
  const dms = await waitMetrics((m) => cancelled(m, 'decode') === 1, 'decode cancel counted');
  console.log(`decode cancel counted after ${dms} ms`);
  await waitMetrics(idle, 'KV blocks back to idle after queued + decode cancels');
  const m = await getMetrics();
  checkEq(metric(m, 'duet:engine_requests_cancelled_total'), 2, 'the engine cancelled both');
  check(metric(m, 'vllm:generation_tokens_total') < 3000, 'A did not run to its max_tokens');
}

// Prefill: a long prompt; keep-alive comments arrive while it is computed; leave then.
{
  const c = open('/v1/chat/completions', { ...longDecode, messages: [{ role: 'user', content: 'lorem ipsum '.repeat(60) }] });
  await c.waitFor((s) => s.text.includes(': keep-alive\n\n'));
  check(!/"content":"[^"]/.test(c.text), 'still prefilling when the keep-alive comment came');
  await waitMetrics((m) => metric(m, 'vllm:num_requests_running') === 1, 'the prompt is being computed');
  check(!/"content":"[^"]/.test(c.text), 'still prefilling');
  c.req.destroy();
  const pms = await waitMetrics((m) => cancelled(m, 'prefill') === 1, 'prefill cancel counted');
  console.log(`prefill cancel counted after ${pms} ms`);
  await waitMetrics(idle, 'KV blocks back to idle after a prefill cancel');
}

// Ollama's NDJSON has no comments: its keep-alive is an object with empty content and
// done:false, which the official client yields as an empty part (no warning, no error).
{
  const ollama = new Ollama({ host: `http://127.0.0.1:${port}` });
  const warned = [];
  const warn = console.warn;
  console.warn = (...a) => warned.push(a.join(' '));
  const stream = await ollama.chat({ model: 'slow', stream: true, options: { num_predict: 3000 },
                                     messages: [{ role: 'user', content: 'dolor sit amet '.repeat(48) }] });
  const first = (await stream[Symbol.asyncIterator]().next()).value;
  console.warn = warn;
  checkEq(first?.done, false, 'ollama keep-alive: done false');
  checkEq(first?.message?.content, '', 'ollama keep-alive: empty content');
  checkEq(first?.message?.role, 'assistant', 'ollama keep-alive: an assistant message');
  checkEq(warned.length, 0, `ollama client parsed it without a warning (${warned.join('; ')})`);
  await waitMetrics((m) => metric(m, 'vllm:num_requests_running') === 1, 'the Ollama prompt is being computed');
  stream.abort();
  await waitMetrics((m) => cancelled(m, 'prefill') === 2, 'Ollama prefill cancel counted');
  await waitMetrics(idle, 'KV blocks back to idle after the Ollama prefill cancel');
}

// Non-streaming requests are cancelled too when their client leaves.
{
  const before = await getMetrics();
  const total = (m) => cancelled(m, 'queued') + cancelled(m, 'prefill') + cancelled(m, 'decode');
  const d = open('/v1/chat/completions', { ...longDecode, stream: false });
  await waitMetrics((m) => metric(m, 'vllm:num_requests_running') === 1, 'non-streaming request running');
  await sleep(200);
  d.req.destroy();
  await waitMetrics((m) => total(m) === total(before) + 1, 'non-streaming cancel counted');
  await waitMetrics(idle, 'KV blocks back to idle after a non-streaming cancel');
  // Ollama's stream too.
  const o = open('/api/chat', { model: 'slow', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 3000 } });
  await o.waitFor((s) => (s.text.match(/\n/g) || []).length >= 3);
  o.req.destroy();
  await waitMetrics((m) => total(m) === total(before) + 2, 'Ollama stream cancel counted');
  await waitMetrics(idle, 'KV blocks back to idle after an Ollama cancel');

  // With more than the 64 KB that the server keeps of pipelined requests sent behind it, the
  // hang-up is still noticed: a non-streaming request writes nothing until its end, so the
  // watch on the socket is all that can see the client leave.
  const net = await import('node:net');
  const body = JSON.stringify({ ...longDecode, stream: false });
  const sock = net.connect(port, '127.0.0.1');
  sock.on('error', () => {});
  await new Promise((r) => sock.on('connect', r));
  sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await waitMetrics((m) => metric(m, 'vllm:num_requests_running') === 1, 'pipelining: the request runs');
  const pipelined = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(4000);  // ~170 KB
  await new Promise((r) => sock.write(pipelined, r));
  await sleep(200);
  sock.destroy();
  await waitMetrics((m) => total(m) === total(before) + 3, 'cancel counted with 170 KB pipelined behind the request');
  await waitMetrics(idle, 'KV blocks back to idle after the pipelined cancel');
}

checkEq((await request({ path: '/health' })).status, 200, 'server alive');
finish('serve_cancel');
