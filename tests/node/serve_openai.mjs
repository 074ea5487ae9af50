// The OpenAI dialect through the official `openai` client, against the demo model (random
// weights: the text is noise, so the checks are on structure, counts and fields). Special
// tokens are banned with logit_bias where a test needs an exact token count, and reasoning is
// entered through an assistant prefill ("<think>\n"), since a random model never opens a
// think block by itself. The server runs with --debug-timestamps.
import OpenAI from 'openai';
import { baseUrl, request, check, checkEq, finish } from './lib/http_util.mjs';
import { BAN_SPECIAL, BUDGET_CLOSING, TOKENS, countTokens, expectedPromptTokens } from './lib/demo_model.mjs';

const client = new OpenAI({ baseURL: `${baseUrl()}/v1`, apiKey: 'not-needed', maxRetries: 0 });
const hi = [{ role: 'user', content: 'hi' }];
const math = [{ role: 'user', content: 'Solve 3x + 5 = 20 for x, step by step.' }];
const prefill = (messages) => [...messages, { role: 'assistant', content: '<think>\n' }];

async function collect(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

// 1. Non-streaming, non-thinking: exact counts, finish "length", the mode it ran in.
{
  const { data: r, response } = await client.chat.completions.create({
    model: 'qwen3-demo', messages: hi, max_tokens: 12, logit_bias: BAN_SPECIAL, seed: 7,
    chat_template_kwargs: { enable_thinking: false },
  }).withResponse();
  checkEq(r.object, 'chat.completion', 'object');
  check(/^chatcmpl-/.test(r.id), 'id prefix');
  checkEq(r.model, 'qwen3-demo', 'model echoed');
  checkEq(r.choices.length, 1, 'one choice');
  checkEq(r.choices[0].finish_reason, 'length', 'finish_reason with max_tokens');
  checkEq(r.choices[0].message.role, 'assistant', 'role');
  check(typeof r.choices[0].message.content === 'string', 'content is a string');
  checkEq(r.choices[0].message.reasoning_content, undefined, 'no reasoning when not thinking');
  checkEq(r.usage.completion_tokens, 12, 'completion_tokens = max_tokens');
  checkEq(r.usage.prompt_tokens, await expectedPromptTokens(hi, { thinking: false }), 'prompt_tokens (jinja reference)');
  checkEq(r.usage.total_tokens, r.usage.prompt_tokens + 12, 'total_tokens');
  check(typeof r.usage.prompt_tokens_details.cached_tokens === 'number', 'cached_tokens present');
  checkEq(r.usage.completion_tokens_details.reasoning_tokens, 0, 'reasoning_tokens 0');
  checkEq(r.duet.thinking, false, 'duet.thinking');
  checkEq(r.duet.mode_source, 'chat_template_kwargs', 'duet.mode_source');
  checkEq(response.headers.get('x-duet-thinking-mode'), 'non-thinking; source=chat_template_kwargs', 'mode header');
  // Same seed, same text.
  const again = await client.chat.completions.create({
    model: 'qwen3-demo', messages: hi, max_tokens: 12, logit_bias: BAN_SPECIAL, seed: 7,
    chat_template_kwargs: { enable_thinking: false },
  });
  checkEq(again.choices[0].message.content, r.choices[0].message.content, 'a seed fixes the output');
}

// 2. Streaming with include_usage: a role chunk, one chunk per token (logprobs count them),
// the finish chunk, the usage chunk with choices [], [DONE].
{
  const n = 20;
  const chunks = await collect(await client.chat.completions.create({
    messages: hi, max_tokens: n, stream: true, stream_options: { include_usage: true },
    logit_bias: BAN_SPECIAL, logprobs: true, top_logprobs: 2, reasoning_effort: 'none',
  }));
  checkEq(chunks[0].choices[0].delta.role, 'assistant', 'first chunk carries the role');
  check(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id), 'chunk ids');
  const tokenChunks = chunks.filter((c) => c.choices.length && c.choices[0].logprobs);
  const logprobEntries = tokenChunks.flatMap((c) => c.choices[0].logprobs.content);
  checkEq(logprobEntries.length, n, 'one logprob entry per streamed token');
  check(logprobEntries.every((e) => typeof e.logprob === 'number' && e.logprob <= 0 && e.top_logprobs.length === 2 &&
                               Array.isArray(e.bytes)), 'logprob entries well formed');
  const finishChunk = chunks.find((c) => c.choices.length && c.choices[0].finish_reason);
  checkEq(finishChunk.choices[0].finish_reason, 'length', 'streamed finish_reason');
  checkEq(finishChunk.duet.mode_source, 'reasoning_effort', 'mode source in the final chunk');
  const last = chunks[chunks.length - 1];
  checkEq(last.choices.length, 0, 'usage chunk has choices []');
  checkEq(last.usage.completion_tokens, n, 'usage.completion_tokens = streamed tokens');
  checkEq(last.usage.completion_tokens, logprobEntries.length, 'usage matches the stream');
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  check(text.length > 0, 'streamed some content');
  // --debug-timestamps: every engine event is one chunk, stamped.
  const stamped = chunks.filter((c) => c.duet_debug);
  checkEq(stamped.reduce((s, c) => s + c.duet_debug.tokens, 0), n, 'debug chunks cover every token');
  check(stamped.every((c) => c.duet_debug.engine_ns <= c.duet_debug.write_ns), 'engine time before write time');
}

