// Operations endpoints: liveness, readiness, Prometheus metrics (the page: routes_web.cc).
#include <nlohmann/json.hpp>

#include "server/front_door.h"
#include "server/routes.h"

namespace duet {

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
}

}  // namespace duet
