// Structured output end to end. The server's model has random weights and the real Qwen3
// vocabulary: it never writes JSON on its own, so every valid reply below is the grammar's work.
//   1. A corpus of schemas (tests/node/data/structured_schemas.json plus every draft-4 schema of
//      the JSON-Schema-Test-Suite the server accepts), several seeds at temperature 1: every
//      reply ends by itself ("stop"), parses, and validates with ajv (formats included).
//   2. Streaming, Ollama's format, llama.cpp's grammar and json_schema fields, vLLM's guided_*
//      and structured_outputs, thinking with a budget.
//   3. The real clients: openai chat.completions.parse with zod, LangChain withStructuredOutput
//      (jsonSchema and functionCalling), the AI SDK's generateObject, forced tool calls.
//   4. GBNF grammars in the style of llama.cpp's grammars/ folder, checked by JS recognizers.
//   5. What cannot be enforced is a 400 naming it, in each dialect's error shape.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { Ollama } from 'ollama';
import { z } from 'zod';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, jsonSchema } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import Ajv2020 from 'ajv/dist/2020.js';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { baseUrl, check, checkEq, finish, postJson } from './lib/http_util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const client = new OpenAI({ baseURL: `${baseUrl()}/v1`, apiKey: 'not-needed', maxRetries: 0 });
const ollama = new Ollama({ host: baseUrl() });
const noThinking = { chat_template_kwargs: { enable_thinking: false } };
const user = [{ role: 'user', content: 'Answer in JSON.' }];
const MAX_TOKENS = 4000;
const MODEL = 'tiny-qwen3-vocab';  // the file serve_structured.sh forges
// A random model rarely closes a free string or container: few of the tokens allowed inside
// one close it, so replies would run to max_tokens. These biases (", ", "} "] ] }, and @,
// which ends an email's local part, whose atoms may repeat without bound) make the closing
// tokens likelier. They change which allowed token is drawn, never what is allowed:
// the grammar's mask decides that (a banned token stays banned whatever its bias).
const CLOSERS = { 1: 6, 497: 5, 9207: 5, 1341: 5, 60: 3, 92: 3, 31: 4 };
// The built-in demo model (byte vocabulary: a string closes within a few hundred bytes), for
// the Ollama client, which has no logit_bias.
const ollamaBytes = new Ollama({ host: `http://127.0.0.1:${process.env.DUET_BYTES_PORT}` });

const ajv2020 = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const ajv04 = addFormats(new AjvDraft04({ strict: false, allErrors: true }));

function validator(schema, draft4) {
  const s = typeof schema === 'object' && schema !== null ? { ...schema } : schema;
  if (typeof s === 'object') delete s.$schema;
  const usesDraft4Flags = typeof s === 'object' &&
    (typeof s.exclusiveMinimum === 'boolean' || typeof s.exclusiveMaximum === 'boolean');
  return (draft4 || usesDraft4Flags ? ajv04 : ajv2020).compile(s);
}

function checkValid(text, validate, what) {
  let value;
  try { value = JSON.parse(text); } catch (e) { check(false, `${what}: not JSON (${e.message}): ${text.slice(0, 300)}`); return undefined; }
  check(validate(value), `${what}: ${JSON.stringify(validate.errors)} in ${text.slice(0, 300)}`);
  return value;
}

// 1. The corpus.
const own = JSON.parse(fs.readFileSync(path.join(here, 'data/structured_schemas.json'), 'utf8'));
const suiteDir = path.join(root, 'node_modules/json-schema-test-suite/tests/draft4');
const suite = [];
for (const f of fs.readdirSync(suiteDir).filter((f) => f.endsWith('.json')).sort())
  for (const g of JSON.parse(fs.readFileSync(path.join(suiteDir, f), 'utf8')))
    suite.push({ name: `suite ${f}: ${g.description}`, schema: g.schema, draft4: true });

