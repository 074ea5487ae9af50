// Shapes streamed model output into reasoning and content once the think block's tags are
// known. Where the block opens and closes is decided on token ids (engine/reasoning_tracker.h,
// which the engine uses too); the caller feeds the text between tags with push() and reports
// each tag with open() or close(). The splitter never looks for tags in text, so a "<think>"
// written as ordinary text (in an answer's code sample, say) is text.
//
// Fed one decoded piece at a time, it holds back only whitespace at the edges of reasoning and
// content, which is trimmed: a client never sees the "\n" after <think>, the "\n" before
// </think>, the "\n\n" after it, or whitespace the model wrote before <think>. Reasoning that
// never closes (output truncated) is reasoning; finish() flushes it.
//
// Raw mode: tags stay in the content (the caller passes their text), nothing is trimmed or
// held (for clients that asked for raw output); if the prompt opened the think block,
// "<think>\n" is emitted first so the client sees a balanced pair.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace duet {

enum class ReasoningKind { kReasoning, kContent };

struct ReasoningEvent {
  ReasoningKind kind;
  std::string text;
  bool operator==(const ReasoningEvent&) const = default;
};

class ReasoningSplitter {
 public:
  // starts_inside: the prompt left the model inside <think> (thinking mode with an open block).
  explicit ReasoningSplitter(bool starts_inside, bool raw = false);

  // Text the model wrote since the last tag: reasoning inside the block, content outside.
  // Adjacent text of one kind comes as one event; never empty texts.
  std::vector<ReasoningEvent> push(std::string_view piece);
  // A tag token opened (or, at the start, reopened) the block / closed it. `tag_text` is what
  // raw mode shows for it.
  std::vector<ReasoningEvent> open(std::string_view tag_text);
  std::vector<ReasoningEvent> close(std::string_view tag_text);
  // The output ended: flushes anything held (a truncated think block stays reasoning).
  std::vector<ReasoningEvent> finish();

 private:
  enum class State { kReasoning, kContentStart, kContent, kRaw };
  void emit(std::vector<ReasoningEvent>& out, ReasoningKind kind, std::string_view text);
  void process(std::vector<ReasoningEvent>& out, bool final);

  bool raw_prefix_pending_;
  State state_;
  bool reasoning_started_ = false;  // a non-space byte of reasoning was emitted
  std::string pending_;             // trailing whitespace of reasoning, not yet shown
};

}  // namespace duet
