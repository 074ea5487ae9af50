// Every request shape the deployment guides use to pick a reasoning mode, replayed on
// /api/generate, /api/chat and /v1/chat/completions, streamed and not: top-level
// "mode": "thinking" / "non_thinking", options.thinking_mode as a name and as true / false,
// and /think or /no_think in the prompt. Each response must report the mode the shape asks
// for (X-Duet-Thinking-Mode and the "duet" object of the body or final chunk), with the
// shape's field as the source, and its prompt must be the one that mode renders (the
// non-thinking prompt ends with an empty think block). The server runs with --think on, so
// a shape that is ignored shows up as source=server_default. A mode-pinned model name
// (qwen3-demo-fast, qwen3-demo-thinking) takes the default's place.
import { postJson, check, checkEq, finish } from './lib/http_util.mjs';
import { expectedPromptTokens } from './lib/demo_model.mjs';

const shapes = [
  { name: 'mode "thinking"', thinking: true, source: 'mode', fields: { mode: 'thinking' } },
  { name: 'mode "non_thinking"', thinking: false, source: 'mode', fields: { mode: 'non_thinking' } },
  { name: 'options.thinking_mode true', thinking: true, source: 'options.thinking_mode', options: { thinking_mode: true } },
  { name: 'options.thinking_mode false', thinking: false, source: 'options.thinking_mode', options: { thinking_mode: false } },
  { name: 'options.thinking_mode "thinking"', thinking: true, source: 'options.thinking_mode', options: { thinking_mode: 'thinking' } },
  { name: 'options.thinking_mode "non_thinking"', thinking: false, source: 'options.thinking_mode', options: { thinking_mode: 'non_thinking' } },
  { name: '/think in the prompt', thinking: true, source: 'soft_switch', text: 'Why is the sky blue? /think' },
  { name: '/no_think in the prompt', thinking: false, source: 'soft_switch', text: 'Why is the sky blue? /no_think' },
  // Mode-pinned model names (as Open WebUI's model list offers them), below the request's own
  // fields and soft switches.
  { name: 'model qwen3-demo-fast', thinking: false, source: 'model_tag', model: 'qwen3-demo-fast' },
  { name: 'model qwen3-demo-thinking:latest', thinking: true, source: 'model_tag', model: 'qwen3-demo-thinking:latest' },
  { name: 'mode "thinking" on qwen3-demo-fast', thinking: true, source: 'mode', fields: { mode: 'thinking' }, model: 'qwen3-demo-fast' },
  { name: '/think on qwen3-demo-fast', thinking: true, source: 'soft_switch', text: 'Why is the sky blue? /think', model: 'qwen3-demo-fast' },
];

const routes = {
  '/api/generate': (text, stream, options) => ({ model: 'qwen3-demo', prompt: text, stream, options: { num_predict: 4, ...options } }),
  '/api/chat': (text, stream, options) => ({
    model: 'qwen3-demo', messages: [{ role: 'user', content: text }], stream, options: { num_predict: 4, ...options },
  }),
  '/v1/chat/completions': (text, stream, options) => ({
    model: 'qwen3-demo', messages: [{ role: 'user', content: text }], stream, max_tokens: 4,
    ...(Object.keys(options).length ? { options } : {}),
  }),
};

// The final object of a response: the body, the last NDJSON line, or the SSE chunk that
// carries finish_reason.
function finalObject(path, stream, body) {
  if (!stream) return JSON.parse(body);
  if (path.startsWith('/api/')) {
    const lines = body.split('\n').filter((l) => l.trim());
    return JSON.parse(lines[lines.length - 1]);
  }
  const events = body.split('\n\n').map((e) => e.replace(/^data: /, '').trim()).filter((e) => e && e !== '[DONE]');
  return events.map((e) => JSON.parse(e)).find((c) => c.choices?.[0]?.finish_reason);
}

function promptTokens(path, obj) {
  return path.startsWith('/api/') ? obj.prompt_eval_count : obj.usage?.prompt_tokens;
}

for (const shape of shapes) {
  const text = shape.text ?? 'Why is the sky blue?';
  const want = shape.thinking ? 'thinking' : 'non-thinking';
  const prompt = await expectedPromptTokens([{ role: 'user', content: text }], { thinking: shape.thinking });
  for (const [path, build] of Object.entries(routes)) {
    for (const stream of [false, true]) {
      const what = `${shape.name} on ${path}${stream ? ' (streamed)' : ''}`;
      const body = { ...build(text, stream, shape.options ?? {}), ...shape.fields };
      if (shape.model) body.model = shape.model;
      if (path === '/v1/chat/completions' && stream) body.stream_options = { include_usage: true };
      const r = await postJson(path, body);
      checkEq(r.status, 200, `${what}: status`);
      if (r.status !== 200) {
        console.error(`  body: ${r.body.slice(0, 300)}`);
        continue;
      }
      checkEq(r.headers['x-duet-thinking-mode'], `${want}; source=${shape.source}`, `${what}: header`);
      const last = finalObject(path, stream, r.body);
      check(last && last.duet, `${what}: a final object with "duet"`);
      if (!last?.duet) continue;
      checkEq(last.duet.thinking, shape.thinking, `${what}: duet.thinking`);
      checkEq(last.duet.mode_source, shape.source, `${what}: duet.mode_source`);
      if (shape.model) checkEq(last.model, shape.model, `${what}: the model named as asked`);
      // The streamed OpenAI usage comes in its own chunk after the final one.
      const counted = path === '/v1/chat/completions' && stream
        ? promptTokens(path, r.body.split('\n\n').map((e) => e.replace(/^data: /, '').trim())
          .filter((e) => e && e !== '[DONE]').map((e) => JSON.parse(e)).find((c) => c.usage))
        : promptTokens(path, last);
      checkEq(counted, prompt, `${what}: prompt tokens of the ${want} prompt`);
    }
  }
}

finish('serve_modes');
