// The chat page's controller: wires the composer, the conversation list, the model picker
// and the theme to the store and the streaming API.
import '../styles/base.css';
import '../styles/layout.css';
import '../styles/messages.css';
import '../styles/code.css';
import 'katex/dist/katex.min.css';
import { listModels, streamChat, useKeyPrompt } from './api.js';
import { drawConversation } from './conversation_view.js';
import { keyForm } from './key_form.js';
import { parseModeHeader } from './reply.js';
import { drawSidebar } from './sidebar.js';
import { Store } from './store.js';

const $ = (id) => document.getElementById(id);
const ui = {
  messages: $('messages'), input: $('input'), composer: $('composer'), send: $('send'), stop: $('stop'),
  think: $('think'), budget: $('budget'), maxTokens: $('max-tokens'), model: $('model'),
  modelNote: $('model-note'), list: $('conversations'), newChat: $('new-chat'), theme: $('theme'),
  toggleSidebar: $('toggle-sidebar'),
};
const store = new Store();
let running = null;  // { controller, view } while a reply streams

let modelsFailed = false;  // the model list could not be loaded (e.g. no key given then)

// A keyed server: the API's 401 asks for the key (kept in this tab), then the call goes on.
// A model list that failed for want of a key is loaded again once one is given.
const askKey = keyForm($('key-dialog'));
useKeyPrompt(async (refused) => {
  const key = await askKey(refused);
  if (key && modelsFailed) setTimeout(loadModels);
  return key;
});

// --- settings (kept across reloads) ---
const SETTINGS = 'duet.settings.v1';
function loadSettings() {
  let s = {};
  try {
    s = JSON.parse(localStorage.getItem(SETTINGS)) || {};
  } catch {
    s = {};
  }
  if (['auto', 'on', 'off'].includes(s.think)) ui.think.value = s.think;
  ui.budget.value = s.budget || '';
  ui.maxTokens.value = s.maxTokens || '';
  return s;
}
const settings = loadSettings();
applyTheme(settings.theme || 'system');
function saveSettings() {
  settings.think = ui.think.value;
  settings.budget = ui.budget.value;
  settings.maxTokens = ui.maxTokens.value;
  settings.model = ui.model.value;
  localStorage.setItem(SETTINGS, JSON.stringify(settings));
}
for (const e of [ui.think, ui.budget, ui.maxTokens, ui.model]) e.addEventListener('change', saveSettings);

function applyTheme(theme) {
  settings.theme = theme;
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  ui.theme.title = `Theme: ${theme}`;
}
ui.theme.addEventListener('click', () => {
  const order = ['system', 'light', 'dark'];
  applyTheme(order[(order.indexOf(settings.theme) + 1) % order.length]);
  saveSettings();
});

// --- drawing ---
const actions = {
  busy: () => running !== null,
  redraw: () => redraw(),
  regenerate: () => regenerate(),
  resend: (index, text) => resend(index, text),
};
function redraw() {
  const views = drawConversation(ui.messages, store.current(), actions);
  drawSidebar(ui.list, store, {
    onSelect: (id) => {
      if (running) return;
      store.select(id);
      document.body.classList.remove('sidebar-open');
      redraw();
    },
    onDelete: (id) => {
      if (running && store.current()?.id === id) return;
      store.remove(id);
      redraw();
    },
  });
  return views;
}

function setRunning(r) {
  running = r;
  ui.send.hidden = r !== null;
  ui.stop.hidden = r === null;
  document.body.dataset.streaming = r ? 'true' : 'false';
}

// --- generation ---
function requestBody(conversation) {
  const body = {
    model: ui.model.value || undefined,
    // Earlier replies are sent as their answers only (Qwen3 drops past reasoning anyway).
    messages: conversation.messages.map(({ role, content }) => ({ role, content })),
    mode: { on: 'thinking', off: 'non_thinking', auto: 'auto' }[ui.think.value],
  };
  const budget = parseInt(ui.budget.value, 10);
  if (ui.think.value !== 'off' && budget > 0) body.thinking_budget = budget;
  const maxTokens = parseInt(ui.maxTokens.value, 10);
  if (maxTokens > 0) body.max_tokens = maxTokens;
  return body;
}

