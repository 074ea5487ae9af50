// Tool calls end to end, with the official `openai` and `ollama` clients, against
// duet_scripted (duet serve whose demo model is made to write a chosen reply when the prompt
// holds a key; see tests/support/scripted_serve.cc and tests/cli/serve_tools.sh for the
// script). Checks tool_calls objects streamed and not, finish_reason "tool_calls", reasoning
// and a call in one reply, and usage equal to the scripted tokens plus the end token.
import OpenAI from 'openai';
import { Ollama } from 'ollama';
import { baseUrl, check, checkEq, finish } from './lib/http_util.mjs';
import { countTokens } from './lib/demo_model.mjs';

const SCRIPT = JSON.parse(process.env.DUET_SCRIPT);
const client = new OpenAI({ baseURL: `${baseUrl()}/v1`, apiKey: 'not-needed', maxRetries: 0 });
const ollama = new Ollama({ host: baseUrl() });
const tools = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}];
const user = (key) => [{ role: 'user', content: `${key}: what is the weather in Paris?` }];
// The reply's tokens plus <|im_end|>, which the engine counts as generated.
const scripted = (key) => countTokens(SCRIPT[key]) + 1;

function checkCall(call, what) {
  checkEq(call.type, 'function', `${what}: type`);
  check(/^call_/.test(call.id), `${what}: id ${call.id}`);
  checkEq(call.function.name, 'get_weather', `${what}: name`);
  let args = null;
  try { args = JSON.parse(call.function.arguments); } catch { /* checked below */ }
  checkEq(JSON.stringify(args), JSON.stringify({ city: 'Paris' }), `${what}: arguments are a JSON string`);
}

// Streamed deltas → one call (the first delta carries id, type and name; arguments follow in
// fragments), the finish reason and the usage chunk.
async function streamed(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  const call = { id: undefined, type: undefined, function: { name: undefined, arguments: '' } };
  let reasoning = '', content = '', finishReason = null, usage = null, calls = 0;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    const ch = c.choices[0];
    if (!ch) continue;
    if (ch.finish_reason) finishReason = ch.finish_reason;
    reasoning += ch.delta.reasoning_content ?? '';
    content += ch.delta.content ?? '';
    for (const t of ch.delta.tool_calls ?? []) {
      checkEq(t.index, 0, 'streamed tool call index');
      if (t.id) { calls++; call.id = t.id; call.type = t.type; call.function.name = t.function.name; }
      call.function.arguments += t.function?.arguments ?? '';
    }
  }
  return { call, calls, reasoning, content, finishReason, usage };
}

// 1. OpenAI, non-thinking, not streamed: one call, finish_reason "tool_calls", exact usage.
{
  const r = await client.chat.completions.create({
    messages: user('ALPHA_CALL'), tools, chat_template_kwargs: { enable_thinking: false } });
  const m = r.choices[0].message;
  checkEq(r.choices[0].finish_reason, 'tool_calls', 'finish_reason');
  checkEq(m.tool_calls?.length, 1, 'one tool call');
  if (m.tool_calls?.length) checkCall(m.tool_calls[0], 'non-streamed call');
  check(!m.content, `no content beside the call (${JSON.stringify(m.content)})`);
  checkEq(r.usage.completion_tokens, scripted('ALPHA_CALL'), 'completion_tokens = scripted tokens + end');
}

// 2. OpenAI, non-thinking, streamed.
{
  const s = await streamed({ messages: user('ALPHA_CALL'), tools, chat_template_kwargs: { enable_thinking: false } });
  checkEq(s.calls, 1, 'streamed: one call begins');
  checkCall(s.call, 'streamed call');
  checkEq(s.finishReason, 'tool_calls', 'streamed finish_reason');
  checkEq(s.content.trim(), '', 'streamed: no content beside the call');
  checkEq(s.usage?.completion_tokens, scripted('ALPHA_CALL'), 'streamed completion_tokens');
}

// 3. OpenAI, thinking: reasoning and then a call, in one reply, streamed and not.
{
  const params = { messages: user('BRAVO_REASON_CALL'), tools, chat_template_kwargs: { enable_thinking: true } };
  const r = await client.chat.completions.create(params);
  const m = r.choices[0].message;
  checkEq(m.reasoning_content?.trim(), 'The user wants the weather; I will call the tool.', 'reasoning_content');
  checkEq(m.reasoning, m.reasoning_content, 'reasoning = reasoning_content');
  checkEq(m.tool_calls?.length, 1, 'thinking: one tool call');
  if (m.tool_calls?.length) checkCall(m.tool_calls[0], 'thinking call');
  checkEq(r.choices[0].finish_reason, 'tool_calls', 'thinking finish_reason');
  checkEq(r.usage.completion_tokens, scripted('BRAVO_REASON_CALL'), 'thinking completion_tokens');
  check(r.usage.completion_tokens_details.reasoning_tokens > 0, 'reasoning tokens counted');
  const s = await streamed(params);
  checkEq(s.reasoning.trim(), 'The user wants the weather; I will call the tool.', 'streamed reasoning');
  checkCall(s.call, 'streamed thinking call');
  checkEq(s.finishReason, 'tool_calls', 'streamed thinking finish_reason');
}

// 4. tool_choice "none": the tools are not offered and nothing is parsed as a call, so the
// scripted block stays text and the reply ends as "stop".
{
  const r = await client.chat.completions.create({
    messages: user('ALPHA_CALL'), tools, tool_choice: 'none', chat_template_kwargs: { enable_thinking: false } });
  checkEq(r.choices[0].finish_reason, 'stop', 'tool_choice none: finish_reason');
  checkEq(r.choices[0].message.tool_calls, undefined, 'tool_choice none: no tool_calls');
  check(/get_weather/.test(r.choices[0].message.content ?? ''), 'tool_choice none: the block is content');
}

// 5. Ollama, not streamed and streamed: arguments as an object, reasoning as thinking.
{
  const r = await ollama.chat({ model: 'qwen3-demo', messages: user('ALPHA_CALL'), tools, think: false, stream: false });
  checkEq(r.message.tool_calls?.length, 1, 'ollama: one tool call');
  checkEq(r.message.tool_calls?.[0].function.name, 'get_weather', 'ollama: name');
  checkEq(JSON.stringify(r.message.tool_calls?.[0].function.arguments), JSON.stringify({ city: 'Paris' }),
          'ollama: arguments are an object');
  checkEq(r.done, true, 'ollama: done');
  checkEq(r.eval_count, scripted('ALPHA_CALL'), 'ollama: eval_count');

  const parts = [];
  for await (const p of await ollama.chat({ model: 'qwen3-demo', messages: user('BRAVO_REASON_CALL'), tools, think: true, stream: true }))
    parts.push(p);
  const calls = parts.flatMap((p) => p.message.tool_calls ?? []);
  checkEq(calls.length, 1, 'ollama stream: one tool call');
  checkEq(JSON.stringify(calls[0]?.function.arguments), JSON.stringify({ city: 'Paris' }), 'ollama stream: arguments');
  checkEq(parts.map((p) => p.message.thinking ?? '').join('').trim(),
          'The user wants the weather; I will call the tool.', 'ollama stream: thinking');
  const last = parts[parts.length - 1];
  checkEq(last.done, true, 'ollama stream: ends done');
  checkEq(last.eval_count, scripted('BRAVO_REASON_CALL'), 'ollama stream: eval_count');
}

finish('serve_tools');
