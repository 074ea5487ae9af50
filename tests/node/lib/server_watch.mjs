// What the HTTP fuzzer and the soak share: one request with a deadline (a client that may
// leave early), a /health poller that records how long each answer took, and the server's
// idle check (nothing running or waiting, every KV block back).
import http from 'node:http';
import { getMetrics, metric, sleep } from './http_util.mjs';

// Sends one request; resolves { status, body, headers, error, left } where `left` says the
// client went away on purpose after `leaveAfterMs` (a disconnect mid-request).
export function send({ port, method = 'POST', path, body, headers = {}, leaveAfterMs = 0, timeoutMs = 60000 }) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r) => { if (!done) { done = true; resolve(r); } };
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false,
                               headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => finish({ status: res.statusCode, error: e.message }));
    });
    req.on('error', (e) => finish({ status: 0, error: e.code || e.message }));
    req.setTimeout(timeoutMs, () => { req.destroy(); finish({ status: 0, error: 'timeout' }); });
    if (leaveAfterMs > 0) setTimeout(() => { req.destroy(); finish({ status: 0, left: true }); }, leaveAfterMs).unref();
    req.end(body);
  });
}

// Polls GET /health every `everyMs` until stop(); each answer's time is kept.
export function watchHealth(port, everyMs = 50) {
  const times = [];
  const failures = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = process.hrtime.bigint();
      const r = await send({ port, method: 'GET', path: '/health', timeoutMs: 30000 });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status === 200) times.push(ms); else failures.push(r.error || `status ${r.status}`);
      await sleep(everyMs);
    }
  })();
  return {
    times, failures,
    async stop() { running = false; await loop; },
  };
}

// Waits until the server holds no request and no KV block; resolves the last metrics read,
// with `idle` telling whether it got there within `ms`.
export async function waitIdle(ms = 30000) {
  const t0 = Date.now();
  let m;
  for (;;) {
    try {
      m = await getMetrics();  // DUET_PORT
    } catch (e) {
      return { idle: false, error: e.message };  // the server is gone
    }
    const idle = metric(m, 'vllm:num_requests_running') === 0 && metric(m, 'vllm:num_requests_waiting') === 0 &&
                 metric(m, 'duet:kv_blocks_used') === 0;
    if (idle || Date.now() - t0 > ms) return { idle, metrics: m };
    await sleep(100);
  }
}

export function quantile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
}

// A small seeded generator (mulberry32), so that a run can be repeated from its seed.
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}
