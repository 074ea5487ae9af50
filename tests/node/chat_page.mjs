// The chat page in headless chromium against the real server (tests/cli/chat_page.sh starts
// it with a forged model whose template opens <think> in thinking mode). Checks: nothing
// loads from anywhere but this server; replies stream into the DOM frame by frame; the
// thinking block streams, then folds to "thought for N s"; auto mode shows duet's pick; Stop
// and Esc cancel on the server (its /metrics count the cancel); edit-and-resend,
// regenerate, rename, delete; stored replies render markdown, code and math; a reload keeps
// the conversation; phone width and dark theme. It measures, for every frame that showed
// new tokens, the time from the oldest token's arrival in the page's reader to that frame's
// paint, and prints the numbers. Screenshots go to $DUET_ARTIFACTS.
import fs from 'node:fs';
import path from 'node:path';
import { baseUrl, getMetrics, metric, check, checkEq, finish, sleep } from './lib/http_util.mjs';
import { launchBrowser, recordingContext, percentile } from './lib/browser.mjs';
import { STORE_KEY, openPage, setControls, watchReplies, takeSamples, startReply, sendMessage, waitReplyEnd,
  lastReply, conversationTexts } from './lib/chat_ui.mjs';

const origin = baseUrl();
const artifacts = process.env.DUET_ARTIFACTS || 'test-artifacts';
fs.mkdirSync(artifacts, { recursive: true });
const shot = (page, name) => page.screenshot({ path: path.join(artifacts, name), fullPage: false });
const distinct = (values) => new Set(values).size;

