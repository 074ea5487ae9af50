// Conversations, kept in the browser's localStorage (one JSON document): nothing about them
// is stored on the server. A conversation is { id, title, created, updated, messages }; a
// message is { role, content } plus, for replies, { reasoning, thoughtMs, mode, stats, state }.
const KEY = 'duet.conversations.v1';

function load() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY));
    if (v && Array.isArray(v.conversations)) return v;
  } catch {
    // unreadable: start over rather than break the page
  }
  return { conversations: [], current: null };
}

export class Store {
  constructor() {
    this.state = load();
  }

  save() {
    try {
      localStorage.setItem(KEY, JSON.stringify(this.state));
    } catch (e) {
      console.warn('duet: could not save the conversations', e);
    }
  }

  list() {
    return [...this.state.conversations].sort((a, b) => b.updated - a.updated);
  }

  get(id) {
    return this.state.conversations.find((c) => c.id === id) || null;
  }

  current() {
    return this.get(this.state.current);
  }

  select(id) {
    this.state.current = id;
    this.save();
  }

  create() {
    const now = Date.now();
    const c = { id: `c${now.toString(36)}${Math.random().toString(36).slice(2, 8)}`, title: 'New chat', created: now, updated: now, messages: [] };
    this.state.conversations.push(c);
    this.state.current = c.id;
    this.save();
    return c;
  }

  rename(id, title) {
    const c = this.get(id);
    if (!c) return;
    c.title = title.trim() || c.title;
    c.titled = true;
    this.save();
  }

  remove(id) {
    this.state.conversations = this.state.conversations.filter((c) => c.id !== id);
    if (this.state.current === id) this.state.current = this.list()[0]?.id ?? null;
    this.save();
  }

  touch(c) {
    c.updated = Date.now();
    // The first user message names the conversation until the user renames it.
    const first = c.messages.find((m) => m.role === 'user');
    if (!c.titled && first) c.title = first.content.replace(/\s+/g, ' ').trim().slice(0, 48) || 'New chat';
    this.save();
  }
}
