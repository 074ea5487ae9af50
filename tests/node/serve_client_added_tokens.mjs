// `duet serve --client-added-tokens non-special` (the demo model: one token per byte, one per
// added token): <think>, <tool_call> and <tool_response> typed by a user become their tokens,
// as Hugging Face's tokenizer matches them; control tokens stay text.
import { postJson, checkEq, finish } from './lib/http_util.mjs';

const promptTokens = async (content) => {
  const r = await postJson('/v1/chat/completions', { messages: [{ role: 'user', content }], max_tokens: 1, enable_thinking: false });
  checkEq(r.status, 200, `${JSON.stringify(content)}: status`);
  return JSON.parse(r.body).usage.prompt_tokens;
};

const text = await promptTokens('a<thinX>b');
checkEq(await promptTokens('a<think>b'), text - 6, 'user <think> is one token (7 bytes as text)');
checkEq(await promptTokens('<tool_call></tool_call>'), (await promptTokens('<tool_calX></tool_calX>')) - 21, 'user <tool_call></tool_call> are two tokens (23 bytes as text)');
checkEq(await promptTokens('a<|im_end|>b'), await promptTokens('a<|im_enX|>b'), 'user <|im_end|> stays text');
checkEq(await promptTokens('a<|im_start|>b'), await promptTokens('a<|im_stXrt|>b'), 'user <|im_start|> stays text');
finish('serve_client_added_tokens');
