#include "server/app.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "model/qwen3_model.h"
#include "server/api_keys.h"
#include "server/front_door.h"
#include "server/guard.h"
#include "server/http_server.h"
#include "server/routes.h"
#include "server/sd_notify.h"

namespace duet {
namespace {

// Tells systemd (Type=notify; nothing without NOTIFY_SOCKET) where the server stands. A
// failure is logged and otherwise ignored: the server works the same without a supervisor.
void notify_systemd(Logger& log, const std::string& state) {
  if (Status s = sd_notify(state); !s) log.warn("-", s.message());
}

// The main thread waits here for the model to load, a signal, or a load failure.
struct Lifecycle {
  std::mutex mu;
  std::condition_variable cv;
  int signals = 0;
  bool load_done = false;
  bool load_failed = false;
};

Status check_model_path(const std::string& path) {
  if (path.empty()) return Status::ok();  // the demo model
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st))
    return Status::error("the model file " + path + " does not exist (-m)");
  if (std::filesystem::is_directory(st))
    return Status::error("the model path " + path + " is a directory, not a GGUF file (-m)");
  if (access(path.c_str(), R_OK) != 0)
    return Status::error("the model file " + path + " cannot be read: " + std::strerror(errno));
  return Status::ok();
}

}  // namespace

int run_serve(const ServeOptions& options) {
  Logger log;
  if (Status s = ModelHost::check_options(options.model); !s) {
    log.error("-", s.message());
    return 1;
  }
  if (options.port < 0 || options.port > 65535) {
    log.error("-", "--port must be in [0, 65535]");
    return 1;
  }
  if (options.max_queue < 0) {
    log.error("-", "--max-queue must be >= 0");
    return 1;
  }
  // A model file that is not there is said before "listening", naming the path.
  if (Status s = check_model_path(options.model.model_path); !s) {
    log.error("-", s.message());
    return 1;
  }
  // The keys themselves are never logged; only how many there are.
  Result<std::vector<std::string>> api_keys = load_api_keys(options.api_keys, options.api_key_file);
  if (!api_keys) {
    log.error("-", api_keys.message());
    return 1;
  }
  ServerMetrics metrics("");
  ModelHost host(options.model, log);
  ServerContext ctx(options, log, metrics, host);
  ctx.api_keys = std::move(*api_keys);
  ctx.bound_to_loopback = is_loopback_host(options.host);
  if (!ctx.bound_to_loopback)
    log.warn("-", "listening on a non-loopback address: anyone who can reach it can use it" +
                      std::string(ctx.api_keys.empty() ? " (no --api-key set)" : ""));
  if (!ctx.api_keys.empty())
    log.info("-", "API key required on every route but /health and the chat page's files (" +
                      std::to_string(ctx.api_keys.size()) +
                      (ctx.api_keys.size() == 1 ? " key accepted)" : " keys accepted)"));

  Router router;
  add_ops_routes(router, ctx);
  add_web_routes(router, ctx);
  add_model_routes(router, ctx);
  add_tokenize_routes(router, ctx);
  add_openai_routes(router, ctx);
  add_ollama_routes(router, ctx);

  HttpServerOptions http;
  http.host = options.host;
  http.port = static_cast<uint16_t>(options.port);
  http.io_threads = std::max(1, options.http_threads);
  http.max_body_bytes = static_cast<size_t>(std::max<int64_t>(1, options.max_body_kb)) << 10;
  http.read_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(0.1, options.read_timeout_seconds) * 1000));
  http.max_connections = std::max(1, options.max_connections);
  http.max_connections_per_client = std::max(0, options.max_connections_per_client);
  http.first_byte_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(0.1, options.first_byte_timeout_seconds) * 1000));
  HttpServer server(
      http,
      [&ctx, &router](const std::shared_ptr<Exchange>& ex) { handle_request(ctx, router, ex); },
      [](std::string_view path, int status, const std::string& message) {
        return error_response(path, status, message);
      },
      log);

  Lifecycle life;
  server.on_signal([&life](int) {
    std::lock_guard<std::mutex> lock(life.mu);
    life.signals++;
    life.cv.notify_all();
  });
  if (Status s = server.start(); !s) {
    log.error("-", s.message());
    return 1;
  }
  const std::string address =
      (options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host) +
      ":" + std::to_string(server.port());
  log.info("-", "duet listening on http://" + address +
                    " (loading the model; /ready says 503 until done)");

  // Load in the background so /health and /ready answer meanwhile.
  std::thread loader([&] {
    Status s = host.load();
    // From here /ready answers 200 (until a drain begins): systemd may start what waits on us.
    if (s) notify_systemd(log, "READY=1\nSTATUS=model loaded, serving");
    std::lock_guard<std::mutex> lock(life.mu);
    life.load_done = true;
    if (!s && s.message() == kLoadCancelled) {
      log.info("-", "stopped while loading the model");
    } else if (!s) {
      life.load_failed = true;
      ctx.load_failed.store(true);
      log.error("-", s.message());
    } else {
      metrics.set_model_name(host.info().name);
      log.info("-", host.startup_summary() + " | http://" + address);
    }
    life.cv.notify_all();
  });

  int exit_code = 0;
  {
    std::unique_lock<std::mutex> lock(life.mu);
    life.cv.wait(lock, [&] { return life.signals > 0 || life.load_failed; });
    if (life.load_failed) exit_code = 1;
    // A signal during the load stops it at its next step (one matrix); the loader ends then.
    if (!life.load_done) host.cancel_load();
  }
  loader.join();
  // After the loader: a load that ended just as the signal came has sent its READY=1 first.
  notify_systemd(log, exit_code == 0 ? "STOPPING=1\nSTATUS=draining" : "STOPPING=1");

  if (exit_code == 0) {
    // Drain: /ready → 503, new generations → 503, in-flight ones may finish.
    ctx.draining.store(true);
    log.info("-", "draining: waiting up to " + std::to_string(options.drain_seconds) + " s for " +
                      std::to_string(ctx.active_generations.load()) + " request(s) in flight");
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(options.drain_seconds * 1000));
    std::unique_lock<std::mutex> lock(life.mu);
    while (ctx.active_generations.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      // A second signal means: stop now.
      if (life.signals > 1) break;
      life.cv.wait_for(lock, std::chrono::milliseconds(20));
    }
    if (ctx.active_generations.load() > 0) {
      log.warn("-", "drain time is up: ending " + std::to_string(ctx.active_generations.load()) +
                        " request(s)");
      ctx.abort_all();
      const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (ctx.active_generations.load() > 0 && std::chrono::steady_clock::now() < grace)
        life.cv.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  // Requests still being prepared finish (each then answers, or is refused as draining).
  ctx.prep.stop();
  if (host.loaded()) {
    // Whatever is still in the engine (a request whose step outlasted the grace, one that
    // slipped in as the drain began) gets its final event now, while the I/O threads still
    // run: its writer ends the response and lets go of the request's objects. Ended after
    // the I/O threads stopped, those events would wait on stopped strands and the objects
    // would never be freed.
    host.stop_engine();
    std::unique_lock<std::mutex> lock(life.mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (ctx.active_generations.load() > 0 && std::chrono::steady_clock::now() < deadline)
      life.cv.wait_for(lock, std::chrono::milliseconds(5));
    // Let the last bytes of finished streams reach their sockets before closing them.
    const auto flush_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (server.writes_in_flight() > 0 && std::chrono::steady_clock::now() < flush_deadline)
      life.cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  server.stop();
  host.shutdown();
  log.info("-", exit_code == 0 ? "stopped" : "stopped after an error");
  return exit_code;
}

}  // namespace duet
