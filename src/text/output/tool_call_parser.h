// Qwen3 tool calls in streamed content:
//   <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
// (several per turn). Fed the content text after reasoning, one piece at a time.
//
// A block is: "<tool_call>", whitespace, one JSON object with a non-empty string "name" and an
// optional object "arguments" (absent means {}; other keys are ignored), whitespace,
// "</tool_call>". The object is read by a JSON scanner, so braces or "</tool_call>" inside its
// strings do not end it. Anything else — malformed JSON, no name, a duplicate key, arguments
// that are not an object, text before the closing tag, or a block still open at finish() — is
// not a tool call: "<tool_call>" comes back as content and the text after it is read again as
// content (where a later, well-formed block is still found).
//
// Streaming events, for clients that show a call as it is written:
//   kToolCallBegin      as soon as the name is known (index, id, name)
//   kToolCallArguments  fragments of the arguments' JSON text, as written by the model; their
//                       concatenation is the call's arguments string
//   kToolCallEnd        the block closed and parsed (the full call)
//   kToolCallInvalid    a begun call turned out malformed: forget it; its raw text follows as
//                       content. Its index is not reused.
// Content outside blocks is held back only while it could be the start of "<tool_call>".
// The events do not depend on how the text was cut into pieces, and parse_all() (one piece)
// gives the same calls and content.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/output/json_stream_scanner.h"

namespace duet {

struct ParsedToolCall {
  std::string id;  // "call_" + 24 letters and digits
  std::string name;
  nlohmann::json arguments;      // an object
  std::string arguments_string;  // the arguments' JSON text as the model wrote it ("{}" if absent)
  // Where the block ("<tool_call>" … "</tool_call>") lies in the parsed text, [begin, end).
  size_t source_begin = 0, source_end = 0;
};

enum class ToolCallEventKind {
  kContent,
  kToolCallBegin,
  kToolCallArguments,
  kToolCallEnd,
  kToolCallInvalid
};

struct ToolCallEvent {
  ToolCallEventKind kind = ToolCallEventKind::kContent;
  std::string text = {};     // kContent: the text; kToolCallArguments: a fragment
  int index = -1;            // the call's index (not kContent)
  std::string id = {};       // kToolCallBegin, kToolCallEnd
  std::string name = {};     // kToolCallBegin, kToolCallEnd
  ParsedToolCall call = {};  // kToolCallEnd
};

struct ToolCallParseResult {
  std::string content;  // the text outside well-formed blocks
  std::vector<ParsedToolCall> calls;
};

class ToolCallParser {
 public:
  // Call ids are derived from `id_seed` and the call's index: pass a per-request random seed
  // for ids that differ between requests; the same seed gives the same ids (tests).
  explicit ToolCallParser(uint64_t id_seed = 0);

  std::vector<ToolCallEvent> push(std::string_view piece);
  std::vector<ToolCallEvent> finish();

  // The whole text at once (non-streaming responses): the same calls and content as streaming.
  static ToolCallParseResult parse_all(std::string_view text, uint64_t id_seed = 0);

  // True while inside a block (a server may hold finish_reason or count tool tokens).
  bool in_tool_call() const { return state_ == State::kBlock; }

 private:
  enum class State { kText, kBlock };
  enum class Phase { kBeforeObject, kObject, kAfterObject };
  void process(std::vector<ToolCallEvent>& out, bool final);
  void emit_content(std::vector<ToolCallEvent>& out, std::string_view text);
  void start_block(size_t tag_offset);
  enum class Step { kMore, kDone, kFail };
  // Feeds the block's last byte (already appended to block_).
  Step feed_block(std::vector<ToolCallEvent>& out, char c);
  Step read_object_byte(std::vector<ToolCallEvent>& out, char c);
  bool on_member(std::vector<ToolCallEvent>& out, const JsonObjectScanner::Member& m);
  void flush_arguments(std::vector<ToolCallEvent>& out);
  Step finish_block(std::vector<ToolCallEvent>& out);
  void fail_block(std::vector<ToolCallEvent>& out);
  std::string make_id(int index) const;

  uint64_t id_seed_;
  int next_index_ = 0;
  State state_ = State::kText;
  std::string pending_;        // unprocessed input
  size_t pending_offset_ = 0;  // offset of pending_[0] in the whole text

  // The open block.
  size_t block_offset_ = 0;  // offset of its "<tool_call>"
  std::string block_;        // the bytes after "<tool_call>" consumed so far
  Phase phase_ = Phase::kBeforeObject;
  JsonObjectScanner scanner_;
  size_t object_offset_ = 0;  // where the JSON object starts in block_
  size_t members_seen_ = 0;
  size_t end_tag_matched_ = 0;
  size_t key_decoded_at_ = SIZE_MAX;  // key_begin of the member whose key was decoded last
  std::string current_key_;
  bool name_key_seen_ = false, arguments_key_seen_ = false;
  bool has_name_ = false, has_arguments_ = false;
  std::string name_;
  size_t args_begin_ = 0, args_end_ = 0;  // in block_; args_end_ = 0 while open
  bool args_started_ = false;
  size_t args_emitted_ = 0;  // bytes of the arguments already sent as fragments
  int index_ = -1;           // the call's index once begun
};

}  // namespace duet
