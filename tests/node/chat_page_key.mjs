// The chat page against a keyed server (tests/cli/chat_page.sh starts it with
// --api-key $DUET_KEY): the page and its files load without the key; the first API call's 401
// opens the key form; a wrong key is refused and the form asks again; the right key is kept in
// the tab's sessionStorage, sent as `Authorization: Bearer` on every API call, and a reply
// streams. A reload keeps the key; a new tab asks for it again, and a form closed without a key
// comes back on the next call.
import fs from 'node:fs';
import path from 'node:path';
import { baseUrl, check, checkEq, finish } from './lib/http_util.mjs';
import { launchBrowser, recordingContext } from './lib/browser.mjs';
import { setControls, watchReplies, takeSamples, startReply, sendMessage, waitReplyEnd } from './lib/chat_ui.mjs';

const origin = baseUrl();
const key = process.env.DUET_KEY;
if (!key) throw new Error('DUET_KEY is not set');
const artifacts = process.env.DUET_ARTIFACTS || 'test-artifacts';
fs.mkdirSync(artifacts, { recursive: true });
const shot = (page, name) => page.screenshot({ path: path.join(artifacts, name), fullPage: false });

const browser = await launchBrowser();
const { context, log } = await recordingContext(browser, origin, { viewport: { width: 1100, height: 820 } });
// Every response the page got, and the Authorization header of every API call it made.
const responses = [];
const apiCalls = [];
context.on('response', (r) => responses.push({ url: r.url(), status: r.status() }));
context.on('request', (r) => {
  const p = new URL(r.url()).pathname;
  if (p.startsWith('/v1/') || p.startsWith('/api/')) apiCalls.push({ path: p, auth: r.headers().authorization ?? null });
});
const formOpen = (page, refused) => page.waitForSelector(`#key-dialog[open][data-refused="${refused}"]`);
const modelCount = (page) => page.evaluate(() => document.querySelector('#model').options.length);
const storedKey = (page) => page.evaluate(() => sessionStorage.getItem('duet.apiKey'));

const page = await context.newPage();
await page.goto(origin + '/');
await page.waitForSelector('body[data-ready="true"]');

// 1. The page loads without a key; its first API call (the model list) is refused and the
// form asks for the key.
await formOpen(page, 'false');
const assets = responses.filter((r) => new URL(r.url).pathname === '/' || new URL(r.url).pathname.startsWith('/assets/'));
check(assets.length >= 3, `the page and its files were fetched (${assets.length})`);
checkEq(JSON.stringify(assets.filter((r) => r.status !== 200 && r.status !== 304)), '[]', 'the page and its files load without a key');
check(responses.some((r) => r.url === origin + '/v1/models' && r.status === 401), 'the model list was refused without a key');
check((await page.locator('#key-dialog .key-note').textContent()).includes('needs an API key'), 'the form says why');
check(await page.locator('#api-key').evaluate((e) => e === document.activeElement), 'the key field has the focus');
checkEq(await page.locator('#api-key').getAttribute('type'), 'password', 'the key is typed as a password');
checkEq(await modelCount(page), 0, 'no model listed before the key');
await shot(page, 'key-form.png');

// 2. A wrong key: refused, not kept, and the form asks again.
await page.fill('#api-key', 'not-the-key');
await page.press('#api-key', 'Enter');
await formOpen(page, 'true');
check((await page.locator('#key-dialog .key-note').textContent()).includes('refused'), 'the form says the key was refused');
checkEq(await page.inputValue('#api-key'), '', 'the refused key is cleared from the field');
checkEq(await storedKey(page), null, 'a refused key is not kept');
check(apiCalls.some((c) => c.auth === 'Bearer not-the-key'), 'the wrong key was sent as a Bearer token');
checkEq(await modelCount(page), 0, 'still no model after a wrong key');
await shot(page, 'key-refused.png');