// 3. Thinking through a prefill, with a budget: the engine closes the think block after the
// budget with Qwen's phrase, and the model answers.
{
  const budget = 5;
  const closing = countTokens(BUDGET_CLOSING);
  // The phrase through its </think> is reasoning; the "\n\n" after it is not (no more than
  // when the model writes it).
  const closingReasoning = countTokens(BUDGET_CLOSING.slice(0, BUDGET_CLOSING.indexOf('</think>') + '</think>'.length));
  const r = await client.chat.completions.create({
    messages: prefill(math), max_tokens: budget + closing + 20, continue_final_message: true, add_generation_prompt: false,
    chat_template_kwargs: { enable_thinking: true }, thinking_token_budget: budget,
    logit_bias: BAN_SPECIAL,
  });
  const m = r.choices[0].message;
  check(typeof m.reasoning_content === 'string' && m.reasoning_content.length > 0, 'reasoning_content present');
  checkEq(m.reasoning, m.reasoning_content, 'reasoning = reasoning_content');
  check(m.reasoning_content.includes('Considering the limited time by the user'), 'budget phrase in the reasoning');
  check(!m.reasoning_content.includes('</think>') && !m.content.includes('</think>'), 'no tags in the output');
  check(m.content.length > 0, 'the model answers after the budget');
  checkEq(r.usage.completion_tokens_details.reasoning_tokens, budget + closingReasoning, 'reasoning_tokens = budget + closing phrase through </think>');
  checkEq(r.usage.completion_tokens, budget + closing + 20, 'completion_tokens');
  checkEq(r.choices[0].finish_reason, 'length', 'finish_reason');
  checkEq(r.usage.prompt_tokens, await expectedPromptTokens(math, { thinking: true, prefill: '<think>\n' }), 'prefill prompt_tokens');
  checkEq(r.duet.thinking, true, 'duet.thinking');
  checkEq(r.duet.thinking_budget, budget, 'duet.thinking_budget');
}

// 4. Streaming thinking, no closing tag possible: every token is reasoning; each chunk
// carries reasoning_content and reasoning alike; nothing is content.
{
  const n = 16;
  const chunks = await collect(await client.chat.completions.create({
    messages: prefill(math), max_tokens: n, stream: true, stream_options: { include_usage: true },
    continue_final_message: true, logit_bias: BAN_SPECIAL,
    chat_template_kwargs: { enable_thinking: true }, logprobs: true,
  }));
  const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);
  const withReasoning = deltas.filter((d) => d.reasoning_content !== undefined || d.reasoning !== undefined);
  check(withReasoning.length > 0, 'reasoning deltas streamed');
  check(withReasoning.every((d) => d.reasoning === d.reasoning_content), 'delta.reasoning = delta.reasoning_content');
  check(deltas.every((d) => !d.content), 'no content while reasoning');
  const usage = chunks[chunks.length - 1].usage;
  checkEq(usage.completion_tokens, n, 'completion_tokens');
  checkEq(usage.completion_tokens_details.reasoning_tokens, n, 'every token was reasoning');
  const streamedTokens = chunks.filter((c) => c.choices[0]?.logprobs).flatMap((c) => c.choices[0].logprobs.content).length;
  checkEq(streamedTokens, n, 'streamed token count');
}

