// What the route handlers share: options, log, metrics, the model, and the server's
// lifecycle state (loading → ready → draining).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "host/model_host.h"
#include "server/metrics.h"
#include "server/prep_workers.h"
#include "server/serve_options.h"

namespace duet {

struct ServerContext {
  ServerContext(const ServeOptions& o, Logger& l, ServerMetrics& m, ModelHost& h)
      : options(o), log(l), metrics(m), host(h), prep(o.http_threads) {}

  const ServeOptions& options;
  Logger& log;
  ServerMetrics& metrics;
  ModelHost& host;
  bool bound_to_loopback = true;
  // Every API key accepted (--api-key, DUET_API_KEY, --api-key-file); empty: none needed.
  std::vector<std::string> api_keys;
  // Where generation requests are parsed, rendered and tokenized (off the I/O threads).
  PrepWorkers prep;

  std::atomic<bool> draining{false};
  std::atomic<bool> load_failed{false};
  // Generation requests admitted and not yet finished (for the queue bound and the drain).
  std::atomic<int64_t> active_generations{0};

  bool ready() const { return host.loaded() && !draining.load(); }

  // Requests in the engine, so a drain that runs out of time can end them.
  void track(const std::shared_ptr<RequestHandle>& h) {
    std::lock_guard<std::mutex> lock(live_mu);
    live.insert(h);
  }
  void untrack(const std::shared_ptr<RequestHandle>& h) {
    std::lock_guard<std::mutex> lock(live_mu);
    live.erase(h);
  }
  // Cancels everything still running (the drain deadline passed); they end as "abort".
  void abort_all() {
    drain_aborted.store(true);
    std::lock_guard<std::mutex> lock(live_mu);
    for (const auto& h : live) h->cancel();
  }
  std::atomic<bool> drain_aborted{false};

 private:
  std::mutex live_mu;
  std::set<std::shared_ptr<RequestHandle>> live;
};

}  // namespace duet
