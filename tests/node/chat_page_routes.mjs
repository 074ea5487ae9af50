// The chat page's routes over plain HTTP: GET / is the page for browsers and Ollama's
// heartbeat text for everything else; /assets/... carry the right types, ETags (304 when
// current) and the page a Content-Security-Policy that allows nothing from elsewhere;
// unknown or odd asset paths are 404, never a crash.
import { request, check, checkEq, finish } from './lib/http_util.mjs';

// Ollama's clients and curl send no Accept: text/html.
for (const headers of [{}, { accept: '*/*' }, { accept: 'application/json' }]) {
  const r = await request({ path: '/', headers });
  checkEq(r.status, 200, `GET / with ${JSON.stringify(headers)}`);
  checkEq(r.body, 'Ollama is running', `GET / with ${JSON.stringify(headers)}: Ollama's heartbeat`);
  check(r.headers['content-type'].startsWith('text/plain'), 'heartbeat is text/plain');
}
checkEq((await request({ method: 'HEAD', path: '/' })).status, 200, 'HEAD /');

// A browser's navigation.
const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const page = await request({ path: '/', headers: { accept } });
checkEq(page.status, 200, 'GET / as a browser');
check(page.headers['content-type'].startsWith('text/html'), 'the page is HTML');
check(page.body.includes('/assets/app.js') && page.body.includes('/assets/app.css'), 'the page loads the bundle');
check(!/(src|href)=["']?(https?:)?\/\//.test(page.body), 'the page names no other host');
const csp = page.headers['content-security-policy'] || '';
check(csp.includes("default-src 'self'") && csp.includes("script-src 'self'") && csp.includes("connect-src 'self'"),
  `CSP allows only this server: ${csp}`);
check(!/https?:|\*/.test(csp), 'CSP names no other origin and no wildcard');
checkEq(page.headers['cache-control'], 'no-cache', 'the page revalidates');
check(/^"[0-9a-f]{20}"$/.test(page.headers.etag || ''), `the page has an ETag: ${page.headers.etag}`);
const again = await request({ path: '/', headers: { accept, 'if-none-match': page.headers.etag } });
checkEq(again.status, 304, 'GET / with a current ETag');
checkEq(again.body, '', '304 has no body');
checkEq((await request({ path: '/', headers: { accept, 'if-none-match': '"0000"' } })).status, 200, 'stale ETag');

const types = { '/assets/app.js': 'text/javascript', '/assets/app.css': 'text/css', '/assets/favicon.svg': 'image/svg+xml' };
for (const [path, type] of Object.entries(types)) {
  const r = await request({ path });
  checkEq(r.status, 200, `GET ${path}`);
  check((r.headers['content-type'] || '').startsWith(type), `${path} is ${type}: ${r.headers['content-type']}`);
  checkEq(r.headers['x-content-type-options'], 'nosniff', `${path} nosniff`);
  check(r.body.length > 0, `${path} has a body`);
}
const css = (await request({ path: '/assets/app.css' })).body;
const fonts = [...css.matchAll(/url\("?\.\/(fonts\/[^")]+)"?\)/g)].map((m) => m[1]);
check(fonts.length > 10, `the stylesheet names KaTeX's fonts (${fonts.length})`);
check(!/url\(\s*["']?(https?:)?\/\//.test(css), 'the stylesheet loads nothing from elsewhere');
for (const f of fonts) {
  const r = await request({ path: `/assets/${f}` });
  checkEq(r.status, 200, `font ${f} is embedded`);
  checkEq(r.headers['content-type'], 'font/woff2', `${f} type`);
}

for (const path of ['/assets/nope.js', '/assets/', '/assets/../index.html', '/assets/%2e%2e/index.html',
                    '/assets/app.js/x', '/assets/' + 'a'.repeat(300), '/index.html', '/assets/app.js%00']) {
  const r = await request({ path });
  checkEq(r.status, 404, `GET ${path.slice(0, 40)} is 404`);
}
checkEq((await request({ method: 'POST', path: '/assets/app.js', body: '' })).status, 405, 'POST to an asset');
checkEq((await request({ path: '/health' })).status, 200, 'server alive after odd paths');
finish('chat_page_routes');
