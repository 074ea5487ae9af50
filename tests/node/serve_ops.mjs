// Operations and listing routes: /health, /ready, /metrics (vLLM's names), GET /, /v1/models,
// /api/tags, /api/show, /api/ps, /api/version. With DUET_API_KEY set, also checks that every
// route but /health refuses requests without the key (401, in the dialect's shape).
import { request, parseMetrics, check, checkEq, finish } from './lib/http_util.mjs';

const key = process.env.DUET_API_KEY;
const auth = key ? { authorization: `Bearer ${key}` } : {};

if (key) {
  for (const [method, path] of [['GET', '/v1/models'], ['GET', '/metrics'], ['GET', '/ready'], ['GET', '/'],
                                ['POST', '/v1/chat/completions'], ['GET', '/api/tags'], ['POST', '/api/chat'],
                                ['GET', '/api/version'], ['GET', '/no/such/route']]) {
    for (const headers of [{}, { authorization: 'Bearer wrong-key' }, { authorization: `Bearer ${key}x` },
                           { authorization: `Basic ${key}` }]) {
      const r = await request({ method, path, headers, body: method === 'POST' ? '{}' : undefined });
      checkEq(r.status, 401, `${method} ${path} with ${JSON.stringify(headers)}`);
      const j = JSON.parse(r.body);
      if (path.startsWith('/api/')) check(typeof j.error === 'string', `${path}: Ollama 401 body`);
      else check(j.error && j.error.type === 'authentication_error', `${path}: OpenAI 401 body`);
    }
  }
  checkEq((await request({ path: '/health' })).status, 200, '/health needs no key');
  checkEq((await request({ path: '/v1/models', headers: { 'x-api-key': key } })).status, 200, 'X-Api-Key accepted');
}

// Probes.
checkEq((await request({ path: '/health', headers: auth })).status, 200, '/health');
const ready = await request({ path: '/ready', headers: auth });
checkEq(ready.status, 200, '/ready once loaded');
checkEq(JSON.parse(ready.body).status, 'ready', '/ready body');

// Listings.
const models = JSON.parse((await request({ path: '/v1/models', headers: auth })).body);
checkEq(models.object, 'list', '/v1/models object');
// The model, then its mode-pinned names, whose parent it is.
checkEq(JSON.stringify(models.data.map((x) => x.id)), '["qwen3-demo","qwen3-demo-thinking","qwen3-demo-fast"]', '/v1/models: the model and its mode-pinned names');
checkEq(JSON.stringify(models.data.map((x) => x.parent)), '[null,"qwen3-demo","qwen3-demo"]', '/v1/models: parents');
check(/thinks/.test(models.data[1]?.description) && /without thinking/.test(models.data[2]?.description), '/v1/models: the pinned names say what they pin');
for (const id of ['qwen3-demo-fast', 'QWEN3-DEMO-THINKING:latest']) {
  const one = await request({ path: `/v1/models/${id}`, headers: auth });
  checkEq(one.status, 200, `/v1/models/${id}`);
  checkEq(JSON.parse(one.body).parent, 'qwen3-demo', `/v1/models/${id}: parent`);
}
checkEq((await request({ path: '/v1/models/qwen3-demo-slow', headers: auth })).status, 404, '/v1/models/ another suffix');
const m = models.data[0];
checkEq(m.id, 'qwen3-demo', 'model id');
checkEq(m.object, 'model', 'model object');
checkEq(m.owned_by, 'duet-demo', 'demo model owned_by');
check(typeof m.created === 'number' && m.created > 1.6e9, 'created is a unix time');
check(/random/i.test(m.description), 'description says the weights are random');