let ran = 0, refused = 0, replies = 0;
for (const entry of [...own, ...suite]) {
  let validate = null;  // compiled once the server took the schema (ajv cannot load remote refs)
  for (const seed of [1, 2, 3]) {
    const body = { model: MODEL, messages: user, temperature: 1, seed, max_tokens: MAX_TOKENS, logit_bias: CLOSERS, ...noThinking,
                   response_format: { type: 'json_schema', json_schema: { name: 'out', schema: entry.schema } } };
    const r = await postJson('/v1/chat/completions', body);
    if (r.status === 400 && entry.draft4) {
      const msg = JSON.parse(r.body).error.message;
      check(/JSON schema at/.test(msg), `${entry.name}: refusal names the place: ${msg}`);
      refused++;
      break;
    }
    checkEq(r.status, 200, `${entry.name}: status (${r.body.slice(0, 200)})`);
    if (r.status !== 200) break;
    validate ??= validator(entry.schema, entry.draft4);
    const c = JSON.parse(r.body).choices[0];
    checkEq(c.finish_reason, 'stop', `${entry.name} seed ${seed}: the reply ends by itself`);
    checkValid(c.message.content, validate, `${entry.name} seed ${seed}`);
    replies++;
    if (seed === 1) ran++;
  }
}
check(own.length >= 60, `own corpus: ${own.length} schemas`);
check(ran >= 100, `at least 100 schemas generated for (${ran}; ${refused} suite schemas refused by name)`);
console.log(`corpus: ${ran} schemas, ${replies} replies validated, ${refused} suite schemas refused by name`);

// 2a. Streaming: the deltas concatenate to a valid reply.
{
  const schema = own.find((e) => e.name === 'nested_order').schema;
  const stream = await client.chat.completions.create({
    messages: user, temperature: 1, seed: 11, max_tokens: MAX_TOKENS, stream: true, logit_bias: CLOSERS, ...noThinking,
    response_format: { type: 'json_schema', json_schema: { name: 'order', schema } } });
  let text = '', reason = null, chunks = 0;
  for await (const c of stream) {
    const ch = c.choices[0];
    if (!ch) continue;
    text += ch.delta.content ?? '';
    if (ch.delta.content) chunks++;
    if (ch.finish_reason) reason = ch.finish_reason;
  }
  checkEq(reason, 'stop', 'streamed: finish_reason');
  check(chunks > 5, `streamed in ${chunks} chunks`);
  checkValid(text, validator(schema), 'streamed json_schema');
}

// 2b. json_object (OpenAI) and format "json" (Ollama): any JSON object.
{
  const r = await client.chat.completions.create({ messages: user, temperature: 1, seed: 3, max_tokens: MAX_TOKENS,
    logit_bias: CLOSERS, ...noThinking, response_format: { type: 'json_object' } });
  const v = checkValid(r.choices[0].message.content, () => true, 'json_object');
  check(v !== null && typeof v === 'object' && !Array.isArray(v), 'json_object: an object');
  const o = await ollamaBytes.chat({ model: 'qwen3-demo', messages: user, format: 'json', think: false, options: { seed: 4, temperature: 1, num_predict: MAX_TOKENS } });
  checkEq(o.done_reason, 'stop', 'ollama format json: done_reason');
  const ov = checkValid(o.message.content, () => true, 'ollama format json');
  check(ov !== null && typeof ov === 'object' && !Array.isArray(ov), 'ollama format json: an object');
}

// 2c. Ollama format with a schema, chat and generate, streamed and not.
{
  const schema = own.find((e) => e.name === 'calendar').schema;
  const validate = validator(schema);
  const chat = await ollama.chat({ model: MODEL, messages: user, format: schema, think: false, options: { seed: 5, temperature: 1, num_predict: MAX_TOKENS } });
  checkEq(chat.done_reason, 'stop', 'ollama chat: done_reason');
  checkValid(chat.message.content, validate, 'ollama chat format schema');
  const gen = await ollama.generate({ model: MODEL, prompt: 'JSON', format: schema, think: false, options: { seed: 6, temperature: 1, num_predict: MAX_TOKENS } });
  checkValid(gen.response, validate, 'ollama generate format schema');
  let text = '';
  for await (const part of await ollama.chat({ model: MODEL, messages: user, format: schema, think: false, stream: true, options: { seed: 7, temperature: 1, num_predict: MAX_TOKENS } }))
    text += part.message.content;
  checkValid(text, validate, 'ollama streamed format schema');
}

