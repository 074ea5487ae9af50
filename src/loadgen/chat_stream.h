// Reads the events of one OpenAI chat-completions stream into a RequestRecord: which events
// carry generated text (answer or reasoning), the usage chunk, the finish reason, an error
// object, the [DONE] sentinel. Server-neutral: duet, vLLM, SGLang, llama.cpp and Ollama's /v1
// all send this shape; reasoning arrives as reasoning_content (llama.cpp, duet) or reasoning
// (vLLM's newer name, duet) — both are the same text when both are present.
#pragma once

#include <string>

#include "loadgen/record.h"

namespace duet::loadgen {

class ChatStreamReader {
 public:
  explicit ChatStreamReader(RequestRecord& record) : r_(record) {}

  // One event's data, arrived `t` seconds after the request was sent. Returns false when the
  // stream is broken (unparsable JSON, an error object): the record says why.
  bool on_event(const std::string& data, double t);
  bool done() const { return done_; }
  // At the end of the stream: false (and the record's error set) unless the stream ended
  // properly ([DONE], or at least a finish reason from servers that omit [DONE]). A proper
  // stream without text (the model stopped at once) is a success with no TTFT.
  bool finish(double t);

 private:
  bool fail(const char* kind, std::string message);

  RequestRecord& r_;
  bool done_ = false;
  bool failed_ = false;
};

}  // namespace duet::loadgen
