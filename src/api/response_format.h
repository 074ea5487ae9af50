// Output → the dialects' JSON: OpenAI chat.completion(.chunk) and text_completion, Ollama
// chat and generate objects (streamed as NDJSON lines). One formatter per request holds
// what every chunk repeats (id, model, creation time) and what the final object needs
// (accumulated text and calls for non-streaming answers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/output_pipeline.h"
#include "api/request_model.h"

namespace duet {

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
};

// Ollama's timings, nanoseconds.
struct Timings {
  int64_t total_ns = 0, load_ns = 0, prompt_eval_ns = 0, eval_ns = 0;
};

struct FinishInfo {
  std::string reason;  // "stop", "length", "tool_calls", "abort"
  Usage usage;
  Timings timings;
  ThinkingDecision mode;  // source kRawPrompt: no template, the prompt itself is the mode
};

// Debug fields for tests that measure latency inside the server (--debug-timestamps):
// steady-clock nanoseconds (CLOCK_MONOTONIC, comparable with a local client's clock).
struct DebugStamp {
  int64_t engine_ns = 0;  // when the engine produced the token
  int64_t write_ns = 0;   // when this chunk was handed to the socket
  int tokens = 0;         // engine tokens this chunk covers
};

class ResponseFormatter {
 public:
  virtual ~ResponseFormatter() = default;

  // Streaming. Each returns the bytes to write ("" for nothing): one SSE event
  // ("data: {...}\n\n") or one NDJSON line per call, never several deltas merged.
  virtual std::string stream_start() = 0;
  virtual std::string stream_delta(const OutputDelta& delta, const DebugStamp* stamp) = 0;
  virtual std::string stream_end(const FinishInfo& finish) = 0;
  // An error after the stream began (the status line is already out).
  virtual std::string stream_error(const std::string& message) = 0;
  // Bytes that keep an idle stream alive while a long prompt is processed, and that a
  // client of the dialect reads as nothing: an SSE comment, or (NDJSON has no comments) an
  // Ollama object with empty content and done:false, which clients append as "".
  virtual std::string stream_keepalive() = 0;

  // Non-streaming: collect every delta, then one body.
  void accumulate(const OutputDelta& delta);
  virtual std::string full_response(const FinishInfo& finish) = 0;

  virtual const char* stream_content_type() const = 0;

 protected:
  std::string reasoning_, content_;
  std::vector<ParsedToolCall> calls_;
  std::vector<LogprobEntry> logprobs_;
};

struct FormatterConfig {
  Dialect dialect = Dialect::kOpenAI;
  Endpoint endpoint = Endpoint::kChat;
  std::string model;    // the name to report
  std::string id;       // "chatcmpl-…", "cmpl-…"
  int64_t created = 0;  // unix seconds
  bool include_usage = false;
  bool logprobs = false;
  int completion_logprobs = -1;
};

std::unique_ptr<ResponseFormatter> make_formatter(const FormatterConfig& config);
// Ollama's answer to a request without a prompt: done_reason "load" (or "unload").
std::string ollama_lifecycle_response(const FormatterConfig& config, bool unload);

// The "duet" object that says which mode ran and why (final chunk / response).
nlohmann::ordered_json mode_json(const FinishInfo& finish);
// X-Duet-Thinking-Mode: "thinking; source=auto" / "non-thinking; source=think".
std::string mode_header(const ThinkingDecision& mode);

}  // namespace duet