// 2d. llama.cpp's fields, vLLM's fields, on chat and completions.
{
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['n'] };
  for (const [field, value] of [['json_schema', schema], ['guided_json', schema], ['guided_json', JSON.stringify(schema)],
                                ['structured_outputs', { json: schema }]]) {
    const r = await postJson('/v1/chat/completions', { messages: user, temperature: 1, seed: 8, max_tokens: 200, logit_bias: CLOSERS, ...noThinking, [field]: value });
    checkEq(r.status, 200, `${field}: status`);
    checkValid(JSON.parse(r.body).choices[0].message.content, validator(schema), field);
  }
  for (const seed of [1, 2, 3, 4]) {
    const r = await postJson('/v1/completions', { prompt: 'Pick:', temperature: 1, seed, max_tokens: 50, guided_choice: ['alpha', 'beta', 'gamma delta'] });
    const c = JSON.parse(r.body).choices[0];
    check(['alpha', 'beta', 'gamma delta'].includes(c.text), `guided_choice: ${c.text}`);
    checkEq(c.finish_reason, 'stop', 'guided_choice: stop');
    const rx = await postJson('/v1/completions', { prompt: 'Code:', temperature: 1, seed, max_tokens: 50, guided_regex: '[A-Z]{3}-\\d{2,4}' });
    const t = JSON.parse(rx.body).choices[0].text;
    check(/^[A-Z]{3}-\d{2,4}$/.test(t), `guided_regex: ${t}`);
    const so = await postJson('/v1/completions', { prompt: 'x', temperature: 1, seed, max_tokens: 50, structured_outputs: { regex: '(yes|no)!' } });
    check(/^(yes|no)!$/.test(JSON.parse(so.body).choices[0].text), 'structured_outputs.regex');
  }
}

// 2e. Thinking stays free: the reasoning comes first (closed by the budget), then the answer
// obeys the schema.
{
  const schema = own.find((e) => e.name === 'sentiment').schema;
  const r = await postJson('/v1/chat/completions', { messages: user, temperature: 1, seed: 9, max_tokens: MAX_TOKENS, logit_bias: CLOSERS,
    chat_template_kwargs: { enable_thinking: true }, thinking_budget: 30,
    response_format: { type: 'json_schema', json_schema: { name: 's', schema } } });
  const j = JSON.parse(r.body);
  const m = j.choices[0].message;
  check((m.reasoning_content ?? '').length > 0, 'thinking: reasoning present');
  check(j.usage.completion_tokens_details.reasoning_tokens >= 30, 'thinking: the budget was spent');
  checkValid(m.content, validator(schema), 'thinking then schema');
}

// 3a. openai chat.completions.parse with zod.
{
  const Person = z.object({ name: z.string().max(20), age: z.number().int().min(0).max(120), langs: z.array(z.enum(['en', 'fr', 'zh'])).max(3) });
  const r = await client.chat.completions.parse({ model: MODEL, messages: user, temperature: 1, seed: 12, max_tokens: MAX_TOKENS, logit_bias: CLOSERS, ...noThinking,
    response_format: zodResponseFormat(Person, 'person') });
  const parsed = r.choices[0].message.parsed;
  check(parsed !== null && Person.safeParse(parsed).success, `openai parse: ${JSON.stringify(parsed)}`);
}

// 3b. LangChain withStructuredOutput, both methods.
{
  const Answer = z.object({ answer: z.string().max(30), score: z.number().int().min(1).max(5) });
  const llm = new ChatOpenAI({ model: MODEL, apiKey: 'not-needed', temperature: 1, maxTokens: MAX_TOKENS,
    configuration: { baseURL: `${baseUrl()}/v1` }, modelKwargs: { seed: 13, logit_bias: CLOSERS, ...noThinking } });
  for (const method of ['jsonSchema', 'functionCalling']) {
    const out = await llm.withStructuredOutput(Answer, { method }).invoke('Rate it.');
    check(Answer.safeParse(out).success, `langchain ${method}: ${JSON.stringify(out)}`);
  }
}

// 3c. AI SDK generateObject through the OpenAI-compatible provider.
{
  const provider = createOpenAICompatible({ name: 'duet', baseURL: `${baseUrl()}/v1`, supportsStructuredOutputs: true });
  const schema = { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
                   required: ['city', 'days'], additionalProperties: false };
  const { object } = await generateObject({ model: provider(MODEL), schema: jsonSchema(schema), prompt: 'Plan a trip.', temperature: 1, seed: 14,
    maxOutputTokens: MAX_TOKENS, providerOptions: { duet: { ...noThinking, logit_bias: CLOSERS } } });
  check(validator(schema)(object), `ai sdk generateObject: ${JSON.stringify(object)}`);
}