const tags = JSON.parse((await request({ path: '/api/tags', headers: auth })).body);
checkEq(JSON.stringify(tags.models.map((x) => x.name)), '["qwen3-demo:latest","qwen3-demo-thinking:latest","qwen3-demo-fast:latest"]', '/api/tags: the model and its mode-pinned names');
const t = tags.models[0];
checkEq(t.name, 'qwen3-demo:latest', '/api/tags name carries a tag');
checkEq(t.model, 'qwen3-demo:latest', '/api/tags model');
checkEq(t.details.format, 'gguf', 'details.format');
checkEq(t.details.family, 'qwen3', 'details.family');
check(Array.isArray(t.details.families) && t.details.families[0] === 'qwen3', 'details.families');
check(/^\d+(\.\d+)?[KMB]$/.test(t.details.parameter_size), `parameter_size ${t.details.parameter_size}`);
checkEq(t.details.quantization_level, 'Q8_0', 'quantization_level');
check(!Number.isNaN(Date.parse(t.modified_at)), 'modified_at is a date');
check(typeof t.size === 'number' && t.size > 0 && /^[0-9a-f]+$/.test(t.digest), 'size and digest');

for (const name of ['qwen3-demo', 'qwen3-demo:latest', 'QWEN3-DEMO', 'qwen3-demo-fast:latest']) {
  const show = await request({ method: 'POST', path: '/api/show', headers: auth, body: JSON.stringify({ model: name }) });
  checkEq(show.status, 200, `/api/show ${name}`);
  const s = JSON.parse(show.body);
  checkEq(JSON.stringify(s.capabilities), '["completion","tools","thinking"]', 'capabilities');
  check(s.template.includes('<|im_start|>') && s.template.includes('enable_thinking'), 'template is Qwen3\'s');
  checkEq(s.model_info['general.architecture'], 'qwen3', 'model_info architecture');
  checkEq(s.details.family, 'qwen3', 'show details');
}
const ps = JSON.parse((await request({ path: '/api/ps', headers: auth })).body);
checkEq(ps.models[0].name, 'qwen3-demo:latest', '/api/ps');
checkEq(ps.models.length, 1, '/api/ps: what is loaded, the model itself');
const version = JSON.parse((await request({ path: '/api/version', headers: auth })).body);
check(/^\d+\.\d+\.\d+$/.test(version.version), `/api/version is dotted numeric: ${version.version}`);
const head = await request({ method: 'HEAD', path: '/', headers: auth });
checkEq(head.status, 200, 'HEAD / (ollama clients\' heartbeat)');

// GET /: Ollama's heartbeat for API clients, the chat page for browsers (chat_page_routes.mjs
// checks the page and its assets).
const heartbeat = await request({ path: '/', headers: auth });
checkEq(heartbeat.status, 200, 'GET /');
checkEq(heartbeat.body, 'Ollama is running', 'GET / without Accept: text/html');
const page = await request({ path: '/', headers: { ...auth, accept: 'text/html' } });
checkEq(page.status, 200, 'GET / as a browser');
check(page.headers['content-type'].startsWith('text/html'), 'GET / is HTML for browsers');
check(!/(src|href)="https?:/.test(page.body), 'the page loads nothing from elsewhere');

// Metrics: Prometheus text with vLLM's names.
const metricsRes = await request({ path: '/metrics', headers: auth });
checkEq(metricsRes.status, 200, '/metrics');
check(metricsRes.headers['content-type'].startsWith('text/plain'), '/metrics content type');
const text = metricsRes.body;
for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc',
                    'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total', 'vllm:prompt_tokens_total',
                    'vllm:generation_tokens_total', 'duet:reasoning_tokens_total', 'duet:requests_cancelled_total',
                    'duet:thinking_mode_decisions_total', 'duet:kv_blocks_used']) {
  check(text.includes(`# TYPE ${name} `), `/metrics has ${name}`);
}
for (const h of ['vllm:time_to_first_token_seconds', 'vllm:inter_token_latency_seconds', 'vllm:e2e_request_latency_seconds']) {
  check(text.includes(`# TYPE ${h} histogram`), `/metrics has histogram ${h}`);
  check(text.includes(`${h}_bucket{model_name="qwen3-demo",le="+Inf"}`), `${h} has a +Inf bucket`);
}
const parsed = parseMetrics(text);
for (const [k, v] of parsed) check(Number.isFinite(v), `metric ${k} is a number`);
checkEq(parsed.get('duet:ready{model_name="qwen3-demo"}'), 1, 'duet:ready');

finish(key ? 'serve_ops (api key)' : 'serve_ops');
