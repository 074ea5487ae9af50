// Facts about the built-in demo model that tests assert against, and an independent prompt
// length: the chat template (read from /api/show) rendered by @huggingface/jinja, counted in
// the demo's byte vocabulary (one token per UTF-8 byte, one per added token).
import { Template } from '@huggingface/jinja';
import { request } from './http_util.mjs';

// The byte vocabulary: ids 0-255 are bytes, then Qwen3's added tokens (forge/vocab_source.cc).
export const TOKENS = {
  endoftext: 256, im_start: 257, im_end: 258, tool_call: 259, tool_call_end: 260,
  tool_response: 261, tool_response_end: 262, think: 263, think_end: 264,
};
export const N_VOCAB = 265;
const ADDED = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>',
               '<tool_response>', '</tool_response>', '<think>', '</think>'];

// Bans the tokens that would end or restructure a random model's output, so that a test
// knows exactly how many tokens it gets and what kind they are.
export const BAN_SPECIAL = Object.fromEntries(
  [TOKENS.endoftext, TOKENS.im_start, TOKENS.im_end, TOKENS.tool_call, TOKENS.tool_call_end,
   TOKENS.tool_response, TOKENS.tool_response_end, TOKENS.think, TOKENS.think_end].map((id) => [String(id), -100]));

export const BUDGET_CLOSING =
  '\n\nConsidering the limited time by the user, I have to give the solution based on the thinking directly now.\n</think>\n\n';

export function countTokens(text) {
  let n = 0;
  const re = new RegExp(ADDED.map((t) => t.replace(/[|]/g, '\\|')).join('|'), 'g');
  let last = 0;
  for (const m of text.matchAll(re)) {
    n += Buffer.byteLength(text.slice(last, m.index), 'utf8') + 1;
    last = m.index + m[0].length;
  }
  return n + Buffer.byteLength(text.slice(last), 'utf8');
}

let template = null;
export async function chatTemplate() {
  if (template) return template;
  const r = await request({ method: 'POST', path: '/api/show', body: JSON.stringify({ model: 'qwen3-demo' }) });
  template = new Template(JSON.parse(r.body).template);
  return template;
}

// Prompt tokens of a chat request as the server should build it. prefill: the content of a
// final assistant message that the reply continues.
export async function expectedPromptTokens(messages, { thinking, prefill = null, tools = undefined }) {
  const t = await chatTemplate();
  const ctx = { messages, add_generation_prompt: true, enable_thinking: thinking };
  if (tools) ctx.tools = tools;
  return countTokens(t.render(ctx) + (prefill ?? ''));
}