// 5. include_reasoning: false drops it; reasoning_format "raw" keeps it inline.
{
  const base = { messages: prefill(math), max_tokens: 10, continue_final_message: true,
                 chat_template_kwargs: { enable_thinking: true }, logit_bias: BAN_SPECIAL };
  const dropped = await client.chat.completions.create({ ...base, include_reasoning: false });
  checkEq(dropped.choices[0].message.reasoning_content, undefined, 'include_reasoning false: no reasoning_content');
  checkEq(dropped.choices[0].message.reasoning, undefined, 'include_reasoning false: no reasoning');
  checkEq(dropped.usage.completion_tokens_details.reasoning_tokens, 10, 'still counted');
  const raw = await client.chat.completions.create({ ...base, reasoning_format: 'raw' });
  check(raw.choices[0].message.content.startsWith('<think>\n'), 'raw: the think block inline in content');
  checkEq(raw.choices[0].message.reasoning_content, undefined, 'raw: no separate reasoning');
}

// 6. Auto mode: the request decides; the response says which mode ran and why.
{
  const { data: a, response: ra } = await client.chat.completions.create({
    messages: math, max_tokens: 2, logit_bias: BAN_SPECIAL, mode: 'auto' }).withResponse();
  checkEq(a.duet.thinking, true, 'auto: math thinks');
  checkEq(a.duet.mode_source, 'auto', 'auto source');
  check(/math/.test(a.duet.reason), `auto reason names the rule: ${a.duet.reason}`);
  checkEq(ra.headers.get('x-duet-thinking-mode'), 'thinking; source=auto', 'auto header');
  checkEq(a.usage.prompt_tokens, await expectedPromptTokens(math, { thinking: true }), 'auto thinking prompt');
  const b = await client.chat.completions.create({ messages: hi, max_tokens: 2, logit_bias: BAN_SPECIAL, mode: 'auto' });
  checkEq(b.duet.thinking, false, 'auto: a greeting does not think');
  checkEq(b.usage.prompt_tokens, await expectedPromptTokens(hi, { thinking: false }), 'auto non-thinking prompt');
  const soft = await client.chat.completions.create({
    messages: [{ role: 'user', content: 'hello there /think' }], max_tokens: 2, logit_bias: BAN_SPECIAL });
  checkEq(soft.duet.thinking, true, '/think soft switch');
  checkEq(soft.duet.mode_source, 'soft_switch', 'soft switch source');
}

// 7. Stop strings end the answer (finish "stop") and are not part of it. Greedy with a
// bias that makes 'A' then 'B' the only likely bytes: the text is "A..." until a "B".
{
  const r = await client.chat.completions.create({
    messages: hi, max_tokens: 64, temperature: 1, seed: 3, logit_bias: { ...BAN_SPECIAL, 65: 50, 66: 50 },
    stop: ['B'], reasoning_effort: 'none',
  });
  checkEq(r.choices[0].finish_reason, 'stop', 'stop string: finish_reason');
  check(/^A*$/.test(r.choices[0].message.content), `stop string not in the text: ${JSON.stringify(r.choices[0].message.content)}`);
  check(r.usage.completion_tokens >= r.choices[0].message.content.length + 1, 'the stop token was generated');
  const s = await collect(await client.chat.completions.create({
    messages: hi, max_tokens: 64, temperature: 1, seed: 3, logit_bias: { ...BAN_SPECIAL, 65: 50, 66: 50 },
    stop: ['B'], reasoning_effort: 'none', stream: true,
  }));
  const text = s.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  checkEq(text, r.choices[0].message.content, 'stop string: streamed text = non-streamed text');
  checkEq(s.find((c) => c.choices[0]?.finish_reason).choices[0].finish_reason, 'stop', 'streamed stop');
}

