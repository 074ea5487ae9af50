// The generation routes of both dialects: OpenAI's /v1/chat/completions and
// /v1/completions, Ollama's /api/chat and /api/generate. Each parses and validates its
// body into the one internal request, decides the thinking mode, and runs it.
#include "api/request_model.h"
#include "server/front_door.h"
#include "server/generation.h"
#include "server/routes.h"

namespace duet {
namespace {

using Parser = Result<ApiRequest> (*)(const Json&, const RequestLimits&);

void handle_generate(ServerContext& ctx, const std::shared_ptr<Exchange>& ex, Parser parse) {
  if (ctx.draining.load()) {
    ctx.metrics.rejected("draining");
    HttpResponse res = error_response(ex->request().path, 503, "the server is shutting down");
    res.headers.push_back({"Retry-After", "1"});
    return ex->respond(std::move(res));
  }
  if (!ctx.host.loaded()) {
    HttpResponse res =
        error_response(ex->request().path, 503, "the model is still loading; try again shortly");
    res.headers.push_back({"Retry-After", "1"});
    return ex->respond(std::move(res));
  }
  auto body = parse_request_body(ex->request().body);
  if (!body) return respond_error(*ex, 400, body.message());
  auto request = parse(*body, RequestLimits{});
  if (!request) return respond_error(*ex, 400, request.message());
  const std::string& served = ctx.host.info().name;
  if (!model_name_matches(request->model, served))
    return respond_error(*ex, 404, "model not found; this server serves '" + served + "'");
  if (request->raw_prompt || request->load_only) {
    request->mode.thinking = false;
    request->mode.source = "raw_prompt";
    request->mode.reason = "raw prompt: no chat template";
  } else {
    auto mode = decide_mode(*body, ctx.think_default);
    if (!mode) return respond_error(*ex, 400, mode.message());
    request->mode = std::move(mode.value());
  }
  run_generation(ctx, ex, std::move(request.value()));
}

}  // namespace

void add_openai_routes(Router& router, ServerContext& ctx) {
  router.add("POST", "/v1/chat/completions", [&ctx](const std::shared_ptr<Exchange>& ex) {
    handle_generate(ctx, ex, &parse_openai_chat);
  });
  router.add("POST", "/v1/completions", [&ctx](const std::shared_ptr<Exchange>& ex) {
    handle_generate(ctx, ex, &parse_openai_completion);
  });
}

void add_ollama_routes(Router& router, ServerContext& ctx) {
  router.add("POST", "/api/chat", [&ctx](const std::shared_ptr<Exchange>& ex) {
    handle_generate(ctx, ex, &parse_ollama_chat);
  });
  router.add("POST", "/api/generate", [&ctx](const std::shared_ptr<Exchange>& ex) {
    handle_generate(ctx, ex, &parse_ollama_generate);
  });
}

}  // namespace duet
