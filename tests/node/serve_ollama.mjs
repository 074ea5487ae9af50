// The Ollama dialect through the official `ollama` client, against the demo model (random
// weights: checks are on structure and counts). The server runs with --think off and
// --debug-timestamps (each NDJSON line then says how many engine tokens it covers).
import { Ollama } from 'ollama';
import { baseUrl, request, check, checkEq, finish } from './lib/http_util.mjs';
import { expectedPromptTokens, countTokens } from './lib/demo_model.mjs';

const ollama = new Ollama({ host: baseUrl() });
const hi = [{ role: 'user', content: 'hi' }];
const model = 'qwen3-demo';

function checkDone(r, numPredict, what) {
  checkEq(r.done, true, `${what}: done`);
  check(r.done_reason === 'length' || r.done_reason === 'stop', `${what}: done_reason ${r.done_reason}`);
  if (r.done_reason === 'length') checkEq(r.eval_count, numPredict, `${what}: eval_count = num_predict`);
  else check(r.eval_count < numPredict, `${what}: stopped early`);
  for (const k of ['total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration'])
    check(Number.isInteger(r[k]) && r[k] >= 0, `${what}: ${k} is integer nanoseconds`);
  check(r.total_duration >= r.prompt_eval_duration + r.eval_duration, `${what}: total covers prompt and eval`);
  check(r.total_duration < 60e9, `${what}: durations are nanoseconds, not something larger`);
  check(!Number.isNaN(Date.parse(r.created_at)), `${what}: created_at`);
}

// 1. Chat, not streamed.
{
  const r = await ollama.chat({ model, messages: hi, stream: false, options: { num_predict: 10, seed: 11 } });
  checkEq(r.model, model, 'chat model');
  checkEq(r.message.role, 'assistant', 'chat role');
  check(typeof r.message.content === 'string', 'chat content');
  checkEq(r.message.thinking, undefined, 'no thinking with --think off');
  checkDone(r, 10, 'chat');
  checkEq(r.prompt_eval_count, await expectedPromptTokens(hi, { thinking: false }), 'prompt_eval_count (jinja reference)');
  checkEq(r.duet.thinking, false, 'duet.thinking');
  checkEq(r.duet.mode_source, 'server_default', 'mode source: the --think default');
  const again = await ollama.chat({ model, messages: hi, stream: false, options: { num_predict: 10, seed: 11 } });
  checkEq(again.message.content, r.message.content, 'a seed fixes the output');
}

// 2. Chat, streamed: NDJSON parts, done only on the last, tokens add up to eval_count.
{
  const parts = [];
  for await (const p of await ollama.chat({ model: 'qwen3-demo:latest', messages: hi, stream: true, options: { num_predict: 25, seed: 5 } }))
    parts.push(p);
  const last = parts[parts.length - 1];
  check(parts.slice(0, -1).every((p) => p.done === false), 'only the last part is done');
  checkDone(last, 25, 'chat stream');
  const tokens = parts.reduce((s, p) => s + (p.duet_debug ? p.duet_debug.tokens : 0), 0);
  checkEq(tokens, last.eval_count, 'streamed tokens = eval_count');
  check(parts.slice(0, -1).every((p) => typeof p.message.content === 'string'), 'parts carry message.content');
}

