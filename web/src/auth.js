// The API key of a keyed server (duet serve --api-key): the page itself loads without one, and
// its first API call answers 401. Then the user is asked for the key (askKey, a form of the
// page), which is kept in the tab's sessionStorage and sent as `Authorization: Bearer KEY` on
// every API call; a key the server refuses is dropped and the user asked again. Pure: fetch,
// the storage and the question are passed in (tests/node/web_units.mjs runs it under node).
export const KEY_STORE = 'duet.apiKey';

export class KeyedFetch {
  // askKey(refused) resolves to the key the user typed, or null when they gave none; refused
  // is true when the server refused the key that was sent.
  constructor({ fetch, storage, askKey }) {
    this.fetchImpl = fetch;
    this.storage = storage;
    this.askKey = askKey;
    this.asking = null;  // one question at a time, shared by every call that needs the key
  }

  key() {
    try {
      return this.storage.getItem(KEY_STORE) || '';
    } catch {
      return '';  // storage disabled: the key lives only as long as the question's answer
    }
  }

  setKey(key) {
    try {
      if (key) this.storage.setItem(KEY_STORE, key);
      else this.storage.removeItem(KEY_STORE);
    } catch {
      // storage disabled: asked again on the next 401
    }
  }

  // Asks once for every caller waiting on a key.
  ask(refused) {
    if (!this.asking) {
      this.asking = Promise.resolve(this.askKey(refused)).finally(() => {
        this.asking = null;
      });
    }
    return this.asking;
  }

  // fetch(url, init) with the key; a 401 asks for a key (again, when one was refused) and
  // retries. Resolves to the last response: a 401 only when the user gave no key.
  async fetch(url, init = {}) {
    for (;;) {
      let key = this.key();
      const refused = key !== '';
      const headers = new Headers(init.headers || {});
      try {
        if (key) headers.set('Authorization', `Bearer ${key}`);
      } catch {
        // Not a header value (the form asks for printable ASCII): dropped, asked again.
        this.setKey('');
        key = '';
      }
      const res = await this.fetchImpl(url, { ...init, headers });
      if (res.status !== 401) return res;
      // Another call may have got a new key while this one was on its way: use that one.
      if (this.key() !== key) continue;
      if (key) this.setKey('');
      const next = await this.ask(refused);
      if (!next) return res;
      this.setKey(next);
    }
  }
}
