// The chat page's pure modules under node: the SSE parser (every split of a stream gives the
// same events), the markdown renderer (raw HTML stays text; tables, code, math) and the
// streaming boundary that decides which part of a reply is re-rendered per frame.
import { SseParser } from '../../web/src/sse.js';
import { renderMarkdown, stableBoundary } from '../../web/src/markdown.js';
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
finish('web_units');
