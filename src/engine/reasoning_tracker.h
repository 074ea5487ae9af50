// Which generated tokens are reasoning, decided on token ids alone. The engine (thinking
// budget, reasoning_tokens in usage) and the output pipeline (what a client is shown as
// reasoning) each feed one tracker the same tokens from the same start, so they cannot
// disagree about where the think block is. Rules:
//   - <think> opens the block only while everything generated before it is whitespace
//     (Qwen3 may write "\n" first); later it is text. When the prompt already opened the
//     block, a leading <think> is a repeated opener: still a tag, and the block stays open.
//   - </think> closes an open block; outside one it is text. A block never reopens.
//   - A token is a reasoning token when it arrives inside the block: </think> counts, the
//     <think> that opens the block does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace duet {

// The vocabulary facts the tracker needs (built from the tokenizer by the layer that has it).
struct ReasoningTokenIds {
  int32_t think_open = -1;   // <think>; -1: the vocabulary has none
  int32_t think_close = -1;  // </think>
  // Indexed by id: the token's text is one or more of ' ', '\t', '\n', '\r'.
  std::vector<bool> whitespace;

  bool is_whitespace(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < whitespace.size() && whitespace[id];
  }
};

enum class ThinkTag { kNone, kOpen, kClose };

class ReasoningTracker {
 public:
  // `ids` must outlive the tracker; nullptr: no token is a tag.
  ReasoningTracker(const ReasoningTokenIds* ids, bool starts_inside);

  // One generated (or injected) token, in order. Says whether it acted as a tag.
  ThinkTag push(int32_t token);

  bool inside() const { return inside_; }
  // A think block was opened (or the prompt opened it) and has closed since.
  bool closed() const { return closed_; }
  int64_t reasoning_tokens() const { return reasoning_; }

 private:
  const ReasoningTokenIds* ids_;
  bool inside_;
  bool closed_ = false;
  bool only_whitespace_so_far_ = true;
  int64_t reasoning_ = 0;
};

}  // namespace duet
