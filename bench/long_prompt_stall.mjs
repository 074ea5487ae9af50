// How long streams that are decoding wait while a long prompt arrives and is prefilled: S
// streams generate on /v1/completions; after a warm-up, one request with a prompt of about
// P tokens (max_tokens 1) is sent; the streams' gaps between tokens are collected before it
// and while it is in flight. Prints one JSON line: the prompt's tokens and seconds, and the
// gaps (p50, p99, max, count, in milliseconds) before and during.
//
//   node bench/long_prompt_stall.mjs URL [--streams 4] [--prompt-tokens 16000] [--warmup 3]
const args = process.argv.slice(2);
const url = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const streams = opt('streams', 4), promptTokens = opt('prompt-tokens', 16000), warmup = opt('warmup', 3);
if (!url) {
  console.error('usage: long_prompt_stall.mjs URL [--streams S] [--prompt-tokens P] [--warmup SECONDS]');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const post = (path, body, signal) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

// Each stream: arrival times (ms) of its token events.
const arrivals = Array.from({ length: streams }, () => []);
const stop = new AbortController();
async function stream(i) {
  const r = await post('/v1/completions', {
    prompt: `Stream ${i} says:`, max_tokens: 4000, temperature: 1, seed: i + 1, ignore_eos: true, stream: true,
  }, stop.signal);
  if (!r.ok) throw new Error(`stream ${i}: ${r.status} ${await r.text()}`);
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const now = performance.now();
      buf += decoder.decode(value, { stream: true });
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (event.startsWith('data: {')) arrivals[i].push(now);
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
}

const running = Array.from({ length: streams }, (_, i) => stream(i).catch((e) => e));
await sleep(warmup * 1000);
// About one token per word: distinct words so that no block repeats an earlier one.
const words = 'apple river stone cloud market engine silver garden window thunder paper orbit'.split(' ');
const prompt = Array.from({ length: promptTokens }, (_, k) => words[(k * 7 + (k >> 4)) % words.length]).join(' ');
const sent = performance.now();
const r = await post('/v1/completions', { prompt, max_tokens: 1, temperature: 0 });
const j = await r.json();
const done = performance.now();
if (!r.ok) throw new Error(`long prompt: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
await sleep(500);
stop.abort();
for (const res of await Promise.all(running)) if (res instanceof Error && res.name !== 'AbortError') throw res;

const summary = (gaps) => {
  const s = [...gaps].sort((a, b) => a - b);
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null);
  const round = (x) => (x === null ? null : Math.round(x * 10) / 10);
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(s.at(-1) ?? null), count: s.length };
};
const before = [], during = [];
for (const a of arrivals)
  for (let k = 1; k < a.length; k++) {
    const gap = a[k] - a[k - 1];
    if (a[k] <= sent) before.push(gap);
    else if (a[k - 1] < done) during.push(gap);  // any gap that overlaps the prefill
  }
console.log(JSON.stringify({
  streams, prompt_tokens: j.usage.prompt_tokens, prefill_s: Math.round(done - sent) / 1000,
  gaps_before_ms: summary(before), gaps_during_ms: summary(during),
}));
