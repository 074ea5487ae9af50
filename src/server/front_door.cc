#include "server/front_door.h"

#include "api/errors.h"
#include "server/api_keys.h"
#include "server/guard.h"
#include "server/routes.h"

namespace duet {

HttpResponse error_response(std::string_view path, int status, const std::string& message) {
  HttpResponse res;
  res.status = status;
  res.content_type = "application/json";
  res.body = error_body(dialect_for_path(path), status, message);
  return res;
}

void respond_error(Exchange& ex, int status, const std::string& message) {
  ex.respond(error_response(ex.request().path, status, message));
}

HttpResponse json_response(int status, std::string body) {
  HttpResponse res;
  res.status = status;
  res.body = std::move(body);
  return res;
}

void handle_request(ServerContext& ctx, const Router& router, const std::shared_ptr<Exchange>& ex) {
  const HttpRequest& req = ex->request();
  const std::string_view host = req.header("host").value_or("");
  if (ctx.bound_to_loopback && !(host.empty() && req.version < 11) && !host_header_allowed(host)) {
    return respond_error(*ex, 403,
                         "Host header not allowed: this server is bound to loopback and answers "
                         "only localhost, 127.0.0.1 or [::1]");
  }
  const std::string_view origin = req.header("origin").value_or("");
  const OriginVerdict verdict = check_origin(origin, host, ctx.options.cors_origins);
  if (verdict == OriginVerdict::kRefused)
    return respond_error(*ex, 403,
                         "cross-origin requests from this origin are not allowed "
                         "(see --cors-origin)");
  if (verdict == OriginVerdict::kAllowed) {
    ex->add_default_header({"Access-Control-Allow-Origin", std::string(origin)});
    ex->add_default_header({"Vary", "Origin"});
    ex->add_default_header({"Access-Control-Expose-Headers", "X-Request-Id, X-Duet-Thinking-Mode"});
    if (req.method == "OPTIONS") {  // preflight: carries no credentials by design
      HttpResponse res;
      res.status = 204;
      res.content_type = "text/plain";
      res.headers = {{"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
                     {"Access-Control-Allow-Headers",
                      "Authorization, Content-Type, X-Request-Id, OpenAI-Organization, "
                      "OpenAI-Project, X-Stainless-Lang, X-Stainless-Package-Version"},
                     {"Access-Control-Max-Age", "600"}};
      return ex->respond(std::move(res));
    }
  }
  // /health and the chat page's own files (which hold no data) need no key: the page then
  // asks its user for one when the API answers 401.
  if (!ctx.api_keys.empty() && req.path != "/health" && !is_public_web_request(req)) {
    std::string_view given = bearer_token(req.header("authorization").value_or(""));
    if (given.empty()) given = req.header("x-api-key").value_or("");
    if (!api_key_accepted(given, ctx.api_keys)) {
      HttpResponse res = error_response(req.path, 401, "missing or wrong API key");
      res.headers.push_back({"WWW-Authenticate", "Bearer"});
      return ex->respond(std::move(res));
    }
  }
  const Router::Match m = router.match(req.method, req.path);
  if (m.handler == nullptr) {
    // The path is the client's text: not echoed back.
    if (!m.path_known) return respond_error(*ex, 404, "unknown route");
    HttpResponse res =
        error_response(req.path, 405, "method not allowed on this route; use " + m.allow);
    res.headers.push_back({"Allow", m.allow});
    return ex->respond(std::move(res));
  }
  (*m.handler)(ex);
}

}  // namespace duet