// 3d. Forced tool calls: "required" and a named function, streamed and not.
{
  const tools = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string', pattern: '^[A-Z][a-z]+/[A-Z][a-z]+$' } }, required: ['tz'] } } },
  ];
  const validators = Object.fromEntries(tools.map((t) => [t.function.name, validator(t.function.parameters)]));
  for (const seed of [1, 2, 3]) {
    const r = await client.chat.completions.create({ messages: user, tools, tool_choice: 'required', temperature: 1, seed, max_tokens: MAX_TOKENS, logit_bias: CLOSERS, ...noThinking });
    const c = r.choices[0];
    checkEq(c.finish_reason, 'tool_calls', 'required: finish_reason');
    check(c.message.tool_calls?.length >= 1, 'required: at least one call');
    for (const call of c.message.tool_calls) checkValid(call.function.arguments, validators[call.function.name], `required: ${call.function.name}`);
    const single = await client.chat.completions.create({ messages: user, tools, tool_choice: 'required', parallel_tool_calls: false,
      temperature: 1, seed, max_tokens: MAX_TOKENS, logit_bias: CLOSERS, ...noThinking });
    checkEq(single.choices[0].message.tool_calls?.length, 1, 'required without parallel calls: one call');
    const named = await client.chat.completions.create({ messages: user, tools, temperature: 1, seed, max_tokens: MAX_TOKENS, logit_bias: CLOSERS, ...noThinking,
      tool_choice: { type: 'function', function: { name: 'get_time' } } });
    checkEq(named.choices[0].message.tool_calls?.length, 1, 'named: one call');
    checkEq(named.choices[0].message.tool_calls[0].function.name, 'get_time', 'named: the function');
    checkValid(named.choices[0].message.tool_calls[0].function.arguments, validators.get_time, 'named: arguments');
  }
  const stream = await client.chat.completions.create({ messages: user, tools, temperature: 1, seed: 5, max_tokens: MAX_TOKENS, stream: true, logit_bias: CLOSERS, ...noThinking,
    tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  let args = '', name = '', reason = null;
  for await (const c of stream) {
    const ch = c.choices[0];
    if (!ch) continue;
    for (const t of ch.delta.tool_calls ?? []) { name += t.function?.name ?? ''; args += t.function?.arguments ?? ''; }
    if (ch.finish_reason) reason = ch.finish_reason;
  }
  checkEq(reason, 'tool_calls', 'streamed named call: finish_reason');
  checkEq(name, 'get_weather', 'streamed named call: name');
  checkValid(args, validators.get_weather, 'streamed named call: arguments');
}

// 3e. Forced tool calls through the ollama client. Ollama's API has no tool_choice, so duet reads
// OpenAI's field on /api/chat as well; the client sends the request object as it is given.
{
  const tools = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { enum: ['UTC', 'Europe/Paris', 'Asia/Tokyo'] } }, required: ['tz'], additionalProperties: false } } },
  ];
  const validators = Object.fromEntries(tools.map((t) => [t.function.name, validator(t.function.parameters)]));
  const checkCalls = (calls, what) => {
    check(Array.isArray(calls) && calls.length >= 1, `${what}: at least one call`);
    for (const call of calls ?? []) {
      check(call.function.name in validators, `${what}: a known function (${call.function.name})`);
      check(typeof call.function.arguments === 'object', `${what}: arguments as an object, as Ollama sends them`);
      check(validators[call.function.name]?.(call.function.arguments), `${what}: ${JSON.stringify(call.function.arguments)}`);
    }
  };
  const options = (seed) => ({ seed, temperature: 1, num_predict: MAX_TOKENS });
  for (const seed of [1, 2]) {
    const r = await ollama.chat({ model: MODEL, messages: user, tools, tool_choice: 'required', think: false, options: options(seed) });
    checkCalls(r.message.tool_calls, `ollama required (seed ${seed})`);
    const named = await ollama.chat({ model: MODEL, messages: user, tools, think: false, options: options(seed + 10),
      tool_choice: { type: 'function', function: { name: 'get_time' } } });
    checkCalls(named.message.tool_calls, 'ollama named');
    checkEq(named.message.tool_calls?.length, 1, 'ollama named: one call');
    checkEq(named.message.tool_calls?.[0].function.name, 'get_time', 'ollama named: the function');
  }
  const calls = [];
  for await (const part of await ollama.chat({ model: MODEL, messages: user, tools, think: false, stream: true, options: options(21),
    tool_choice: { type: 'function', function: { name: 'get_weather' } } }))
    calls.push(...(part.message.tool_calls ?? []));
  checkCalls(calls, 'ollama streamed named call');
  checkEq(calls[0]?.function.name, 'get_weather', 'ollama streamed named call: the function');
}

