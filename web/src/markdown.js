// Markdown → HTML: markdown-it (raw HTML off, so model output can never inject markup),
// highlight.js for fenced code (with a copy button), KaTeX for $…$ / $$…$$ math, tables.
import MarkdownIt from 'markdown-it';
import katexPlugin from '@vscode/markdown-it-katex';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
md.use(katexPlugin.default || katexPlugin, { throwOnError: false });

const escapeHtml = md.utils.escapeHtml;

// Fenced code: a header with the language and a copy button (main.js handles its clicks).
md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  const lang = token.info.trim().split(/\s+/)[0].toLowerCase();
  let body;
  if (lang && hljs.getLanguage(lang)) {
    body = hljs.highlight(token.content, { language: lang, ignoreIllegals: true }).value;
  } else {
    body = escapeHtml(token.content);
  }
  return `<div class="code"><div class="code-head"><span>${escapeHtml(lang || 'text')}</span>` +
    `<button type="button" class="copy">Copy</button></div><pre><code class="hljs">${body}</code></pre></div>`;
};

// Links open in a new tab and send no referrer.
const defaultLinkOpen = md.renderer.rules.link_open || ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('target', '_blank');
  tokens[idx].attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(text) {
  return md.render(text);
}

// The offset after the last blank line that is outside a code fence or a $$ block: text
// before it no longer changes how it renders as more arrives (to a first approximation:
// the final render redoes the whole reply).
export function stableBoundary(text) {
  let boundary = 0;
  let fence = null;
  let math = false;
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) break;  // the last line is still arriving
    const line = text.slice(pos, nl);
    pos = nl + 1;
    const trimmed = line.trimStart();
    const marker = /^(`{3,}|~{3,})/.exec(trimmed);
    if (fence) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length) fence = null;
    } else if (marker) {
      fence = marker[1];
    } else if (trimmed.startsWith('$$')) {
      if (!(trimmed.length > 2 && trimmed.trimEnd().endsWith('$$'))) math = !math;
    } else if (line.trim() === '' && !math) {
      boundary = pos;
    }
  }
  return boundary;
}

// A reply's content while it streams: finished paragraphs are rendered once and kept; only
// the tail (from the last stable boundary) is rendered again on each frame, so a frame's
// work does not grow with the length of the reply.
export class MarkdownView {
  constructor(el) {
    this.el = el;
    this.stable = document.createElement('div');
    this.tail = document.createElement('div');
    this.el.replaceChildren(this.stable, this.tail);
    this.stableLength = 0;
  }

  update(text) {
    const cut = stableBoundary(text);
    if (cut > this.stableLength) {
      const part = document.createElement('div');
      part.innerHTML = renderMarkdown(text.slice(this.stableLength, cut));
      this.stable.append(part);
      this.stableLength = cut;
    }
    this.tail.innerHTML = renderMarkdown(text.slice(this.stableLength));
    // How much of the reply this view has drawn: the rendered tail may shrink as markdown
    // closes (a "**" pair becomes bold), so the source length is what only grows.
    this.el.dataset.chars = String(text.length);
  }

  // The whole reply at once, as it will be shown from now on.
  finish(text) {
    this.el.innerHTML = renderMarkdown(text);
  }
}
