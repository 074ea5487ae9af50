// Splits streamed model output into reasoning (inside <think>…</think>) and content.
//
// Fed one decoded piece at a time; holds back only what must be held: a suffix that could be
// the start of the tag being looked for, and whitespace at the edges of reasoning and content
// (which is trimmed, so a client never sees the "\n" after <think> or the "\n\n" after
// </think>). Rules:
//   - "<think>" at the very start (after optional whitespace) opens reasoning.
//   - Without it, the output is content — or reasoning if the prompt already opened the think
//     block (prompt_opened_think with thinking enabled); "<think>" at the start is then dropped
//     too, in case the model repeats it.
//   - "</think>" closes reasoning; everything after it is content, passed through untouched
//     (a "<think>" inside the answer, e.g. in a code sample, is the answer's text).
//   - Reasoning that never closes (output truncated) is reasoning; finish() flushes it.
//   - Non-thinking mode (the prompt ended with an empty think block): everything is content,
//     but a stray "<think></think>" at the start is removed — and if the model does write a
//     non-empty think block anyway, that text is reported as reasoning rather than shown as
//     tags in the answer.
//   - Raw mode: tags stay in the content, nothing is trimmed or held (for clients that asked
//     for raw output); if the prompt opened the think block, "<think>\n" is re-emitted first
//     so the client sees a balanced pair.
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
  ReasoningSplitter(bool prompt_opened_think, bool thinking_enabled, bool raw = false);

  // Events for one piece; adjacent text of one kind comes as one event; never empty texts.
  std::vector<ReasoningEvent> push(std::string_view piece);
  // The output ended: flushes anything held (a truncated think block stays reasoning).
  std::vector<ReasoningEvent> finish();

  // True while the model is (or, before its first words, is expected to be) writing reasoning:
  // for counting reasoning tokens and enforcing a thinking budget. False in raw mode.
  bool in_reasoning() const;
  // True once </think> was seen.
  bool reasoning_closed() const { return closed_; }

 private:
  enum class State { kStart, kReasoning, kContentStart, kContent, kRaw };
  void emit(std::vector<ReasoningEvent>& out, ReasoningKind kind, std::string_view text);
  void process(std::vector<ReasoningEvent>& out, bool final);

  bool default_reasoning_;  // the output starts inside a think block
  bool raw_prefix_pending_;
  State state_;
  bool reasoning_started_ = false;  // a non-space byte of reasoning was emitted
  bool closed_ = false;
  std::string pending_;  // input not yet decided on
};

}  // namespace duet
