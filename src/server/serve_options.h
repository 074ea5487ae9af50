// Everything `duet serve` can be told, in one place: cmd_serve.cc turns each field into a
// flag (and --help), the server reads them from here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duet {

struct ServeOptions {
  std::string model_path;  // empty: the built-in demo model (random weights)
  std::string model_name;  // the name clients use; empty: from the file ("qwen3-demo" for the demo)
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;          // empty: no key required
  std::string think = "auto";   // server default mode: on | off | auto
  int64_t kv_budget_mb = 1024;  // KV cache size
  int64_t max_batch_tokens = 512;
  int64_t max_running = 64;  // sequences decoded at once
  int64_t max_queue = 64;    // requests that may wait beyond max_running; then 429
  int threads = 0;           // compute threads; 0: all cores
  int http_threads = 2;      // I/O threads
  std::vector<std::string> cors_origins;
  double drain_seconds = 30;      // on SIGTERM: how long in-flight requests may take to finish
  bool debug_timestamps = false;  // add the server's emit time to every streamed chunk
  double rope_scale = 0;          // > 0: YaRN with this factor
  int64_t max_body_kb = 8192;
  double read_timeout_seconds = 30;
  int max_connections = 512;
  int sse_keepalive_ms = 5000;  // ": keep-alive" comments while a prompt is prefilling
  bool ref_backend = false;     // the scalar reference backend (debugging)
};

}  // namespace duet
