// Route registration, one function per group of routes.
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace duet {

// /health, /ready, /metrics
void add_ops_routes(Router& router, ServerContext& ctx);
// GET / (the chat page for browsers, Ollama's heartbeat text otherwise), /assets/...
void add_web_routes(Router& router, ServerContext& ctx);
// True for a request of the chat page's own files: GET or HEAD of / by a browser (Accept names
// text/html) or of /assets/... They hold no data, so they load without the API key and the
// page can ask for it; Ollama's heartbeat (GET / otherwise) and every API route still need it.
bool is_public_web_request(const HttpRequest& req);
// /v1/models, /api/tags, /api/show, /api/ps, /api/version
void add_model_routes(Router& router, ServerContext& ctx);
// /tokenize, /detokenize (llama-server's and vLLM's shapes)
void add_tokenize_routes(Router& router, ServerContext& ctx);
// /v1/chat/completions, /v1/completions
void add_openai_routes(Router& router, ServerContext& ctx);
// /api/chat, /api/generate
void add_ollama_routes(Router& router, ServerContext& ctx);

}  // namespace duet