const browser = await launchBrowser();
const { context, log } = await recordingContext(browser, origin, { viewport: { width: 1100, height: 820 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
const page = await context.newPage();
let timings = [];
let frameStarts = [];
try {
  await openPage(page, origin);
  const models = await page.$$eval('#model option', (o) => o.map((x) => x.value));
  checkEq(JSON.stringify(models), '["chat-test"]', 'the model picker lists /v1/models');
  await watchReplies(page);

  // 1. Non-thinking replies stream in, one DOM update per frame at most. Replies of a random
  // model end at a random <|im_end|>; regenerate until enough frames were timed.
  await setControls(page, { think: 'off', maxTokens: 400 });
  await page.evaluate(() => {
    window.__duetTimings.splice(0);
    // Every frame's start, seen independently of the page's own code.
    window.__frames = [];
    const loop = (t) => {
      window.__frames.push(t);
      if (window.__frames.length < 100000) requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  });
  await sendMessage(page, 'Write a long story about a lighthouse.');
  let streamed = 0;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (attempt > 0) await startReply(page, () => page.click('.msg.assistant button.regenerate'));
    const reply = await waitReplyEnd(page);
    const samples = await takeSamples(page);
    checkEq(reply.state, 'done', 'non-thinking reply ends as done');
    check(!reply.reasoning, 'a non-thinking reply has no reasoning');
    const badges = [...new Set(samples.map((s) => s.badge).filter(Boolean))];
    checkEq(JSON.stringify(badges), '["non-thinking"]', 'the badge says non-thinking once the response starts');
    const lengths = samples.map((s) => s.content);
    const grows = (key) => samples.every((s, i) => i === 0 || s[key] >= samples[i - 1][key]);
    check(grows('source'), 'the answer drawn only grows while streaming');
    check(grows('stable'), 'finished paragraphs stay on screen while the reply streams');
    if (reply.stats.completionTokens >= 40) {
      streamed = Math.max(streamed, distinct(lengths));
      check(distinct(lengths) >= 5, `DOM updated several times before the reply was done (${distinct(lengths)} distinct lengths, ${reply.stats.completionTokens} tokens)`);
      check(reply.stats.ttftMs > 0 && reply.stats.tokensPerSecond > 0, `reply numbers: ${JSON.stringify(reply.stats)}`);
      const statsLine = await page.locator('.msg.assistant .stats').last().textContent();
      check(/^TTFT \d+ ms · [\d.]+ tok\/s · \d+ tokens( \(\d+ thinking\))? · prompt \d+$/.test(statsLine), `stats line: ${statsLine}`);
    }
    const frames = await page.evaluate(() => window.__duetTimings.length);
    if (frames >= 300 && streamed) break;
  }
  check(streamed >= 5, 'at least one long non-thinking reply was watched streaming');
  await shot(page, 'reply-non-thinking.png');
  [timings, frameStarts] = await page.evaluate(() => [window.__duetTimings.splice(0), window.__frames.splice(0)]);

  // 2. Thinking: the block appears open with a running timer, streams, then folds away to
  // "thought for N s" when the answer starts.
  await setControls(page, { think: 'on', budget: 48, maxTokens: 300 });
  let sawFold = false;
  await sendMessage(page, 'Prove that the square root of 2 is irrational.');
  for (let attempt = 0; attempt < 5 && !sawFold; attempt++) {
    if (attempt > 0) await startReply(page, () => page.click('.msg.assistant button.regenerate'));
    // (A random model may end at once, before any reasoning: then there is nothing to see.)
    await page.waitForFunction(() => {
      const m = document.querySelector('.msg.assistant[data-state="streaming"]');
      return !m || m.querySelector('details.thinking[open]');
    });
    if (await page.locator('.msg.assistant[data-state="streaming"] details.thinking[open]').count())
      await shot(page, 'reply-thinking-live.png');
    const reply = await waitReplyEnd(page);
    const samples = await takeSamples(page);
    checkEq(reply.state, 'done', 'thinking reply ends as done');
    if (!reply.reasoning) continue;  // ended before any reasoning: try again
    // It may also close its reasoning (or stop) within a few frames of opening it: too short
    // to watch it stream (about one DOM update per 16.7 ms frame), so that one is skipped too.
    if (reply.thoughtMs < 100) continue;
    check(reply.mode && reply.mode.thinking === true && reply.mode.source === 'mode', `mode stored: ${JSON.stringify(reply.mode)}`);
    const thinking = samples.filter((s) => s.open === true && s.content === 0);
    check(distinct(thinking.map((s) => s.reasoning)) >= 3, `reasoning streamed into the open block (${distinct(thinking.map((s) => s.reasoning))} lengths; ${reply.reasoning.length} characters in ${reply.thoughtMs.toFixed(0)} ms)`);
    check(thinking.every((s) => /^thinking… \d+ s$/.test(s.label)), `label while thinking: ${thinking[0]?.label}`);
    // The timer runs while the model thinks: a long enough think shows "thinking… 1 s".
    if (reply.thoughtMs >= 1600)
      check(thinking.some((s) => /^thinking… [1-9]\d* s$/.test(s.label)), `the timer ticked (${reply.thoughtMs.toFixed(0)} ms)`);
    const answering = samples.filter((s) => s.content > 0);
    if (answering.length) {
      sawFold = answering.every((s) => s.open === false && /^thought for \d+ s$/.test(s.label));
      check(sawFold, `the block folded when the answer started: ${JSON.stringify(answering[0])}`);
    }
  }
  check(sawFold, 'a thinking reply with an answer was watched');
  const block = page.locator('.msg.assistant details.thinking').last();
  check(!(await block.evaluate((d) => d.open)), 'the stored thinking block is folded');
  const thought = Math.round((await lastReply(page)).thoughtMs / 1000);
  checkEq(await block.locator('summary').textContent(), `thought for ${thought} s`, 'stored label says how long');
  await shot(page, 'reply-thinking.png');
  await block.locator('summary').click();
  check(await block.evaluate((d) => d.open), 'the folded block opens on click');

  // 3. Auto: duet picks per message and the page shows which.
  await setControls(page, { think: 'auto', budget: 8, maxTokens: 40 });
  await sendMessage(page, 'Prove that there are infinitely many prime numbers, step by step.');
  let r = await waitReplyEnd(page);
  checkEq(await page.locator('.msg.assistant .mode-badge').last().textContent(), 'auto → thinking', 'auto picked thinking for a proof');
  check(r.mode && r.mode.reason && r.mode.reason.length > 0, 'the reason for the pick is kept');
  await sendMessage(page, 'hi there, how are you?');
  r = await waitReplyEnd(page);
  checkEq(await page.locator('.msg.assistant .mode-badge').last().textContent(), 'auto → non-thinking', 'auto picked non-thinking for small talk');

  // 4. Stop (button) and Esc end the generation on the server: /metrics counts the cancel.
  // Replies the model ended by itself (a stop token or max tokens), to tell that race apart.
  const endedByTheModel = (m) =>
    ['stop', 'length'].reduce((n, r) => n + (metric(m, 'vllm:request_success_total', `finished_reason="${r}"`) ?? 0), 0);
  // In a conversation of its own, so that each prompt stays short.
  const firstConversation = await page.locator('#conversations li.active').getAttribute('data-id');
  await page.click('#new-chat');
  await setControls(page, { think: 'off', maxTokens: 3000 });
  for (const how of ['button', 'Escape']) {
    let stopped = false;
    for (let attempt = 0; attempt < 4 && !stopped; attempt++) {
      const m0 = await getMetrics();
      const before = metric(m0, 'duet:requests_cancelled_total', 'phase="decode"');
      const endedBefore = endedByTheModel(m0);
      await sendMessage(page, `Count to a thousand (${how}, ${attempt}).`);
      await page.waitForFunction(() => {
        const m = document.querySelector('.msg.assistant[data-state="streaming"]');
        return !m || m.querySelector('.content').textContent.length >= 20;
      }, null, { timeout: 60000 });
      // The reply may have ended by itself just now; then Stop is hidden again.
      if (how === 'button') await page.click('#stop', { timeout: 2000 }).catch(() => {});
      else await page.keyboard.press('Escape');
      const reply = await waitReplyEnd(page);
      if (reply.state !== 'stopped') continue;  // the model ended first: try again
      let after = before;
      let endedAfter = endedBefore;
      for (let i = 0; i < 50 && after === before && endedAfter === endedBefore; i++) {
        await sleep(100);
        const m1 = await getMetrics();
        after = metric(m1, 'duet:requests_cancelled_total', 'phase="decode"');
        endedAfter = endedByTheModel(m1);
      }
      // The server's reply ended by itself while the stop was on its way (its last bytes
      // had not reached the page yet): that is the model ending first too.
      if (after === before && endedAfter === endedBefore + 1) {
        console.log(`${how}, attempt ${attempt}: the reply ended on the server as it was stopped; again`);
        continue;
      }
      stopped = true;
      check(await page.locator('#send').isVisible(), 'Send is back after Stop');
      checkEq(after, before + 1, `${how}: the server counted one cancel in decode`);
      const m = await getMetrics();
      checkEq(metric(m, 'vllm:num_requests_running'), 0, `${how}: nothing left running`);
      check((await page.locator('.msg.assistant .stats').last().textContent()).endsWith('· stopped'), 'reply marked stopped');
    }
    check(stopped, `${how}: a reply was stopped while streaming`);
  }

  // 5. A reload keeps the conversations.
  await page.click(`#conversations li[data-id="${firstConversation}"] .title`);
  const beforeReload = await conversationTexts(page);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await watchReplies(page);
  const afterReload = await conversationTexts(page);
  checkEq(afterReload.length, beforeReload.length, 'messages after reload');
  checkEq(JSON.stringify(afterReload.filter((t) => t.startsWith('user'))), JSON.stringify(beforeReload.filter((t) => t.startsWith('user'))), 'user messages after reload');
  checkEq(await page.locator('details.thinking').count() > 0, true, 'thinking blocks after reload');

  // 6. Edit-and-resend cuts the conversation at the edited message and asks again.
  await setControls(page, { think: 'off', maxTokens: 30 });
  await page.locator('.msg.user button.edit').first().click();
  await page.fill('.edit-box', 'An edited question');
  await startReply(page, () => page.click('button.resend'));
  await waitReplyEnd(page);
  const edited = await conversationTexts(page);
  checkEq(edited.length, 2, 'edit-and-resend leaves the edited question and a new reply');
  checkEq(edited[0], 'user: An edited question', 'the edited text');

  // Shift+Enter is a new line, not a send.
  const replies = await page.locator('.msg.assistant').count();
  await page.fill('#input', 'line one');
  await page.press('#input', 'Shift+Enter');
  await page.type('#input', 'line two');
  checkEq(await page.inputValue('#input'), 'line one\nline two', 'Shift+Enter adds a line');
  checkEq(await page.locator('.msg.assistant').count(), replies, 'Shift+Enter sends nothing');
  await page.fill('#input', '');

  // 7. Conversations: new, rename, delete.
  const count = () => page.locator('#conversations li').count();
  const n0 = await count();
  await page.click('#new-chat');
  await sendMessage(page, 'second conversation');
  await waitReplyEnd(page);
  checkEq(await count(), n0 + 1, 'a new conversation is listed');
  await page.click('#conversations li.active .rename');
  await page.fill('.rename-box', 'Renamed chat');
  await page.press('.rename-box', 'Enter');
  checkEq(await page.locator('#conversations li.active .title').textContent(), 'Renamed chat', 'rename');
  page.once('dialog', (d) => d.accept());
  await page.click('#conversations li.active .delete');
  checkEq(await count(), n0, 'delete');

  // 8. Markdown, code (highlighted, with a working copy button), math and tables, from a
  // stored conversation (a random model writes none of them).
  const md = 'A table:\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f(x):\n    return x + 1\n```\n\n' +
    'Euler: $e^{i\\pi} + 1 = 0$, and\n\n$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$\n\n<script>window.__injected = 1</script>\n';
  await page.evaluate(({ key, md }) => {
    const s = JSON.parse(localStorage.getItem(key));
    s.conversations.push({ id: 'md', title: 'Markdown', created: 1, updated: Date.now() + 1000, messages: [
      { role: 'user', content: 'show me markdown' },
      { role: 'assistant', content: md, state: 'done', stats: { ttftMs: 12, completionTokens: 60, tokensPerSecond: 50, promptTokens: 9 } }] });
    s.current = 'md';
    localStorage.setItem(key, JSON.stringify(s));
  }, { key: STORE_KEY, md });
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  const content = page.locator('.msg.assistant .content').last();
  checkEq(await content.locator('table td').count(), 2, 'a table');
  check(await content.locator('.hljs-keyword').count() > 0, 'highlighted code');
  checkEq(await content.locator('.katex').count(), 2, 'inline and display math');
  check(await content.evaluate(() => window.__injected === undefined), 'raw HTML in a reply is not executed');
  check((await content.textContent()).includes('<script>'), 'raw HTML is shown as text');
  await content.locator('button.copy').click();
  await page.waitForFunction(() => document.querySelector('button.copy').textContent === 'Copied');
  checkEq(await page.evaluate(() => navigator.clipboard.readText()), 'def f(x):\n    return x + 1\n', 'copy button copies the code');
  await page.evaluate(() => document.fonts.ready);
  await shot(page, 'markdown.png');

  // 9. Dark theme (the toggle: system → light → dark), kept across reloads.
  await page.click('#theme');
  await page.click('#theme');
  checkEq(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'dark theme');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  checkEq(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(22, 24, 29)', 'dark background after reload');
  await shot(page, 'dark.png');
} finally {
  await page.close();
}

// 10. A phone-sized screen: no sideways scrolling; the list is a drawer.
const phone = await recordingContext(browser, origin, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
const p2 = await phone.context.newPage();
await openPage(p2, origin);
check(await p2.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal overflow at phone width');
check(await p2.locator('#toggle-sidebar').isVisible(), 'the drawer button shows at phone width');
check(!(await p2.locator('#new-chat').isVisible()) || (await p2.locator('#sidebar').boundingBox()).x < 0, 'the list is hidden at phone width');
await shot(p2, 'phone.png');
await p2.click('#toggle-sidebar');
await p2.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().x >= 0);
await browser.close();

// Nothing left this machine; no script or CSP error.
for (const l of [log, phone.log]) {
  checkEq(JSON.stringify(l.foreign), '[]', 'no request left the server');
  check(l.urls.length > 0 && l.urls.every((u) => u.startsWith(origin + '/')), 'every request went to the server');
  checkEq(JSON.stringify(l.errors), '[]', 'no page or console errors');
}
check(log.urls.some((u) => u.includes('/assets/fonts/KaTeX')), 'KaTeX fonts came from the server');

// First token to screen, per frame that showed new tokens, from its oldest token's arrival
// in the page's reader: to the DOM update in the requestAnimationFrame callback (the browser
// paints it in that same frame), and to the first task after that frame's paint. And: was it
// the first frame that started after the token arrived (no frame skipped)?
const ms = (f) => timings.map(f).sort((a, b) => a - b);
const toDom = ms((t) => t.dom - t.first);
const toPaint = ms((t) => t.paint - t.first);
const late = timings.filter((t) => frameStarts.some((f) => f > t.first && f < t.frame)).length;
const gaps = timings.slice(1).map((t, i) => t.frame - timings[i].frame).sort((a, b) => a - b);
const intervals = frameStarts.slice(1).map((f, i) => f - frameStarts[i]).sort((a, b) => a - b);
const tokens = timings.reduce((n, t) => n + t.tokens, 0);
const fmt = (a) => `p50 ${percentile(a, 0.5).toFixed(2)} ms, p95 ${percentile(a, 0.95).toFixed(2)} ms, max ${a.at(-1).toFixed(2)} ms`;
console.log(`first token to screen over ${timings.length} frames (${tokens} tokens), frame interval p50 ${percentile(intervals, 0.5).toFixed(2)} ms:`);
console.log(`  arrival -> DOM update (painted in that frame): ${fmt(toDom)}`);
console.log(`  arrival -> after that frame's paint:           ${fmt(toPaint)}`);
console.log(`  of which arrival -> frame start: ${fmt(ms((t) => t.frame - t.first))}; frame start -> callback: ${fmt(ms((t) => t.start - t.frame))}; DOM work: ${fmt(ms((t) => t.dom - t.start))}`);
console.log(`  shown in a later frame than the next one: ${late} of ${timings.length}; closest DOM updates ${gaps[0].toFixed(2)} ms apart`);
check(timings.length >= 100, `enough frames timed (${timings.length})`);
// Structure, not milliseconds: the page draws what arrived in the next animation frame. A
// page that batched tokens (a timer, a fixed number of tokens, the end of the reply) would
// draw most of them a frame or more late; a loaded machine that delays the odd frame's
// callback makes a few late. The times themselves are printed above and not judged.
check(late <= 0.1 * timings.length,
      `nearly every token is drawn in the first frame after it arrives (${late} of ${timings.length} later)`);
check(gaps[0] > 0, 'at most one DOM update per animation frame');
finish('chat_page');
