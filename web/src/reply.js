// One assistant message on screen: the thinking block (live reasoning with its timer), the
// answer (markdown), a mode badge and the reply's numbers. Streamed replies are fed chunk by
// chunk and drawn once per frame; stored replies are drawn at once.
import { FrameBatcher } from './frames.js';
import { MarkdownView, renderMarkdown } from './markdown.js';

const seconds = (ms) => Math.max(0, Math.round(ms / 1000));

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

// "auto → thinking" when duet chose, "thinking" when the request (or the server default) did.
export function modeLabel(mode) {
  if (!mode) return '';
  const name = mode.thinking ? 'thinking' : 'non-thinking';
  return mode.source === 'auto' ? `auto → ${name}` : name;
}

// The X-Duet-Thinking-Mode header: "thinking; source=auto".
export function parseModeHeader(value) {
  if (!value) return null;
  const m = /^(thinking|non-thinking); source=(\S+)/.exec(value);
  return m ? { thinking: m[1] === 'thinking', source: m[2] } : null;
}

export function statsText(stats) {
  if (!stats) return '';
  const parts = [];
  if (stats.ttftMs != null) parts.push(`TTFT ${stats.ttftMs.toFixed(0)} ms`);
  if (stats.tokensPerSecond != null) parts.push(`${stats.tokensPerSecond.toFixed(1)} tok/s`);
  if (stats.completionTokens != null) {
    let t = `${stats.completionTokens} tokens`;
    if (stats.reasoningTokens) t += ` (${stats.reasoningTokens} thinking)`;
    parts.push(t);
  }
  if (stats.promptTokens != null) parts.push(`prompt ${stats.promptTokens}`);
  return parts.join(' · ');
}

export class ReplyView {
  // message: the stored message object this view shows (and, while streaming, fills in);
  // scroller: the scrolling container, kept at the bottom while text streams in if the
  // reader was there.
  constructor(message, scroller = null) {
    this.message = message;
    this.scroller = scroller;
    this.root = el('div', 'msg assistant');
    this.root.dataset.state = message.state || 'done';
    this.badge = el('span', 'mode-badge');
    this.thinking = null;
    this.body = el('div', 'content');
    this.stats = el('div', 'stats');
    this.actions = el('div', 'actions');
    this.root.append(this.badge, this.body, this.stats, this.actions);
    this.markdown = null;
    this.pending = { reasoning: '', content: '' };
    this.reasoningText = null;
    this.timer = null;
    this.batcher = new FrameBatcher(() => this.applyPending());
    this.drawStored();
  }

  drawStored() {
    const m = this.message;
    this.badge.textContent = modeLabel(m.mode);
    this.badge.title = m.mode?.reason || '';
    if (m.reasoning) {
      this.ensureThinking();
      this.reasoningText.data = m.reasoning;
      this.closeThinking(m.thoughtMs);
    }
    this.body.innerHTML = renderMarkdown(m.content || '');
    this.stats.textContent = statsText(m.stats) + (m.state === 'stopped' ? ' · stopped' : '');
    if (m.error) this.body.append(el('p', 'error', m.error));
  }

  ensureThinking() {
    if (this.thinking) return;
    this.thinking = el('details', 'thinking');
    this.thinking.open = true;
    this.thinkingLabel = el('summary', null, 'thinking… 0 s');
    const text = el('div', 'reasoning');
    this.reasoningText = document.createTextNode('');
    text.append(this.reasoningText);
    this.thinking.append(this.thinkingLabel, text);
    this.root.insertBefore(this.thinking, this.body);
  }

  closeThinking(ms) {
    if (!this.thinking) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.thinking.open = false;
    this.thinking.dataset.done = 'true';
    this.thinkingLabel.textContent = ms == null ? 'thought' : `thought for ${seconds(ms)} s`;
  }

  // --- streaming ---

  start(startTime) {
    this.startTime = startTime;
    this.root.dataset.state = 'streaming';
    this.markdown = new MarkdownView(this.body);
  }

  setMode(mode) {
    this.message.mode = { ...this.message.mode, ...mode };
    this.badge.textContent = modeLabel(this.message.mode);
    this.badge.title = this.message.mode.reason || '';
  }

  // A delta's text, at `arrival`; drawn in the next frame.
  push(kind, text, arrival) {
    if (this.firstArrival == null) this.firstArrival = arrival;
    this.lastArrival = arrival;
    this.chunks = (this.chunks || 0) + 1;
    if (kind === 'reasoning' && this.reasoningStart == null) this.reasoningStart = arrival;
    if (kind === 'content' && this.contentStart == null && text.trim() !== '') this.contentStart = arrival;
    this.pending[kind] += text;
    this.batcher.push(arrival);
  }

  applyPending() {
    const m = this.message;
    const s = this.scroller;
    const follow = s && s.scrollHeight - s.scrollTop - s.clientHeight < 40;
    if (this.pending.reasoning) {
      this.ensureThinking();
      if (!this.timer && !this.thinking.dataset.done) {
        const since = this.reasoningStart;
        this.timer = setInterval(() => {
          this.thinkingLabel.textContent = `thinking… ${seconds(performance.now() - since)} s`;
        }, 250);
      }
      m.reasoning = (m.reasoning || '') + this.pending.reasoning;
      this.reasoningText.appendData(this.pending.reasoning);
      this.pending.reasoning = '';
    }
    if (this.pending.content) {
      m.content += this.pending.content;
      this.pending.content = '';
      // The answer has started: the reasoning block folds away.
      if (this.thinking && !this.thinking.dataset.done && this.contentStart != null) {
        m.thoughtMs = this.contentStart - this.reasoningStart;
        this.closeThinking(m.thoughtMs);
      }
      this.markdown.update(m.content);
    }
    if (follow) s.scrollTop = s.scrollHeight;
  }

  // The stream ended (state "done"), was stopped ("stopped") or failed ("error"). Resolves
  // once the last text and the final render are on screen (in the next frame).
  finish(state, usage, error) {
    return new Promise((resolve) => {
      this.batcher.close(() => {
        this.finishNow(state, usage, error);
        resolve();
      });
    });
  }

  finishNow(state, usage, error) {
    const m = this.message;
    m.state = state;
    if (error) m.error = error;
    if (this.thinking && !this.thinking.dataset.done) {
      m.thoughtMs = (this.lastArrival ?? performance.now()) - (this.reasoningStart ?? this.startTime);
      this.closeThinking(m.thoughtMs);
    }
    const stats = {};
    if (this.firstArrival != null) stats.ttftMs = this.firstArrival - this.startTime;
    const tokens = usage ? usage.completion_tokens : this.chunks;
    if (tokens != null) stats.completionTokens = tokens;
    if (usage) {
      stats.promptTokens = usage.prompt_tokens;
      stats.reasoningTokens = usage.completion_tokens_details?.reasoning_tokens || 0;
    }
    // Decode speed: the tokens after the first, over the time they took to arrive.
    if (tokens > 1 && this.lastArrival > this.firstArrival)
      stats.tokensPerSecond = ((tokens - 1) * 1000) / (this.lastArrival - this.firstArrival);
    m.stats = stats;
    this.root.dataset.state = state;
    this.markdown?.finish(m.content);
    this.stats.textContent = statsText(stats) + (state === 'stopped' ? ' · stopped' : '');
    if (error) this.body.append(el('p', 'error', error));
  }
}
