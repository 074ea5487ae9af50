#include "text/reasoning_splitter.h"

namespace duet {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t leading_spaces(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// The length of the longest suffix of `s` that is a proper prefix of `tag`.
size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

ReasoningSplitter::ReasoningSplitter(bool prompt_opened_think, bool thinking_enabled, bool raw)
    : default_reasoning_(prompt_opened_think && thinking_enabled),
      raw_prefix_pending_(raw && prompt_opened_think && thinking_enabled),
      state_(raw ? State::kRaw : State::kStart) {}

bool ReasoningSplitter::in_reasoning() const {
  return state_ == State::kReasoning || (state_ == State::kStart && default_reasoning_);
}

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

std::vector<ReasoningEvent> ReasoningSplitter::finish() {
  std::vector<ReasoningEvent> out;
  process(out, /*final=*/true);
  return out;
}

void ReasoningSplitter::process(std::vector<ReasoningEvent>& out, bool final) {
  while (true) {
    switch (state_) {
      case State::kRaw:
        if (raw_prefix_pending_) {
          emit(out, ReasoningKind::kContent, "<think>\n");
          raw_prefix_pending_ = false;
        }
        emit(out, ReasoningKind::kContent, pending_);
        pending_.clear();
        return;

      case State::kStart: {
        const size_t spaces = leading_spaces(pending_);
        const std::string_view rest = std::string_view(pending_).substr(spaces);
        if (rest.starts_with(kOpen)) {
          pending_.erase(0, spaces + kOpen.size());
          state_ = State::kReasoning;
          continue;
        }
        if (!final && kOpen.starts_with(rest)) return;  // could still become <think>
        // No opening tag: the output starts in the default kind; its leading spaces are
        // trimmed by that state.
        state_ = default_reasoning_ ? State::kReasoning : State::kContentStart;
        continue;
      }

      case State::kReasoning: {
        if (!reasoning_started_) pending_.erase(0, leading_spaces(pending_));
        const size_t close = pending_.find(kClose);
        if (close != std::string::npos) {
          std::string_view text = std::string_view(pending_).substr(0, close);
          while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
          emit(out, ReasoningKind::kReasoning, text);
          pending_.erase(0, close + kClose.size());
          closed_ = true;
          state_ = State::kContentStart;
          continue;
        }
        size_t keep = 0;
        if (!final) {
          // Hold what could be the start of </think>, and the spaces before it (they are
          // trimmed if the tag follows).
          keep = partial_tag_suffix(pending_, kClose);
          while (keep < pending_.size() && is_space(pending_[pending_.size() - keep - 1])) ++keep;
        }
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
        continue;

      case State::kContent:
        emit(out, ReasoningKind::kContent, pending_);
        pending_.clear();
        return;
    }
  }
}

}  // namespace duet
