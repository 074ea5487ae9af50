// The chat page's pure modules under node: the SSE parser (every split of a stream gives the
// same events), the markdown renderer (raw HTML stays text; tables, code, math), the
// streaming boundary that decides which part of a reply is re-rendered per frame, and the API
// key handling of a keyed server (ask on 401, keep, send, ask again when refused).
import { SseParser } from '../../web/src/sse.js';
import { renderMarkdown, stableBoundary } from '../../web/src/markdown.js';
import { KeyedFetch, KEY_STORE } from '../../web/src/auth.js';
import { check, checkEq, finish } from './lib/http_util.mjs';

const stream = 'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":"x\\ny"}\r\n\r\nevent: foo\ndata: line1\ndata: line2\n\ndata:[DONE]\n\n';
const expected = ['{"a":1}', '{"b":"x\\ny"}', 'line1\nline2', '[DONE]'];
for (let i = 0; i <= stream.length; i++) {
  for (let j = i; j <= stream.length; j += 7) {
    const p = new SseParser();
    const got = [...p.push(stream.slice(0, i)), ...p.push(stream.slice(i, j)), ...p.push(stream.slice(j))];
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      checkEq(JSON.stringify(got), JSON.stringify(expected), `SSE split at ${i},${j}`);
      break;
    }
  }
}
const partial = new SseParser();
checkEq(partial.push('data: {"a"').length, 0, 'no event before its blank line');
checkEq(JSON.stringify(partial.push(':1}\n\n')), '["{\\"a\\":1}"]', 'the event once complete');

const html = renderMarkdown('<script>alert(1)</script> <img src=x onerror=alert(1)>');
check(!html.includes('<script') && !html.includes('<img'), `raw HTML is escaped: ${html}`);
check(renderMarkdown('| a | b |\n|---|---|\n| 1 | 2 |\n').includes('<table>'), 'tables');
const code = renderMarkdown('```cpp\nint main() { return 0; }\n```\n');
check(code.includes('hljs-keyword') && code.includes('class="copy"'), 'highlighted code with a copy button');
check(renderMarkdown('$x^2$ and $$\\frac{1}{2}$$').includes('class="katex"'), 'math');
check(!renderMarkdown('[x](javascript:alert(1))').includes('href="javascript:'), 'no javascript: links');
check(renderMarkdown('<https://example.com>').includes('rel="noopener noreferrer"'), 'links open apart');

checkEq(stableBoundary('one\n\ntwo'), 5, 'boundary after a blank line');
checkEq(stableBoundary('one\n\n```\na\n\nb\n'), 5, 'no boundary inside an open fence');
checkEq(stableBoundary('one\n\n```\na\n\nb\n```\n\nc'), 19, 'boundary after a closed fence');
checkEq(stableBoundary('$$\nx\n\ny\n'), 0, 'no boundary inside display math');
checkEq(stableBoundary('no blank line yet'), 0, 'nothing stable before a blank line');
// The API key: a fake server that accepts "right", a Map as sessionStorage, and a user who
// answers the questions from a list (null: closes the form).
async function keyedFetchRun(answers, calls = 1, stored = null) {
  const storage = new Map(stored ? [[KEY_STORE, stored]] : []);
  const store = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, String(v)), removeItem: (k) => storage.delete(k) };
  const sent = [];
  const asked = [];
  const kf = new KeyedFetch({
    fetch: async (url, init) => {
      const auth = init.headers.get('authorization');
      sent.push(auth);
      await new Promise((r) => setTimeout(r, 1));
      return { status: auth === 'Bearer right' ? 200 : 401 };
    },
    storage: store,
    askKey: async (refused) => {
      asked.push(refused);
      await new Promise((r) => setTimeout(r, 5));
      return answers.shift() ?? null;
    },
  });
  const results = await Promise.all(Array.from({ length: calls }, () => kf.fetch('/v1/models', { method: 'GET' })));
  return { statuses: results.map((r) => r.status), sent, asked, stored: storage.get(KEY_STORE) ?? null };
}
let k = await keyedFetchRun(['right']);
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [200], sent: [null, 'Bearer right'], asked: [false], stored: 'right' }),
  'a 401 asks for the key, keeps it and sends it');
k = await keyedFetchRun(['wrong', 'right']);
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [200], sent: [null, 'Bearer wrong', 'Bearer right'], asked: [false, true], stored: 'right' }),
  'a refused key is asked for again, as refused');
k = await keyedFetchRun([], 1, 'right');
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [200], sent: ['Bearer right'], asked: [], stored: 'right' }),
  'a kept key is sent without asking');
k = await keyedFetchRun([null]);
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [401], sent: [null], asked: [false], stored: null }),
  'no key given: the 401 stands');
k = await keyedFetchRun([], 1, 'stale');
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [401], sent: ['Bearer stale'], asked: [true], stored: null }),
  'a kept key the server refuses is dropped');
k = await keyedFetchRun(['right'], 3);
checkEq(JSON.stringify(k.statuses), '[200,200,200]', 'three calls at once all succeed');
checkEq(JSON.stringify(k.asked), '[false]', 'three calls at once ask once');
k = await keyedFetchRun(['right'], 2, 'wrong');
checkEq(JSON.stringify(k.statuses), '[200,200]', 'two calls with a wrong key both go on');
checkEq(k.asked.length, 1, 'two calls with a wrong key ask once');
k = await keyedFetchRun(['caf\u00e9 \u2603', 'right']);
checkEq(JSON.stringify(k), JSON.stringify({ statuses: [200], sent: [null, null, 'Bearer right'], asked: [false, true], stored: 'right' }),
  'a key that cannot be a header value is asked for again');
finish('web_units');
