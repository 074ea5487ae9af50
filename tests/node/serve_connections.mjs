// Connections that do nothing cannot lock clients out. The server runs with
// --max-connections-per-client 8 --first-byte-timeout 1 (tests/cli/serve_http.sh):
//   - a new connection that sends nothing is closed after the first-byte timeout;
//   - over one address's limit, that address's longest-idle connection makes room;
//   - over it with every connection busy, the new one may still ask /health and /ready, and
//     gets 503 with Retry-After for anything else; another address is served as usual.
import net from 'node:net';
import { rawExchange, statusOf, check, checkEq, finish, sleep } from './lib/http_util.mjs';

const port = Number(process.env.DUET_PORT);
const LIMIT = 8;

// A socket that connects and sends `bytes` (maybe nothing); records when the server closes it.
function hold(bytes = '', localAddress = '127.0.0.1') {
  return new Promise((resolve) => {
    const s = { closed: false, sock: net.connect({ port, host: '127.0.0.1', localAddress }) };
    s.sock.on('connect', () => {
      if (bytes) s.sock.write(bytes);
      resolve(s);
    });
    s.sock.on('data', () => {});
    s.sock.on('close', () => { s.closed = true; });
    s.sock.on('error', () => {});
  });
}
async function waitFor(pred, ms) {
  const t0 = Date.now();
  while (!pred() && Date.now() - t0 < ms) await sleep(20);
  return pred();
}

// 1. Silent connections are closed after the first-byte timeout (1 s here; the wait is
// generous for a loaded machine, and far below the 30 s read timeout they had before).
{
  const silent = await Promise.all([hold(), hold()]);
  check(await waitFor(() => silent.every((s) => s.closed), 15000), 'silent connections closed by the server');
}

// 2. Idle connections of one address make room for a new one of that address.
{
  const idle = [];
  for (let i = 0; i < LIMIT; i++) idle.push(await hold());
  const r = await rawExchange('GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  checkEq(statusOf(r.data), 200, 'a new connection is served past the limit when others idle');
  check(await waitFor(() => idle.some((s) => s.closed), 5000), 'an idle connection was closed to make room');
  idle.forEach((s) => s.sock.destroy());
  await sleep(100);
}

// 3. Every connection of the address busy (a request whose body is still coming): only
// probes are answered for it; another address is not affected.
{
  const partial = `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`;
  const busy = [];
  for (let i = 0; i < LIMIT; i++) busy.push(await hold(partial));
  await sleep(200);  // let the server read the heads
  const health = await rawExchange('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  checkEq(statusOf(health.data), 200, '/health answers over the limit');
  check(/\r\nConnection: close\r\n/i.test(health.data), 'and closes that connection');
  const ready = await rawExchange('GET /ready HTTP/1.1\r\nHost: localhost\r\n\r\n');
  checkEq(statusOf(ready.data), 200, '/ready answers over the limit');
  const chat = await rawExchange(`POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
  checkEq(statusOf(chat.data), 503, 'other requests over the limit: 503');
  check(/\r\nRetry-After: \d+\r\n/i.test(chat.data), '503 with Retry-After');
  check(/"error"/.test(chat.data), '503 with an error body');
  const ollama = await rawExchange('GET /api/tags HTTP/1.1\r\nHost: localhost\r\n\r\n');
  checkEq(statusOf(ollama.data), 503, 'Ollama route over the limit: 503');
  check(/\{"error":"[^"]+"\}/.test(ollama.data), 'in Ollama\'s error shape');
  const other = await new Promise((resolve) => {
    const chunks = [];
    const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () =>
      s.write('GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
    s.on('data', (c) => chunks.push(c));
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    s.on('error', () => resolve(''));
  });
  checkEq(statusOf(other), 200, 'another address is served');
  check(busy.every((s) => !s.closed), 'busy connections are not taken');
  busy.forEach((s) => s.sock.destroy());
}
finish('serve_connections');
