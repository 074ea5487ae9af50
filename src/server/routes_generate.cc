// The generation routes of both dialects: OpenAI's /v1/chat/completions and
// /v1/completions, Ollama's /api/chat and /api/generate. Each parses and validates its
// body into the one internal request, prepares it on the host (mode, prompt) and runs it.
#include "api/request_model.h"
#include "host/start_generation.h"
#include "server/front_door.h"
#include "server/generation.h"
#include "server/routes.h"

namespace duet {
namespace {

using Parser = Result<ApiRequest> (*)(const Json&, const RequestLimits&);

// A request read, its mode decided and its prompt prepared; or the error to answer.
struct Admitted {
  int status = 0;  // non-zero: answer this error
  std::string error;
  ApiRequest request;
  PreparedRequest prepared;
};

Admitted refuse(int status, std::string message) {
  Admitted a;
  a.status = status;
  a.error = std::move(message);
  return a;
}

// The CPU work of a request (on a PrepWorkers thread): every step is linear in the body.
Admitted admit(ServerContext& ctx, const HttpRequest& http, Parser parse) {
  auto body = parse_request_body(http.body);
  if (!body) return refuse(400, body.message());
  auto request = parse(*body, RequestLimits{});
  if (!request) return refuse(400, request.message());
  const std::string& served = ctx.host.info().name;
  const ModelNameMatch match = match_model_name(request->model, served);
  if (!match.matches) return refuse(404, "model not found; this server serves '" + served + "'");
  Admitted a;
  a.request = std::move(request.value());
  apply_model_pin(match, a.request);
  auto prepared = prepare_generation(ctx.host, a.request);
  if (!prepared) return refuse(400, prepared.message());
  a.prepared = std::move(prepared.value());
  return a;
}

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
  // The request is immutable while the exchange lives, so a worker may read it.
  ctx.prep.submit([&ctx, ex, parse] {
    auto a = std::make_shared<Admitted>(admit(ctx, ex->request(), parse));
    ex->post([&ctx, ex, a] {
      if (a->status != 0) return respond_error(*ex, a->status, a->error);
      run_generation(ctx, ex, std::move(a->request), std::move(a->prepared));
    });
  });
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
