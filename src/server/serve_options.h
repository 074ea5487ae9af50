// Everything `duet serve` can be told, in one place: cmd_serve.cc turns each field into a
// flag (and --help), the server reads them from here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/host_options.h"

namespace duet {

struct ServeOptions {
  HostOptions model;  // the model, its backend and engine, the default mode (duet run shares these)
  std::string host = "127.0.0.1";
  int port = 8080;
  // --api-key (repeatable; each may hold several keys, comma-separated) and --api-key-file:
  // with none, no key is required (server/api_keys.h reads both)
  std::vector<std::string> api_keys;
  std::string api_key_file;
  int64_t max_queue = 64;  // requests that may wait beyond max_running; then 429
  int http_threads = 2;    // I/O threads
  std::vector<std::string> cors_origins;
  double drain_seconds = 30;      // on SIGTERM: how long in-flight requests may take to finish
  bool debug_timestamps = false;  // add the server's emit time to every streamed chunk
  int64_t max_body_kb = 8192;
  double read_timeout_seconds = 30;
  int max_connections = 512;
  int max_connections_per_client = 256;   // per remote address; 0: no limit of its own
  double first_byte_timeout_seconds = 5;  // a new connection's first byte
  int sse_keepalive_ms = 5000;  // keep-alives (SSE comment, empty Ollama line) while prefilling
};

}  // namespace duet
