// Small HTTP helpers for the black-box server tests (node's own http and net modules).
import http from 'node:http';
import net from 'node:net';

export function baseUrl() {
  const port = process.env.DUET_PORT;
  if (!port) throw new Error('DUET_PORT is not set');
  return `http://127.0.0.1:${port}`;
}

// One request on a fresh connection. body: string | Buffer | undefined.
export function request({ method = 'GET', path = '/', headers = {}, body, port = process.env.DUET_PORT, timeoutMs = 20000 }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function postJson(path, obj, headers = {}) {
  return request({ method: 'POST', path, body: JSON.stringify(obj), headers: { 'content-type': 'application/json', ...headers } });
}

// Writes raw bytes on a socket and collects everything until the server closes it (or the
// timeout). Resolves { data, closedAfterMs, timedOut }.
export function rawExchange(bytes, { port = process.env.DUET_PORT, timeoutMs = 10000 } = {}) {
  return new Promise((resolve) => {
    const start = Date.now();
    const sock = net.connect(port, '127.0.0.1');
    const chunks = [];
    let done = false;
    const finish = (timedOut) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closedAfterMs: Date.now() - start, timedOut });
    };
    sock.on('connect', () => sock.write(bytes));
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', () => finish(false));
    sock.on('close', () => finish(false));
    sock.on('error', () => finish(false));
    setTimeout(() => finish(true), timeoutMs).unref();
  });
}

export function statusOf(raw) {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
  return m ? Number(m[1]) : null;
}

// Prometheus text → Map of "name{labels}" → number.
export function parseMetrics(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

// The value of the first series whose name (and optional label substring) matches.
export function metric(map, name, labelPart = '') {
  for (const [k, v] of map) {
    const base = k.split('{')[0];
    if (base === name && k.includes(labelPart)) return v;
  }
  return undefined;
}

export async function getMetrics(headers = {}) {
  const r = await request({ path: '/metrics', headers });
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return parseMetrics(r.body);
}

let failures = 0;
export function check(cond, what) {
  if (cond) return;
  failures++;
  console.error(`FAIL: ${what}`);
}
export function checkEq(actual, expected, what) {
  check(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}
export function finish(name) {
  if (failures > 0) {
    console.error(`${name}: ${failures} check(s) failed`);
    process.exit(1);
  }
  console.log(`${name}: all checks passed`);
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
