// A small well-formedness check for an SVG file (no XML library in the tree): every tag
// closes in order, attributes are quoted, entities are known, the root is <svg> with a size,
// and the given strings appear as text. Usage: node svg_check.mjs FILE.svg [TEXT...]
import fs from 'node:fs';

const [file, ...texts] = process.argv.slice(2);
const src = fs.readFileSync(file, 'utf8');
const fail = (why) => { console.error(`svg_check: ${file}: ${why}`); process.exit(1); };

let i = 0;
const stack = [];
let root = null;
const textParts = [];
const checkEntities = (s, where) => {
  for (const m of s.matchAll(/&([^;\s]*);?/g))
    if (!/^(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+)$/.test(m[1]) || !m[0].endsWith(';')) fail(`bad entity ${m[0]} in ${where}`);
};
if (src.startsWith('<?xml')) i = src.indexOf('?>') + 2;
while (i < src.length) {
  const lt = src.indexOf('<', i);
  const text = src.slice(i, lt < 0 ? src.length : lt);
  if (text.trim()) {
    if (!stack.length) fail('text outside the root element');
    checkEntities(text, 'text');
    textParts.push(text);
  }
  if (lt < 0) break;
  const gt = src.indexOf('>', lt);
  if (gt < 0) fail('unterminated tag');
  const tag = src.slice(lt + 1, gt);
  i = gt + 1;
  if (tag.startsWith('/')) {
    const name = tag.slice(1).trim();
    if (stack.pop() !== name) fail(`</${name}> closes the wrong element`);
    continue;
  }
  const selfClosing = tag.endsWith('/');
  const body = selfClosing ? tag.slice(0, -1) : tag;
  const m = /^([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*$/.exec(body);
  if (!m) fail(`malformed tag <${tag.slice(0, 60)}>`);
  checkEntities(m[2], `<${m[1]}>`);
  const attrs = Object.fromEntries([...m[2].matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]]));
  if (!root) {
    root = { name: m[1], attrs };
    if (m[1] !== 'svg') fail('the root is not <svg>');
  } else if (!stack.length) fail('a second root element');
  if (!selfClosing) stack.push(m[1]);
}
if (stack.length) fail(`unclosed <${stack.at(-1)}>`);
if (!root) fail('no root element');
if (root.attrs.xmlns !== 'http://www.w3.org/2000/svg') fail('no SVG namespace');
if (!(Number(root.attrs.width) > 0 && Number(root.attrs.height) > 0)) fail('no size');
const allText = textParts.join(' ');
for (const t of texts) if (!allText.includes(t)) fail(`no text "${t}"`);
if (!/<rect [^>]*fill="#4a7bb7"/.test(src)) fail('no histogram bars');
if (!/<path d="M/.test(src)) fail('no CDF line');
console.log(`svg_check: ${file} is well-formed (${src.length} bytes)`);
