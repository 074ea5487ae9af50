#include "text/output/reasoning_splitter.h"

namespace duet {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t leading_spaces(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

}  // namespace

ReasoningSplitter::ReasoningSplitter(bool starts_inside, bool raw)
    : raw_prefix_pending_(raw && starts_inside),
      state_(raw             ? State::kRaw
             : starts_inside ? State::kReasoning
                             : State::kContentStart) {}

void ReasoningSplitter::emit(std::vector<ReasoningEvent>& out, ReasoningKind kind,
                             std::string_view text) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == kind) {
    out.back().text += text;
  } else {
    out.push_back({kind, std::string(text)});
  }
}

std::vector<ReasoningEvent> ReasoningSplitter::push(std::string_view piece) {
  std::vector<ReasoningEvent> out;
  pending_.append(piece);
  process(out, /*final=*/false);
  return out;
}

std::vector<ReasoningEvent> ReasoningSplitter::open(std::string_view tag_text) {
  if (state_ == State::kRaw) return push(tag_text);
  // Only whitespace can precede an opening tag (or the block was open already and nothing
  // but whitespace was written in it): what is held is trimmed.
  pending_.clear();
  state_ = State::kReasoning;
  reasoning_started_ = false;
  return {};
}

std::vector<ReasoningEvent> ReasoningSplitter::close(std::string_view tag_text) {
  if (state_ == State::kRaw) return push(tag_text);
  pending_.clear();  // the whitespace before </think>
  state_ = State::kContentStart;
  return {};
}

std::vector<ReasoningEvent> ReasoningSplitter::finish() {
  std::vector<ReasoningEvent> out;
  process(out, /*final=*/true);
  return out;
}

void ReasoningSplitter::process(std::vector<ReasoningEvent>& out, bool final) {
  switch (state_) {
    case State::kRaw:
      if (raw_prefix_pending_) {
        emit(out, ReasoningKind::kContent, "<think>\n");
        raw_prefix_pending_ = false;
      }
      emit(out, ReasoningKind::kContent, pending_);
      pending_.clear();
      return;

    case State::kReasoning: {
      if (!reasoning_started_) pending_.erase(0, leading_spaces(pending_));
      // Hold trailing whitespace: it is trimmed if </think> follows.
      size_t keep = 0;
      if (!final)
        while (keep < pending_.size() && is_space(pending_[pending_.size() - keep - 1])) ++keep;
      const size_t n = pending_.size() - keep;
      if (n > 0) reasoning_started_ = true;
      emit(out, ReasoningKind::kReasoning, std::string_view(pending_).substr(0, n));
      pending_.erase(0, n);
      return;
    }

    case State::kContentStart:
      pending_.erase(0, leading_spaces(pending_));
      if (pending_.empty()) return;
      state_ = State::kContent;
      [[fallthrough]];

    case State::kContent:
      emit(out, ReasoningKind::kContent, pending_);
      pending_.clear();
      return;
  }
}

}  // namespace duet
