// SIGTERM with a stream in flight: readiness turns 503 at once, new generations get 503,
// the stream in flight finishes (mode "finish") — or, when the drain window is too short
// for it (mode "deadline"), ends cleanly with finish_reason "abort". The shell script checks
// that the server then exits with status 0.
import http from 'node:http';
import { request, check, checkEq, finish, sleep } from './lib/http_util.mjs';
import { BAN_SPECIAL } from './lib/demo_model.mjs';

const mode = process.argv[2];
const pid = Number(process.env.DUET_PID);
const maxTokens = mode === 'finish' ? 120 : 3000;

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
  check(took < 6000, `ended soon after the 1 s drain window (${took} ms)`);
}
finish(`serve_drain (${mode})`);