async function generate(conversation) {
  const body = requestBody(conversation);
  const reply = { role: 'assistant', content: '', state: 'streaming' };
  conversation.messages.push(reply);
  store.touch(conversation);
  const controller = new AbortController();
  setRunning({ controller });
  const views = redraw();
  const view = views.get(conversation.messages.length - 1);
  view.root.scrollIntoView({ block: 'end' });
  view.start(performance.now());
  let usage = null;
  let state = 'done';
  let error = null;
  try {
    await streamChat(body, {
      signal: controller.signal,
      onOpen: (headers) => {
        const mode = parseModeHeader(headers.get('X-Duet-Thinking-Mode'));
        if (mode) view.setMode(mode);
      },
      onChunk: (chunk, arrival) => {
        if (chunk.usage) usage = chunk.usage;
        if (chunk.duet) view.setMode({ thinking: chunk.duet.thinking, source: chunk.duet.mode_source, reason: chunk.duet.reason });
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) return;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (reasoning) view.push('reasoning', reasoning, arrival);
        if (delta.content) view.push('content', delta.content, arrival);
      },
    });
  } catch (e) {
    if (e.name === 'AbortError') {
      state = 'stopped';
    } else {
      state = 'error';
      error = e.message;
    }
  }
  await view.finish(state, usage, error);
  setRunning(null);
  store.touch(conversation);
  redraw();
}

function stop() {
  if (running) running.controller.abort();
}

function send() {
  const text = ui.input.value;
  if (running || !text.trim()) return;
  const conversation = store.current() || store.create();
  conversation.messages.push({ role: 'user', content: text });
  ui.input.value = '';
  generate(conversation);
}

function regenerate() {
  const c = store.current();
  if (running || !c || c.messages.at(-1)?.role !== 'assistant') return;
  c.messages.pop();
  generate(c);
}

function resend(index, text) {
  const c = store.current();
  if (running || !c || !text.trim()) return;
  c.messages.splice(index);
  c.messages.push({ role: 'user', content: text });
  generate(c);
}

// --- input ---
ui.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  send();
});
ui.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && running) {
    e.preventDefault();
    stop();
  }
});
ui.stop.addEventListener('click', stop);
ui.newChat.addEventListener('click', () => {
  if (running) return;
  store.create();
  redraw();
  ui.input.focus();
});
ui.toggleSidebar.addEventListener('click', () => document.body.classList.toggle('sidebar-open'));

// Copy buttons of code blocks (rendered as HTML strings, so handled here by delegation).
ui.messages.addEventListener('click', async (e) => {
  const b = e.target.closest('button.copy');
  if (!b) return;
  const code = b.closest('.code').querySelector('code').textContent;
  try {
    await navigator.clipboard.writeText(code);
    b.textContent = 'Copied';
  } catch {
    b.textContent = 'Copy failed';
  }
  setTimeout(() => (b.textContent = 'Copy'), 1500);
});

// --- start ---
async function loadModels() {
  try {
    modelsFailed = false;
    const models = await listModels();
    ui.model.replaceChildren(...models.map((m) => new Option(m.id, m.id)));
    if (models.some((m) => m.id === settings.model)) ui.model.value = settings.model;
    const chosen = models.find((m) => m.id === ui.model.value);
    const demo = chosen && chosen.owned_by === 'duet-demo';
    ui.modelNote.textContent = demo ? 'demo model: random weights, its text is noise' : '';
    ui.modelNote.title = chosen?.description || '';
  } catch (e) {
    modelsFailed = true;
    ui.modelNote.textContent = `cannot list models: ${e.message}`;
  }
}
ui.model.addEventListener('change', loadModels);

// A reply that was streaming when the page went away is kept as stopped.
for (const c of store.state.conversations)
  for (const m of c.messages) if (m.state === 'streaming') m.state = 'stopped';
redraw();
loadModels();
ui.input.focus();
document.body.dataset.ready = 'true';
