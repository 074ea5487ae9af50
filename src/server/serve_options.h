// Everything `duet serve` can be told, in one place: cmd_serve.cc turns each field into a
// flag (and --help), the server reads them from here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace duet {

class Tokenizer;

struct ServeOptions {
  std::string model_path;  // empty: the built-in demo model (random weights)
  std::string model_name;  // the name clients use; empty: from the file ("qwen3-demo" for the demo)
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;         // empty: no key required
  std::string think = "auto";  // server default mode: on | off | auto
  // Added tokens matched in client text: "none", or "non-special" (Hugging Face's behaviour
  // for <think>, <tool_call>, ...; control tokens never match there).
  std::string client_added_tokens = "none";
  int64_t kv_budget_mb = 1024;  // KV cache size
  int64_t max_batch_tokens = 512;
  int64_t max_running = 64;  // sequences decoded at once
  int64_t max_queue = 64;    // requests that may wait beyond max_running; then 429
  int threads = 0;           // compute threads; 0: all cores
  int http_threads = 2;      // I/O threads
  std::vector<std::string> cors_origins;
  double drain_seconds = 30;       // on SIGTERM: how long in-flight requests may take to finish
  bool debug_timestamps = false;   // add the server's emit time to every streamed chunk
  double debug_step_pause_ms = 0;  // pause after each engine step (paces latency tests)
  double rope_scale = 0;           // > 0: YaRN with this factor
  int64_t max_body_kb = 8192;
  double read_timeout_seconds = 30;
  int max_connections = 512;
  int max_connections_per_client = 256;   // per remote address; 0: no limit of its own
  double first_byte_timeout_seconds = 5;  // a new connection's first byte
  int sse_keepalive_ms = 5000;   // keep-alives (SSE comment, empty Ollama line) while prefilling
  std::string backend = "auto";  // --backend (backend/select/backend_select.h)
  // Not a flag: only a test binary sets it (tests/support/scripted_serve.cc), to script the
  // model's output; it is built once the tokenizer is loaded.
  std::function<LogitsOverride(const Tokenizer&)> test_logits_override;
};

}  // namespace duet
