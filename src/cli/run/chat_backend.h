// Where `duet run` sends a conversation: the model in this process (local_chat.h) or a running
// server over its OpenAI API (remote_chat.h). Both take the same OpenAI chat body and show the
// reply through the same sink, so the terminal looks the same either way.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/json_util.h"

namespace duet::cli {

// The parts of a reply, shown as they arrive.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void reasoning(std::string_view text) = 0;
  virtual void content(std::string_view text) = 0;
  // A complete tool call the model asked for (nothing runs it here).
  virtual void tool_call(const std::string& name, const std::string& arguments) = 0;
};

struct ReplyOutcome {
  enum class End {
    kStop,         // the model finished (or a stop string)
    kLength,       // max_tokens, or the context, ran out
    kToolCalls,    // the model called a tool
    kInterrupted,  // Ctrl-C
    kTooLong,      // refused before it started: the conversation does not fit the context
    kError,        // refused or failed; `error` says why
  };
  End end = End::kError;
  std::string error;
  std::string answer;         // the answer's text (reasoning apart), kept in the conversation
  int64_t tokens = 0;         // generated, reasoning included
  double tokens_per_s = 0;    // after the first token (the decode rate)
  double first_token_ms = 0;  // the prompt's processing, as the user waits for it
  bool thinking = false;      // the mode the reply ran in
};

class ChatBackend {
 public:
  virtual ~ChatBackend() = default;
  // Sends one request and shows its reply; stops the reply soon after `interrupted` is set.
  // kTooLong means: drop old turns and ask again. With `keep_all` (nothing is left to drop)
  // a backend that asks for room for the reply sends what fits instead.
  virtual ReplyOutcome reply(const Json& body, ReplySink& sink,
                             const std::atomic<bool>& interrupted, bool keep_all) = 0;
};

// Whether an error message says that the prompt does not fit the context, in the words duet,
// vLLM, llama.cpp's server and Ollama use for it.
bool is_context_overflow(std::string_view message);

}  // namespace duet::cli
