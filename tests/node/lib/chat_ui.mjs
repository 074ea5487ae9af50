// Helpers that drive the chat page the way a user does (type, press Enter, click) and read
// its state back from the DOM and from localStorage.
export const STORE_KEY = 'duet.conversations.v1';

export async function openPage(page, origin) {
  await page.goto(origin + '/');
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.querySelector('#model').options.length > 0);
}

export async function setControls(page, { think, budget = '', maxTokens = '' }) {
  await page.selectOption('#think', think);
  await page.fill('#budget', String(budget));
  await page.fill('#max-tokens', String(maxTokens));
}

// Samples the streaming reply on every DOM change (a MutationObserver over #messages):
// lengths of its answer and reasoning, the thinking block's state, the mode badge.
export async function watchReplies(page) {
  await page.evaluate(() => {
    window.__samples = [];
    new MutationObserver(() => {
      const msg = document.querySelector('.msg.assistant[data-state="streaming"]');
      if (!msg) return;
      const th = msg.querySelector('details.thinking');
      window.__samples.push({
        // Visible answer text: the page folds the thinking block at the first non-space
        // character (a random model may open its answer with whitespace the splitter keeps).
        content: msg.querySelector('.content').textContent.trim().length,
        // The reply's source drawn so far, and the text of the paragraphs rendered for good:
        // both only grow (the tail is redrawn each frame and may shrink as markdown closes).
        source: Number(msg.querySelector('.content').dataset.chars || 0),
        stable: msg.querySelector('.content > div:first-child')?.textContent.length ?? 0,
        reasoning: th ? th.querySelector('.reasoning').textContent.length : -1,
        open: th ? th.open : null,
        label: th ? th.querySelector('summary').textContent : null,
        badge: msg.querySelector('.mode-badge').textContent,
      });
    }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true, attributes: true });
  });
}

export const takeSamples = (page) => page.evaluate(() => window.__samples.splice(0));

const replyCount = (page) => page.locator('.msg.assistant').count();

// Starts a reply by an action (pressing Enter, clicking Regenerate, ...) and returns once it
// is on screen and streaming.
export async function startReply(page, action) {
  const before = await replyCount(page);
  await action();
  await page.waitForFunction((n) => {
    const all = document.querySelectorAll('.msg.assistant');
    return all.length >= n + 1 || document.querySelector('.msg.assistant[data-state="streaming"]');
  }, before);
}

export async function sendMessage(page, text) {
  await startReply(page, async () => {
    await page.fill('#input', text);
    await page.press('#input', 'Enter');
  });
}

export async function waitReplyEnd(page, timeout = 120000) {
  await page.waitForFunction(() => !document.querySelector('.msg.assistant[data-state="streaming"]') &&
    document.body.dataset.streaming === 'false', null, { timeout });
  return lastReply(page);
}

// The current conversation's last message as stored by the page.
export async function lastReply(page) {
  return page.evaluate((key) => {
    const s = JSON.parse(localStorage.getItem(key));
    const c = s.conversations.find((x) => x.id === s.current);
    return c.messages.at(-1);
  }, STORE_KEY);
}

export async function conversationTexts(page) {
  return page.$$eval('#messages .msg', (els) => els.map((e) => `${e.classList.contains('user') ? 'user' : 'assistant'}: ${e.querySelector('.content').textContent}`));
}
