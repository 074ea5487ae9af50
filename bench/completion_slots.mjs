// Aggregate generation rate of an OpenAI-compatible server with N requests in flight, over
// the plain /v1/completions endpoint (no chat template, no output parsing, so a server's
// chat-output parser cannot fail a random model's text). Every request asks for exactly
// --tokens tokens (ignore_eos); the rate is the sum of usage.completion_tokens over the
// wall time of the whole batch, repeated --rounds times (median quoted).
//
//   node bench/completion_slots.mjs --url http://127.0.0.1:8080 [--concurrency 8]
//        [--tokens 64] [--rounds 3] [--llama-native 1] [--temperature 0] [--top-p 1]
//
// --temperature above 0 samples (each request seeded by its index) instead of taking the
// most likely token, to include the sampler's work in the rate.
//
// --llama-native 1 uses llama-server's own /completion endpoint (n_predict, tokens_predicted)
// instead. The llama.cpp build measured in docs/PERF.md (d3936498) answers both endpoints with
// HTTP 500 when a random model's text does not parse, so its rate there came from its log.
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const url = (args.url ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const concurrency = Number(args.concurrency ?? 8);
const tokens = Number(args.tokens ?? 64);
const rounds = Number(args.rounds ?? 3);
const native = args['llama-native'] === '1';
const temperature = Number(args.temperature ?? 0);
const topP = Number(args['top-p'] ?? 1);

const models = await (await fetch(`${url}/v1/models`)).json();
const model = models.data[0].id;

async function one(i) {
  const prompt = `Request ${i}: tell a long story about the number ${i * 7919}.`;
  const body = native
    ? { prompt, n_predict: tokens, ignore_eos: true, temperature, top_p: topP, seed: i, cache_prompt: false }
    : { model, prompt, max_tokens: tokens, ignore_eos: true, min_tokens: tokens, temperature, top_p: topP, seed: i };
  const res = await fetch(`${url}${native ? '/completion' : '/v1/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const out = await res.json();
  return native ? out.tokens_predicted : out.usage.completion_tokens;
}

const rates = [];
await Promise.all(Array.from({ length: concurrency }, (_, i) => one(i)));  // warm-up
for (let r = 0; r < rounds; ++r) {
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: concurrency }, (_, i) => one(i + r * concurrency)));
  const seconds = (performance.now() - t0) / 1000;
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== concurrency * tokens) throw new Error(`expected ${concurrency * tokens} tokens, got ${total}`);
  rates.push(total / seconds);
}
rates.sort((a, b) => a - b);
const median = rates[Math.floor(rates.length / 2)];
console.log(JSON.stringify({ url, model, concurrency, tokens, rounds, temperature, top_p: topP, tok_s: rates, median_tok_s: median }));