// 4. GBNF grammars (llama.cpp's `grammar` field), each output checked by a recognizer in JS.
{
  const grammars = {
    arithmetic: {
      // Nesting is bounded (three levels): a random model opens parentheses faster than it
      // closes them, and an unbounded expression would run to max_tokens.
      gbnf: 'root ::= expr3\nop ::= " "? [-+*/] " "?\nnum ::= [1-9] [0-9]{0,3}\n' +
            'expr3 ::= term3 (op term3){0,3}\nterm3 ::= num | "(" expr2 ")"\n' +
            'expr2 ::= term2 (op term2){0,3}\nterm2 ::= num | "(" expr1 ")"\nexpr1 ::= num (op num){0,3}\n',
      accept: (t) => {
        if (!/^[0-9+\-*/() ]+$/.test(t)) return false;
        try { Function(`"use strict"; return (${t});`)(); return true; } catch { return false; }
      },
    },
    list: {
      gbnf: 'root ::= item{1,5}\nitem ::= "- " [a-z]{1,10} (" " [a-z]{1,10}){0,3} "\\n"\n',
      accept: (t) => /^(- [a-z]{1,10}( [a-z]{1,10}){0,3}\n){1,5}$/.test(t),
    },
    json: {
      gbnf: 'root ::= object\nvalue ::= object | array | string | number | ("true" | "false" | "null")\n' +
            'object ::= "{" ( string ":" value ("," string ":" value){0,3} )? "}"\n' +
            'array ::= "[" ( value ("," value){0,3} )? "]"\n' +
            'string ::= "\\"" [a-zA-Z0-9 ]{0,12} "\\""\nnumber ::= "-"? [0-9]{1,6} ("." [0-9]{1,4})?\n',
      accept: (t) => { try { const v = JSON.parse(t); return typeof v === 'object' && !Array.isArray(v); } catch { return false; } },
    },
    c_like: {
      gbnf: 'root ::= decl{1,3}\ndecl ::= type " " ident "(" ")" " {\\n" stmt{0,3} "}\\n"\n' +
            'stmt ::= "  " ( type " " ident " = " expr | "return " expr ) ";\\n"\n' +
            'type ::= "int" | "float" | "void"\nident ::= [a-z_] [a-z0-9_]{0,8}\n' +
            'expr ::= operand (" " [-+*] " " operand){0,3}\noperand ::= ident | [0-9]{1,4}\n',
      accept: (t) => /^((int|float|void) [a-z_][a-z0-9_]{0,8}\(\) \{\n(  ((int|float|void) [a-z_][a-z0-9_]{0,8} = |return )([a-z_][a-z0-9_]{0,8}|[0-9]{1,4})( [-+*] ([a-z_][a-z0-9_]{0,8}|[0-9]{1,4})){0,3};\n){0,3}\}\n){1,3}$/.test(t),
    },
  };
  for (const [name, g] of Object.entries(grammars)) {
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await postJson('/v1/completions', { prompt: 'Write:', temperature: 1, seed, max_tokens: 600, grammar: g.gbnf });
      checkEq(r.status, 200, `grammar ${name}: status ${r.body.slice(0, 200)}`);
      const c = JSON.parse(r.body).choices[0];
      checkEq(c.finish_reason, 'stop', `grammar ${name} seed ${seed}: stop`);
      check(g.accept(c.text), `grammar ${name} seed ${seed}: the recognizer accepts ${JSON.stringify(c.text)}`);
    }
  }
}

// 5. What cannot be enforced is refused by name, in each dialect's shape.
{
  const bad = { type: 'object', properties: { a: { type: 'string' } }, minProperties: 1 };
  const o = await postJson('/v1/chat/completions', { messages: user, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: bad } } });
  checkEq(o.status, 400, 'openai: unsupported keyword is a 400');
  check(/minProperties/.test(JSON.parse(o.body).error.message), 'openai: the keyword is named');
  const l = await postJson('/api/chat', { model: MODEL, messages: user, format: bad, stream: false });
  checkEq(l.status, 400, 'ollama: unsupported keyword is a 400');
  check(/minProperties/.test(JSON.parse(l.body).error), 'ollama: the keyword is named');
  const g = await postJson('/v1/completions', { prompt: 'x', grammar: 'root ::= missing' });
  checkEq(g.status, 400, 'grammar with an undefined rule is a 400');
  check(/missing/.test(JSON.parse(g.body).error.message), 'the undefined rule is named');
  const two = await postJson('/v1/chat/completions', { messages: user, response_format: { type: 'json_object' }, guided_regex: 'a' });
  checkEq(two.status, 400, 'two constraints are a 400');
}

finish('serve_structured');
