// A plain load on an OpenAI-style /v1/completions endpoint: N requests, C at a time, each asking
// for exactly MAX tokens (ignore_eos), not streamed; prints output tokens per second of wall
// time. For servers whose chat endpoint cannot be driven by `duet bench serve` (llama-server's
// chat output parser rejects a random-weight model's text mid-stream), so that duet and
// llama-server are compared on the same raw-prompt endpoint.
//
//   node bench/completions_load.mjs URL [--n 16] [--concurrency 8] [--max-tokens 128]
//                                   [--extra '{"json_schema": {...}}'] [--label TEXT]
const args = process.argv.slice(2);
const url = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const n = Number(opt('n', 16)), conc = Number(opt('concurrency', 8)), maxTokens = Number(opt('max-tokens', 128));
const extra = JSON.parse(opt('extra', '{}'));
const label = opt('label', url);
if (!url) {
  console.error('usage: completions_load.mjs URL [--n N] [--concurrency C] [--max-tokens M] [--extra JSON]');
  process.exit(2);
}

// Prompts differ per request (no prefix cache hits between them), about 64 tokens each.
const words = 'apple river stone cloud market engine silver garden window thunder paper orbit'.split(' ');
const prompt = (i) => Array.from({ length: 60 }, (_, k) => words[(i * 7 + k * 13) % words.length]).join(' ');

let next = 0, tokens = 0, failed = 0;
const errors = [];
async function worker() {
  while (next < n) {
    const i = next++;
    const body = { prompt: prompt(i), max_tokens: maxTokens, temperature: 1, seed: i + 1, ignore_eos: true, ...extra };
    try {
      const r = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const j = await r.json();
      if (!r.ok) throw new Error(`${r.status} ${JSON.stringify(j).slice(0, 200)}`);
      tokens += j.usage.completion_tokens;
    } catch (e) {
      failed++;
      errors.push(e.message);
    }
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: conc }, worker));
const s = (performance.now() - t0) / 1000;
console.log(`${label.padEnd(34)} ${(tokens / s).toFixed(1)} tok/s (${tokens} tokens in ${s.toFixed(1)} s, ${failed} failed)`);
if (failed) console.log(`  first error: ${errors[0]}`);
