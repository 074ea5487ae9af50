// Operations endpoints: liveness, readiness, Prometheus metrics and the front page.
#include <nlohmann/json.hpp>

#include "server/front_door.h"
#include "server/routes.h"

namespace duet {
namespace {

// A page that works with no network access and no external assets.
constexpr const char* kFrontPage = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>duet</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem;
         color: #1d2330; line-height: 1.5; }
  code { background: #eef1f5; padding: 0.1rem 0.3rem; border-radius: 3px; }
  .note { color: #8a4b00; }
</style>
</head>
<body>
<h1>duet is running</h1>
<p>A server for Qwen3 models with OpenAI- and Ollama-compatible APIs on this port.</p>
<p id="model">Model: loading…</p>
<ul>
  <li><a href="/v1/models">/v1/models</a> — the served model (OpenAI)</li>
  <li><a href="/api/tags">/api/tags</a> — the served model (Ollama)</li>
  <li><a href="/metrics">/metrics</a> — Prometheus metrics</li>
  <li><a href="/health">/health</a>, <a href="/ready">/ready</a> — probes</li>
</ul>
<p>Try: <code>curl http://HOST/v1/chat/completions -d '{"messages":[{"role":"user","content":"hi"}]}'</code></p>
<script>
  document.querySelectorAll('code').forEach(c => c.textContent = c.textContent.replace('HOST', location.host));
  fetch('/v1/models').then(r => r.json()).then(j => {
    const m = j.data && j.data[0];
    if (!m) return;
    const p = document.getElementById('model');
    p.textContent = 'Model: ' + m.id + (m.description ? ' — ' + m.description : '');
    if (m.owned_by === 'duet-demo') p.className = 'note';
  }).catch(() => {});
</script>
</body>
</html>
)HTML";

}  // namespace

void add_ops_routes(Router& router, ServerContext& ctx) {
  router.add("GET", "/health", [](const std::shared_ptr<Exchange>& ex) {
    ex->respond(json_response(200, R"({"status":"ok"})"));
  });
  router.add("GET", "/ready", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (ctx.ready()) return ex->respond(json_response(200, R"({"status":"ready"})"));
    const char* state = ctx.draining.load()      ? "draining"
                        : ctx.load_failed.load() ? "failed"
                                                 : "loading";
    HttpResponse res = json_response(503, nlohmann::json{{"status", state}}.dump());
    res.headers.push_back({"Retry-After", "1"});
    ex->respond(std::move(res));
  });
  router.add("GET", "/metrics", [&ctx](const std::shared_ptr<Exchange>& ex) {
    HttpResponse res;
    res.content_type = "text/plain; version=0.0.4; charset=utf-8";
    if (ctx.host.loaded()) {
      const EngineStats stats = ctx.host.engine().stats();
      res.body = ctx.metrics.render(&stats, ctx.ready());
    } else {
      res.body = ctx.metrics.render(nullptr, false);
    }
    ex->respond(std::move(res));
  });
  router.add("GET", "/", [](const std::shared_ptr<Exchange>& ex) {
    HttpResponse res;
    res.content_type = "text/html; charset=utf-8";
    res.body = kFrontPage;
    res.headers.push_back(
        {"Content-Security-Policy",
         "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"});
    ex->respond(std::move(res));
  });
}

}  // namespace duet
