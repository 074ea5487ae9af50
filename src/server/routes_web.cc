// The chat page: GET / and GET /assets/..., served from the files embedded at build time.
// GET / is also Ollama's heartbeat: its clients (and curl) probe it and expect the plain text
// "Ollama is running", so the page goes only to requests that accept HTML (browsers).
#include <string>

#include "server/front_door.h"
#include "server/routes.h"
#include "server/web_assets.h"

namespace duet {
namespace {

// True when the Accept header names text/html (a browser navigating to the page).
bool accepts_html(const HttpRequest& req) {
  const std::string_view accept = req.header("accept").value_or("");
  return accept.find("text/html") != std::string_view::npos;
}

// The request's If-None-Match lists this ETag (or "*"): the client's copy is current.
bool not_modified(const HttpRequest& req, std::string_view etag) {
  const std::string_view given = req.header("if-none-match").value_or("");
  return given == "*" || given.find(etag) != std::string_view::npos;
}

void serve_asset(Exchange& ex, const WebAsset& asset) {
  HttpResponse res;
  res.content_type = std::string(web_content_type(asset.path));
  // File names carry no content hash, so caches revalidate every time (cheap: a 304 on a
  // matching ETag) and a new build is never hidden behind a stale copy.
  res.headers = {{"Cache-Control", "no-cache"},
                 {"ETag", std::string(asset.etag)},
                 {"X-Content-Type-Options", "nosniff"}};
  if (asset.path.ends_with(".html")) {
    res.headers.push_back({"Content-Security-Policy", std::string(web_content_security_policy())});
    res.headers.push_back({"Referrer-Policy", "no-referrer"});
  }
  if (not_modified(ex.request(), asset.etag)) {
    res.status = 304;
  } else {
    res.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
  }
  ex.respond(std::move(res));
}

}  // namespace

bool is_public_web_request(const HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") return false;
  if (req.path == "/") return accepts_html(req);
  return req.path.starts_with("/assets/");
}

void add_web_routes(Router& router, ServerContext& ctx) {
  router.add("GET", "/", [](const std::shared_ptr<Exchange>& ex) {
    const WebAsset* page = find_web_asset("/index.html");
    if (page != nullptr && accepts_html(ex->request())) return serve_asset(*ex, *page);
    HttpResponse res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = "Ollama is running";
    ex->respond(std::move(res));
  });
  router.add_prefix("GET", "/assets/", [](const std::shared_ptr<Exchange>& ex) {
    const WebAsset* asset = find_web_asset(ex->request().path);
    if (asset == nullptr) return respond_error(*ex, 404, "no such file");
    serve_asset(*ex, *asset);
  });
}

}  // namespace duet
