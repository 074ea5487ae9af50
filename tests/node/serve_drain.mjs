// SIGTERM with a stream in flight: readiness turns 503 at once, new generations get 503,
// the stream in flight finishes (mode "finish") — or, when the drain window is too short
// for it (mode "deadline"), ends cleanly with finish_reason "abort". The shell script checks
// that the server then exits with status 0.
import http from 'node:http';
import net from 'node:net';
import { request, check, checkEq, finish, sleep } from './lib/http_util.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const mode = process.argv[2];
const pid = Number(process.env.DUET_PID);

// "stalled": a client that stops reading in the middle of a big stream; the server's writes
// to it cannot complete. At SIGTERM the server must still stop (status 0, checked by the
// script, with LeakSanitizer on in the ASan build: the stalled exchange must be freed too).
if (mode === 'stalled') {
  const sock = net.connect(Number(process.env.DUET_PORT), '127.0.0.1');
  let got = 0;
  await new Promise((resolve) => sock.on('connect', resolve));
  const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4000, stream: true,
                                logprobs: true, top_logprobs: 20, logit_bias: BAN_SPECIAL, reasoning_effort: 'none' });
  sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
             `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  await new Promise((resolve) => sock.once('data', (c) => { got += c.length; resolve(); }));
  sock.pause();  // from here on nothing is read: the socket buffers fill up
  await sleep(1000);
  check(got > 0, 'the stream began');
  process.kill(pid, 'SIGTERM');
  // Keep the socket open (unread) until the server has gone.
  for (let i = 0; i < 400; i++) {
    try { process.kill(pid, 0); } catch { break; }
    await sleep(25);
  }
  sock.destroy();
  finish('serve_drain (stalled)');
  process.exit(0);
}
const maxTokens = mode === 'finish' ? 120 : 3000;

// "longstep": SIGTERM while one engine step computes a whole long prompt (--max-batch-tokens
// above its length), with a drain window far shorter than that step. The request is still in
// the engine when the drain and its grace are over; it must still end properly for the
// client (finish_reason "abort", [DONE]) and be freed before exit (LeakSanitizer in the ASan
// build, where this step takes seconds).
if (mode === 'longstep') {
  let text = '';
  const ended = new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: process.env.DUET_PORT, method: 'POST', agent: false,
                               path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', (c) => { text += c.toString('utf8'); });
      res.on('end', () => resolve('end'));
      res.on('error', () => resolve('error'));
    });
    req.on('error', () => resolve('error'));
    req.end(JSON.stringify({ messages: [{ role: 'user', content: 'lorem ipsum '.repeat(160) }], max_tokens: 50,
                             stream: true, logit_bias: BAN_SPECIAL, reasoning_effort: 'none' }));
  });
  for (let i = 0; i < 400 && !text.includes('"role":"assistant"'); i++) await sleep(10);
  check(text.includes('"role":"assistant"'), 'the stream began (its prompt is being computed)');
  process.kill(pid, 'SIGTERM');
  checkEq(await ended, 'end', 'the stream ended cleanly');
  check(text.includes('"finish_reason":"abort"'), 'ended as "abort"');
  check(text.trimEnd().endsWith('data: [DONE]'), 'the stream ends with [DONE]');
  finish('serve_drain (longstep)');
  process.exit(0);
}

const events = [];
let sawContent;
const contentSeen = new Promise((r) => { sawContent = r; });
const done = new Promise((resolve) => {
  const req = http.request({ host: '127.0.0.1', port: process.env.DUET_PORT, method: 'POST', agent: false,
                             path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (res) => {
    let buf = '';
    res.on('data', (c) => {
      buf += c.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const e = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (e.startsWith('data: ')) events.push(e.slice(6));
        if (/"content":"[^"]/.test(e)) sawContent();
      }
    });
    res.on('end', () => resolve('end'));
    res.on('error', () => resolve('error'));
  });
  req.on('error', () => resolve('error'));
  req.end(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens, stream: true,
                           stream_options: { include_usage: true }, logit_bias: BAN_SPECIAL, reasoning_effort: 'none' }));
});

await contentSeen;
process.kill(pid, 'SIGTERM');
const t0 = Date.now();
let ready = null;
for (let i = 0; i < 100 && ready !== 503; i++) {
  ready = (await request({ path: '/ready' })).status;
  if (ready !== 503) await sleep(10);
}
checkEq(ready, 503, '/ready is 503 while draining');
const late = await request({ method: 'POST', path: '/v1/chat/completions',
                             body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
checkEq(late.status, 503, 'new generations are refused while draining');
check(Number(late.headers['retry-after']) >= 1, 'with Retry-After');
checkEq((await request({ path: '/health' })).status, 200, '/health still 200 while draining');

checkEq(await done, 'end', 'the stream ended cleanly');
checkEq(events[events.length - 1], '[DONE]', 'the stream ends with [DONE]');
const chunks = events.filter((e) => e.startsWith('{')).map((e) => JSON.parse(e));
const fin = chunks.find((c) => c.choices.length && c.choices[0].finish_reason);
const usage = chunks[chunks.length - 1].usage;
if (mode === 'finish') {
  checkEq(fin.choices[0].finish_reason, 'length', 'the stream in flight ran to its end');
  checkEq(usage.completion_tokens, maxTokens, 'every token was generated');
} else {
  checkEq(fin.choices[0].finish_reason, 'abort', 'the drain deadline ended the stream');
  check(usage.completion_tokens < maxTokens, 'it was cut short');
  const took = Date.now() - t0;
  // A server that ignored the window would run to max_tokens (checked above); 20 s only
  // catches one that ended the stream much later than the window on any machine.
  check(took < 20000, `ended soon after the 1 s drain window (${took} ms)`);
}
finish(`serve_drain (${mode})`);