// 3. The right key: the form closes, the models load, the key is kept in this tab.
await page.fill('#api-key', key);
await page.click('#key-submit');
await page.waitForFunction(() => !document.querySelector('#key-dialog').open && document.querySelector('#model').options.length > 0);
checkEq(JSON.stringify(await page.$$eval('#model option', (o) => o.map((x) => x.value))), '["chat-test"]', 'the models load with the key');
checkEq(await storedKey(page), key, 'the key is kept in sessionStorage');
checkEq(await page.evaluate((k) => Object.keys(localStorage).filter((name) => localStorage.getItem(name).includes(k)).length, key), 0,
  'the key is not in localStorage');

// 4. A message streams with it.
await watchReplies(page);
await setControls(page, { think: 'off', maxTokens: 200 });
const callsBefore = apiCalls.length;
await sendMessage(page, 'Tell me about lighthouses.');
let streamed = false;
for (let attempt = 0; attempt < 6 && !streamed; attempt++) {
  if (attempt > 0) await startReply(page, () => page.click('.msg.assistant button.regenerate'));
  const reply = await waitReplyEnd(page);
  const samples = await takeSamples(page);
  checkEq(reply.state, 'done', `reply ${attempt} ends as done (${reply.error ?? ''})`);
  if (reply.stats.completionTokens < 20) continue;  // a random model may end at once: again
  const lengths = new Set(samples.map((s) => s.content));
  check(lengths.size >= 3, `the reply streamed in (${lengths.size} distinct lengths, ${reply.stats.completionTokens} tokens)`);
  check(reply.content.length > 0, 'the reply has text');
  streamed = true;
}
check(streamed, 'a reply of 20 tokens or more streamed with the key');
const chatCalls = apiCalls.slice(callsBefore).filter((c) => c.path === '/v1/chat/completions');
check(chatCalls.length >= 1, 'the message went to /v1/chat/completions');
checkEq(JSON.stringify(chatCalls.filter((c) => c.auth !== `Bearer ${key}`)), '[]', 'every chat call carried the key');
checkEq(await page.locator('#key-dialog[open]').count(), 0, 'no form while the key is good');
await shot(page, 'key-reply.png');

// 5. A reload keeps the key (same tab): no form, the models load at once.
const before = apiCalls.length;
await page.reload();
await page.waitForSelector('body[data-ready="true"]');
await page.waitForFunction(() => document.querySelector('#model').options.length > 0);
checkEq(await page.locator('#key-dialog[open]').count(), 0, 'no form after a reload');
checkEq(JSON.stringify(apiCalls.slice(before).filter((c) => c.auth !== `Bearer ${key}`)), '[]', 'calls after the reload carry the key');
await page.close();

// 6. A new tab has its own sessionStorage: it asks again. Closed with Esc, the form gives no
// key: the model list fails, and the page asks again when a message is sent; the key given
// then sends the message and loads the model list too.
const tab = await context.newPage();
await tab.goto(origin + '/');
await formOpen(tab, 'false');
checkEq(await storedKey(tab), null, 'a new tab holds no key');
await tab.keyboard.press('Escape');
await tab.waitForFunction(() => document.querySelector('#model-note').textContent.startsWith('cannot list models'));
checkEq(await tab.locator('#key-dialog[open]').count(), 0, 'Esc closes the form');
check((await tab.locator('#model-note').textContent()).includes('API key'), 'the page says the list needs the key');
await setControls(tab, { think: 'off', maxTokens: 20 });
await tab.fill('#input', 'hello');
await tab.press('#input', 'Enter');
await formOpen(tab, 'false');
await tab.fill('#api-key', key);
await tab.press('#api-key', 'Enter');
const late = await waitReplyEnd(tab);
checkEq(late.state, 'done', `the message sent once the key was given (${late.error ?? ''})`);
await tab.waitForFunction(() => document.querySelector('#model').options.length > 0);
checkEq(await tab.locator('#model-note').textContent(), '', 'the model list loaded with the key');
await tab.close();
await browser.close();

checkEq(JSON.stringify(log.foreign), '[]', 'no request left the server');
// The console reports each refused call (401) as a failed resource load; nothing else may fail.
const errors = log.errors.filter((e) => !/status of 401/.test(e));
checkEq(JSON.stringify(errors), '[]', 'no page or console errors but the 401s');
finish('chat_page_key');
