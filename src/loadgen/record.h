// What one benchmark request was asked to do and what the client saw of it. Times are
// client-side, from a steady clock, taken as each read from the socket completes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duet::loadgen {

enum class Think { kServerDefault, kOn, kOff, kAuto };
const char* think_name(Think t);

struct PlannedRequest {
  int index = 0;
  std::string prompt;         // the user message (or a messages array as JSON, see below)
  std::string messages_json;  // when the dataset gave messages; overrides prompt
  int input_len = 0;          // the intended prompt length in words (random dataset) or 0
  int output_len = 0;         // max_tokens
  Think think = Think::kServerDefault;
  double scheduled_s = 0;  // arrival time after the start of the measured run
};

// One event of the stream that carried generated text.
struct TokenArrival {
  double t = 0;        // seconds after the request was sent
  bool answer = true;  // content or tool calls; false for reasoning
};

struct RequestRecord {
  PlannedRequest plan;
  bool warmup = false;
  double sent_s = 0;  // when it was sent, seconds after the start of the measured run
  // Outcome.
  bool ok = false;
  std::string error_kind;  // "connect", "http", "timeout", "malformed_sse", "server_error", ...
  std::string error;       // a readable message
  int http_status = 0;
  std::vector<TokenArrival> tokens;
  double e2e = 0;             // send → end of the stream
  int64_t usage_prompt = -1;  // -1: the server sent no usage
  int64_t usage_completion = -1;
  int64_t usage_reasoning = -1;
  std::string finish_reason;
};

}  // namespace duet::loadgen
