// A server with several API keys (tests/cli/serve_api_keys.sh starts it): every key listed in
// ACCEPTED_KEYS (comma-separated) opens the API, as a Bearer token and as X-Api-Key; anything
// else is 401 in the dialect's shape; /health and the chat page's files (the page for a
// browser, /assets/...) need no key, while Ollama's heartbeat (GET / for a non-browser) does.
import { request, check, checkEq, finish } from './lib/http_util.mjs';

const accepted = (process.env.ACCEPTED_KEYS || '').split(',');
check(accepted.length >= 2, `several keys to try: ${accepted.length}`);

for (const key of accepted) {
  checkEq((await request({ path: '/v1/models', headers: { authorization: `Bearer ${key}` } })).status, 200,
    `Bearer key #${accepted.indexOf(key) + 1}`);
  checkEq((await request({ path: '/api/tags', headers: { 'x-api-key': key } })).status, 200,
    `X-Api-Key key #${accepted.indexOf(key) + 1}`);
}
const ready = await request({ path: '/ready', headers: { authorization: `Bearer ${accepted.at(-1)}` } });
checkEq(ready.status, 200, '/ready with a key');

const refused = ['', 'wrong', accepted[0].slice(0, -1), accepted[0] + 'x', accepted.slice(0, 2).join(','),
                 accepted.slice(0, 2).join(' '), ` ${accepted[0]}x `];
for (const wrong of refused) {
  for (const [method, path] of [['GET', '/v1/models'], ['POST', '/v1/chat/completions'], ['POST', '/api/chat'],
                                ['GET', '/ready'], ['GET', '/metrics']]) {
    const r = await request({ method, path, headers: { authorization: `Bearer ${wrong}` }, body: method === 'POST' ? '{}' : undefined });
    checkEq(r.status, 401, `${method} ${path} with a wrong key (${JSON.stringify(wrong)})`);
    checkEq(r.headers['www-authenticate'], 'Bearer', `${path}: WWW-Authenticate`);
    const j = JSON.parse(r.body);
    if (path.startsWith('/api/')) check(typeof j.error === 'string', `${path}: Ollama 401 body`);
    else check(j.error && j.error.type === 'authentication_error', `${path}: OpenAI 401 body`);
  }
}

// Open without a key: the probe and the chat page's files.
const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
checkEq((await request({ path: '/health' })).status, 200, '/health without a key');
const page = await request({ path: '/', headers: { accept: html } });
checkEq(page.status, 200, 'the chat page without a key');
check(page.body.includes('/assets/app.js') && page.body.includes('id="key-dialog"'), 'the page, with its key form');
checkEq((await request({ method: 'HEAD', path: '/', headers: { accept: html } })).status, 200, 'HEAD of the page without a key');
for (const path of ['/assets/app.js', '/assets/app.css', '/assets/favicon.svg']) {
  const r = await request({ path });
  checkEq(r.status, 200, `${path} without a key`);
  check(r.body.length > 0, `${path} has a body`);
}
const css = (await request({ path: '/assets/app.css' })).body;
const font = /url\("?\.\/(fonts\/[^")]+)"?\)/.exec(css);
check(font !== null, 'the stylesheet names a font');
if (font) checkEq((await request({ path: `/assets/${font[1]}` })).status, 200, `${font[1]} without a key`);
checkEq((await request({ path: '/assets/nope.js' })).status, 404, 'an unknown asset is 404, key or not');

// Still closed: Ollama's heartbeat (GET / for a client that does not ask for HTML), the page's
// path with another method, and every API route.
for (const headers of [{}, { accept: '*/*' }, { accept: 'application/json' }])
  checkEq((await request({ path: '/', headers })).status, 401, `GET / with ${JSON.stringify(headers)} needs the key`);
checkEq((await request({ method: 'POST', path: '/', headers: { accept: html }, body: '' })).status, 401, 'POST / needs the key');
checkEq((await request({ method: 'POST', path: '/assets/app.js', body: '' })).status, 401, 'POST to an asset needs the key');
checkEq((await request({ path: '/v1/models', headers: { accept: html } })).status, 401, 'an API route asked for as HTML needs the key');
finish('serve_api_keys');
