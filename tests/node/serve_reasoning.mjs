// A reply that opens its think block after a newline ("\n<think>"), against duet_scripted
// (see tests/cli/serve_reasoning.sh for the script): the reasoning is shown apart from the
// answer and counted in usage.completion_tokens_details.reasoning_tokens, streamed and not,
// in either mode (a non-thinking prompt's model that thinks anyway is still reasoning), and
// Ollama's /api/chat shows it as thinking.
import OpenAI from 'openai';
import { Ollama } from 'ollama';
import { baseUrl, check, checkEq, finish } from './lib/http_util.mjs';
import { countTokens } from './lib/demo_model.mjs';

const SCRIPT = JSON.parse(process.env.DUET_SCRIPT);
const KEY = 'NEWLINE_THEN_THINK';
const client = new OpenAI({ baseURL: `${baseUrl()}/v1`, apiKey: 'not-needed', maxRetries: 0 });
const ollama = new Ollama({ host: baseUrl() });
const messages = [{ role: 'user', content: `${KEY}: hello!` }];
const REASONING = 'The user greets me; a short reply will do.';
const ANSWER = 'Hello!';
// Reasoning tokens: those after <think>, through </think>.
const reply = SCRIPT[KEY];
const reasoningTokens = countTokens(reply.slice(reply.indexOf('<think>') + 7, reply.indexOf('</think>') + 8));
const completionTokens = countTokens(reply) + 1;  // and <|im_end|>

for (const thinking of [true, false]) {
  const mode = thinking ? 'thinking' : 'non-thinking';
  const params = { messages, chat_template_kwargs: { enable_thinking: thinking } };
  const r = await client.chat.completions.create(params);
  const m = r.choices[0].message;
  checkEq(m.reasoning_content, REASONING, `${mode}: reasoning_content`);
  checkEq(m.content, ANSWER, `${mode}: content`);
  checkEq(r.usage.completion_tokens, completionTokens, `${mode}: completion_tokens`);
  checkEq(r.usage.completion_tokens_details.reasoning_tokens, reasoningTokens, `${mode}: reasoning_tokens`);

  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let reasoning = '', content = '', usage = null;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    reasoning += c.choices[0]?.delta?.reasoning_content ?? '';
    content += c.choices[0]?.delta?.content ?? '';
  }
  checkEq(reasoning, REASONING, `${mode}: streamed reasoning`);
  checkEq(content, ANSWER, `${mode}: streamed content`);
  checkEq(usage?.completion_tokens_details?.reasoning_tokens, reasoningTokens, `${mode}: streamed reasoning_tokens`);
}

{
  const r = await ollama.chat({ model: 'qwen3-demo', messages, think: true });
  checkEq(r.message.thinking, REASONING, 'ollama: thinking');
  checkEq(r.message.content, ANSWER, 'ollama: content');
  checkEq(r.eval_count, completionTokens, 'ollama: eval_count');
}

check(reasoningTokens > 0, 'the script has reasoning tokens');
finish('serve_reasoning');
