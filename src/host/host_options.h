// What the model host is told: which model, on which backend, with how much memory, and the
// server's default thinking mode. `duet serve` and `duet run` set these from their flags.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/engine.h"

namespace duet {

class Tokenizer;

struct HostOptions {
  std::string model_path;  // empty: the built-in demo model (random weights)
  std::string model_name;  // the name clients use; empty: from the file ("qwen3-demo" for the demo)
  std::string backend = "auto";  // --backend (backend/select/backend_select.h)
  int threads = 0;               // compute threads; 0: all cores
  int64_t ctx_size = 0;          // -c: tokens one sequence may hold; 0: the model's context
  std::string kv_type = "f16";   // the KV cache's stored type: f16, bf16 or q8_0
  int64_t kv_budget_mb = 0;      // KV cache size; 0: derived (host/kv_plan.h)
  bool fit = false;              // shrink the context to what fits instead of refusing
  int64_t max_batch_tokens = 512;
  int64_t max_running = 64;  // --parallel: sequences decoded at once
  // Seconds a request may take before it ends as a length stop; 0: no limit but the context.
  double request_timeout_seconds = 0;
  // Structured output appends the text a grammar forces without sampling it (jump-forward);
  // this turns that off (for measuring what it is worth).
  bool no_jump_forward = false;
  double rope_scale = 0;           // > 0: YaRN with this factor
  std::string think = "auto";      // default mode: on | off | auto
  double debug_step_pause_ms = 0;  // pause after each engine step (paces latency tests)
  // Added tokens matched in client text: "none", or "non-special" (Hugging Face's behaviour
  // for <think>, <tool_call>, ...; control tokens never match there).
  std::string client_added_tokens = "none";
  // Not a flag: only a test binary sets it (tests/support/scripted_serve.cc), to script the
  // model's output; it is built once the tokenizer is loaded.
  std::function<LogitsOverride(const Tokenizer&)> test_logits_override;
};

}  // namespace duet
