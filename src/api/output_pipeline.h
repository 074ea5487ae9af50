// The engine's tokens → what a client is sent, one engine event at a time:
//   ReasoningTracker (which tokens are <think> / </think> tags, on ids, as the engine decides)
//   → IncrementalDecoder (UTF-8 safe) → ReasoningSplitter (reasoning | content)
//   → ToolCallParser (content | tool calls) → StopStringMatcher (on the answer's content).
// Each push() returns at once what may be shown now; nothing waits for more tokens except
// the few bytes a parser must hold (a possible tag or stop-string prefix, an incomplete
// character). Dialect-free: the formatters turn an OutputDelta into JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/request_model.h"
#include "engine/reasoning_tracker.h"
#include "engine/request.h"
#include "text/output/reasoning_splitter.h"
#include "text/output/stop_strings.h"
#include "text/output/tool_call_parser.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace duet {

struct OutputOptions {
  bool skip_special_tokens = true;
  ReasoningOutput reasoning = ReasoningOutput::kSeparate;
  bool thinking = false;             // the prompt lets the model think
  bool prompt_opened_think = false;  // the output starts inside <think> (when thinking)
  // The engine's ids (EngineConfig::reasoning_ids); nullptr: built from the tokenizer.
  std::shared_ptr<const ReasoningTokenIds> reasoning_ids;
  bool parse_tool_calls = false;
  std::vector<std::string> stop;
  uint64_t tool_id_seed = 0;
  bool logprobs = false;
};

struct ToolCallDelta {
  int index = 0;
  bool begin = false;  // first delta of this call: id and name are set
  std::string id, name;
  std::string arguments;  // a fragment of the arguments' JSON text
};

struct LogprobEntry {
  std::string token;  // the token's text (invalid UTF-8 replaced)
  std::vector<uint8_t> bytes;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // (token text, logprob)
  std::vector<std::vector<uint8_t>> top_bytes;
};

struct OutputDelta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCallDelta> tool_calls;
  std::vector<ParsedToolCall> finished_calls;  // calls whose block closed in this delta
  std::vector<LogprobEntry> logprobs;
  int tokens = 0;  // engine tokens this delta covers
  bool has_output() const {
    return !reasoning.empty() || !content.empty() || !tool_calls.empty() ||
           !finished_calls.empty() || !logprobs.empty();
  }
};

// <think>, </think> and the whitespace-only tokens of a vocabulary (a pass over all of it:
// built once per model and shared).
std::shared_ptr<const ReasoningTokenIds> reasoning_token_ids(const Tokenizer& tokenizer);

class OutputPipeline {
 public:
  OutputPipeline(const Tokenizer& tokenizer, OutputOptions options);
  ~OutputPipeline();

  // The tokens of one engine event (sampled or injected).
  OutputDelta push(const TokenEvent& event);
  // The output ended: flushes what the parsers held.
  OutputDelta finish();

  // A stop string matched: nothing more will be shown; the caller stops the engine.
  bool stopped() const { return stopped_; }
  // Every tool call that closed well-formed, in order.
  const std::vector<ParsedToolCall>& tool_calls() const { return calls_; }

 private:
  void route_text(std::string_view text, OutputDelta& out, bool final);
  void route_events(const std::vector<ReasoningEvent>& events, OutputDelta& out);
  void route_content(std::string_view text, OutputDelta& out, bool final);
  void emit_content(std::string_view text, OutputDelta& out, bool final);
  LogprobEntry logprob_entry(int32_t token, float logprob,
                             const std::vector<TokenLogprob>& top) const;

  const Tokenizer& tokenizer_;
  OutputOptions options_;
  IncrementalDecoder decoder_;
  ReasoningTracker tracker_;
  ReasoningSplitter splitter_;
  std::unique_ptr<ToolCallParser> tools_;
  std::unique_ptr<StopStringMatcher> stops_;
  bool stopped_ = false;
  std::vector<ParsedToolCall> calls_;
};

}  // namespace duet
