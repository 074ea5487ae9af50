// RFC 9112's framing rules at the real server: Transfer-Encoding other than "chunked" alone,
// Host given twice or not at all, absolute-form targets. A request whose framing a proxy in
// front could read differently (request smuggling) is refused and the connection closed.
// The server is bound to loopback (so Host is checked against DNS rebinding).
import { rawExchange, statusOf, check, checkEq, finish } from './lib/http_util.mjs';

const port = process.env.DUET_PORT;
const CHAT = '/v1/chat/completions';
const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
const post = (headers, payload = chunked, version = '1.1') =>
  rawExchange(`POST ${CHAT} HTTP/${version}\r\n${headers}Content-Type: application/json\r\n\r\n${payload}`);

const cases = [
  ['Transfer-Encoding: chunked (the one accepted)', await post('Host: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n'), 200],
  ['Transfer-Encoding: gzip, chunked (a coding not decoded)', await post('Host: localhost\r\nTransfer-Encoding: gzip, chunked\r\n'), 501],
  ['Transfer-Encoding: gzip then chunked in two fields', await post('Host: localhost\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n'), 501],
  ['Transfer-Encoding: chunked, gzip (chunked not last)', await post('Host: localhost\r\nTransfer-Encoding: chunked, gzip\r\n'), 400],
  ['Transfer-Encoding: gzip (no chunked)', await post('Host: localhost\r\nTransfer-Encoding: gzip\r\n', body), 400],
  ['Transfer-Encoding: chunked, chunked', await post('Host: localhost\r\nTransfer-Encoding: chunked, chunked\r\n'), 400],
  ['Transfer-Encoding and Content-Length', await post(`Host: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: ${chunked.length}\r\n`), 400],
  ['Transfer-Encoding in HTTP/1.0', await post('Host: localhost\r\nTransfer-Encoding: chunked\r\n', chunked, '1.0'), 400],
  ['two Host headers', await rawExchange('GET /health HTTP/1.1\r\nHost: localhost\r\nHost: attacker.test\r\n\r\n'), 400],
  ['two Host headers, the same', await rawExchange('GET /health HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n'), 400],
  ['HTTP/1.1 without Host', await rawExchange('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'), 400],
  ['HTTP/1.0 without Host', await rawExchange('GET /health HTTP/1.0\r\n\r\n'), 200],
  ['absolute-form target', await rawExchange(`GET http://localhost:${port}/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), 200],
  ['absolute-form target with a query, no Host', await rawExchange(`GET http://127.0.0.1:${port}/v1/models?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n`), 200],
  ['absolute-form target names a foreign host', await rawExchange(`GET http://attacker.test/v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), 403],
  ['absolute-form authority wins over Host', await rawExchange(`GET http://localhost/v1/models HTTP/1.1\r\nHost: attacker.test\r\nConnection: close\r\n\r\n`), 200],
  ['absolute-form with userinfo', await rawExchange(`GET http://a@localhost/health HTTP/1.1\r\nHost: localhost\r\n\r\n`), 400],
  ['a target that is neither form', await rawExchange('GET health HTTP/1.1\r\nHost: localhost\r\n\r\n'), 400],
];
for (const [name, r, want] of cases) {
  checkEq(statusOf(r.data), want, name);
  check(!r.timedOut, `${name}: answered and closed`);
  if (want >= 400) {
    check(/\r\nConnection: close\r\n/i.test(r.data), `${name}: the connection is closed`);
    check(/"error"/.test(r.data), `${name}: an error body`);
  }
}
finish('serve_http_framing');