// 8. /v1/completions: raw prompt, default max_tokens 16, streaming and not.
{
  const r = await client.completions.create({ model: 'qwen3-demo', prompt: 'Once upon a time', logit_bias: BAN_SPECIAL });
  checkEq(r.object, 'text_completion', 'completion object');
  checkEq(r.usage.completion_tokens, 16, 'default max_tokens 16');
  checkEq(r.usage.prompt_tokens, 16, 'raw prompt: one token per byte');
  checkEq(r.choices[0].finish_reason, 'length', 'completion finish_reason');
  check(typeof r.choices[0].text === 'string', 'completion text');
  const ids = await client.completions.create({ prompt: [TOKENS.im_start, 65, 66], max_tokens: 3, logit_bias: BAN_SPECIAL });
  checkEq(ids.usage.prompt_tokens, 3, 'prompt as token ids');
  const chunks = await collect(await client.completions.create({
    prompt: 'abc', max_tokens: 9, stream: true, stream_options: { include_usage: true }, logit_bias: BAN_SPECIAL, logprobs: 1 }));
  const entries = chunks.filter((c) => c.choices.length && c.choices[0].logprobs).flatMap((c) => c.choices[0].logprobs.tokens);
  checkEq(entries.length, 9, 'completion stream: one logprob per token');
  checkEq(chunks[chunks.length - 1].usage.completion_tokens, 9, 'completion stream usage');
}

// 9. The stream goes out as it is made: each chunk arrives soon after the server wrote it
// (steady clock on both sides), and chunks are not merged.
{
  const res = await fetch(`${baseUrl()}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: hi, max_tokens: 30, stream: true, logit_bias: BAN_SPECIAL, reasoning_effort: 'none' }),
  });
  checkEq(res.headers.get('content-type'), 'text/event-stream', 'SSE content type');
  checkEq(res.headers.get('cache-control'), 'no-cache', 'Cache-Control');
  checkEq(res.headers.get('x-accel-buffering'), 'no', 'X-Accel-Buffering');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const lags = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const arrival = process.hrtime.bigint();
    buf += decoder.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!event.startsWith('data: {')) continue;
      const j = JSON.parse(event.slice(6));
      if (j.duet_debug) lags.push(Number(arrival - BigInt(j.duet_debug.write_ns)) / 1e6);
    }
  }
  check(buf === '', 'stream ends on an event boundary');
  check(lags.length >= 30, `one stamped chunk per token (${lags.length})`);
  lags.sort((a, b) => a - b);
  const p50 = lags[Math.floor(lags.length / 2)];
  // Loose on purpose (a shared, busy machine); a server that held chunks back until the
  // end, or on a timer, shows up as whole-stream delays, far above this.
  check(p50 < 200, `write→arrival median ${p50.toFixed(2)} ms`);
  console.log(`write→arrival: median ${p50.toFixed(3)} ms, max ${lags[lags.length - 1].toFixed(3)} ms over ${lags.length} chunks`);
}

// 10. Errors through the client: a bad value is a 400 BadRequestError with a message.
{
  let err = null;
  try {
    await client.chat.completions.create({ messages: hi, temperature: -1 });
  } catch (e) { err = e; }
  check(err instanceof OpenAI.BadRequestError, 'temperature -1 → BadRequestError');
  check(err && /temperature/.test(err.message), 'message names the field');
  let notFound = null;
  try { await client.chat.completions.create({ model: 'gpt-4o', messages: hi }); } catch (e) { notFound = e; }
  check(notFound instanceof OpenAI.NotFoundError, 'unknown model → NotFoundError');
  const models = await client.models.list();
  checkEq(models.data[0].id, 'qwen3-demo', 'models.list through the client');
  const one = await client.models.retrieve('qwen3-demo');
  checkEq(one.owned_by, 'duet-demo', 'models.retrieve through the client');
}

checkEq((await request({ path: '/health' })).status, 200, 'server alive');
finish('serve_openai');
