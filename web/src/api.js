// The server's OpenAI API, from plain fetch: the model list and a streamed chat completion.
// Every call goes through KeyedFetch, which sends the API key of a keyed server (auth.js).
import { KeyedFetch } from './auth.js';
import { SseParser } from './sse.js';

let api = null;

// askKey(refused): the page's question for the key (key_form.js); see auth.js.
export function useKeyPrompt(askKey) {
  api = new KeyedFetch({ fetch: (url, init) => fetch(url, init), storage: sessionStorage, askKey });
}

const apiFetch = (url, init) => (api ? api.fetch(url, init) : fetch(url, init));

// The models themselves: the mode-pinned names the server also lists (M-thinking, M-fast,
// whose parent is M) are left out, since the page sets the mode of every message itself.
export async function listModels() {
  const res = await apiFetch('/v1/models');
  if (!res.ok) throw new Error(await errorOf(res));
  return ((await res.json()).data || []).filter((m) => !m.parent);
}

// The error message of a failed request, from the OpenAI error body when there is one.
async function errorOf(res) {
  try {
    const j = await res.json();
    if (j.error && j.error.message) return j.error.message;
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.status}`;
}

// Streams one chat completion. onOpen(headers) runs when the response starts; onChunk(chunk,
// arrival) for every parsed chunk, with performance.now() taken the moment its bytes came out
// of the body reader (the page's clock for "token arrived"). Resolves when the stream ends;
// rejects with an AbortError when `signal` aborts (the server then sees the connection close
// and cancels the generation).
export async function streamChat(body, { signal, onOpen, onChunk }) {
  const res = await apiFetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!res.ok) throw new Error(await errorOf(res));
  onOpen(res.headers);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const arrival = performance.now();
    for (const data of parser.push(decoder.decode(value, { stream: true }))) {
      if (data === '[DONE]') return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message || 'the server reported an error');
      onChunk(chunk, arrival);
    }
  }
}