// 3. think: true, with the reply continuing an assistant prefill that opens the think
// block: the output is reasoning, in message.thinking.
{
  const math = [{ role: 'user', content: 'What is 17 * 23? Show your work.' }];
  const messages = [...math, { role: 'assistant', content: '<think>\n' }];
  const r = await ollama.chat({ model, messages, think: true, stream: false, options: { num_predict: 12, seed: 2 } });
  check(typeof r.message.thinking === 'string' && r.message.thinking.length > 0, 'message.thinking present');
  check(!r.message.thinking.includes('<think>') && !r.message.content.includes('</think>'), 'no tags in thinking/content');
  checkEq(r.duet.thinking, true, 'think true → thinking');
  checkEq(r.duet.mode_source, 'think', 'mode source think');
  checkEq(r.prompt_eval_count, await expectedPromptTokens(math, { thinking: true, prefill: '<think>\n' }), 'prefill prompt count');
  checkDone(r, 12, 'think chat');

  const parts = [];
  for await (const p of await ollama.chat({ model, messages, think: true, stream: true, options: { num_predict: 12, seed: 2 } }))
    parts.push(p);
  const thinking = parts.map((p) => p.message.thinking ?? '').join('');
  const content = parts.map((p) => p.message.content).join('');
  checkEq(thinking, r.message.thinking, 'streamed thinking = non-streamed thinking');
  checkEq(content, r.message.content, 'streamed content = non-streamed content');

  const low = await ollama.chat({ model, messages: math, think: 'low', stream: false, options: { num_predict: 2 } });
  checkEq(low.duet.thinking_budget, 1024, 'think "low" → budget 1024');
  const off = await ollama.chat({ model, messages: math, think: false, stream: false, options: { num_predict: 2 } });
  checkEq(off.duet.thinking, false, 'think false');
  checkEq(off.prompt_eval_count, await expectedPromptTokens(math, { thinking: false }), 'think false prompt has the empty think block');
}

// 4. Generate: templated and raw.
{
  const r = await ollama.generate({ model, prompt: 'hi', stream: false, options: { num_predict: 8, seed: 1 } });
  check(typeof r.response === 'string', 'generate response');
  checkDone(r, 8, 'generate');
  checkEq(r.prompt_eval_count, await expectedPromptTokens(hi, { thinking: false }), 'generate uses the chat template');
  const sys = await ollama.generate({ model, prompt: 'hi', system: 'Be brief.', stream: false, options: { num_predict: 1 } });
  checkEq(sys.prompt_eval_count, await expectedPromptTokens([{ role: 'system', content: 'Be brief.' }, ...hi], { thinking: false }), 'system prompt');
  const raw = await ollama.generate({ model, prompt: 'abc<|im_end|>', raw: true, stream: false, options: { num_predict: 4 } });
  checkEq(raw.prompt_eval_count, countTokens('abc<|im_end|>'), 'raw prompt: no template, control tokens parsed');
  const parts = [];
  for await (const p of await ollama.generate({ model, prompt: 'hi', stream: true, options: { num_predict: 6, seed: 4 } })) parts.push(p);
  const last = parts[parts.length - 1];
  checkDone(last, 6, 'generate stream');
  checkEq(parts.reduce((s, p) => s + (p.duet_debug ? p.duet_debug.tokens : 0), 0), last.eval_count, 'generate stream tokens');
}

// 5. Lifecycle requests: no prompt loads; keep_alive 0 unloads.
{
  const load = await request({ method: 'POST', path: '/api/chat', body: JSON.stringify({ model }) });
  checkEq(JSON.parse(load.body).done_reason, 'load', 'chat without messages → load');
  const unload = await request({ method: 'POST', path: '/api/generate', body: JSON.stringify({ model, keep_alive: 0 }) });
  checkEq(JSON.parse(unload.body).done_reason, 'unload', 'keep_alive 0 → unload');
  const gen = await request({ method: 'POST', path: '/api/generate', body: JSON.stringify({ model, keep_alive: '5m' }) });
  checkEq(JSON.parse(gen.body).done_reason, 'load', 'generate without prompt → load');
}

// 6. Listings and errors through the client.
{
  const list = await ollama.list();
  checkEq(list.models[0].name, 'qwen3-demo:latest', 'list');
  const show = await ollama.show({ model });
  check(show.capabilities.includes('thinking') && show.capabilities.includes('tools'), 'show capabilities');
  const ps = await ollama.ps();
  checkEq(ps.models.length, 1, 'ps');
  let err = null;
  try { await ollama.chat({ model, messages: hi, stream: false, options: { temperature: -3 } }); } catch (e) { err = e; }
  check(err && err.status_code === 400 && /temperature/.test(err.error), `bad option → 400 ResponseError (${err && err.error})`);
  let nf = null;
  try { await ollama.chat({ model: 'llama3:8b', messages: hi, stream: false }); } catch (e) { nf = e; }
  check(nf && nf.status_code === 404, 'unknown model → 404');
}

checkEq((await request({ path: '/health' })).status, 200, 'server alive');
finish('serve_ollama');
