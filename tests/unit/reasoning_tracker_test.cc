// ReasoningTracker: where the think block opens and closes, on token ids, and which tokens
// are counted as reasoning. The engine and the output pipeline both read output through it.
#include "engine/reasoning_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace duet {
namespace {

constexpr int32_t kOpen = 100, kClose = 101, kNewline = 1, kSpaces = 2, kWord = 3, kNbsp = 4;

ReasoningTokenIds ids() {
  ReasoningTokenIds r;
  r.think_open = kOpen;
  r.think_close = kClose;
  r.whitespace.assign(110, false);
  r.whitespace[kNewline] = r.whitespace[kSpaces] = true;
  return r;
}

// One letter per token: '<' a tag that opened, '>' one that closed, '.' neither; then the
// reasoning count.
std::string trace(const std::vector<int32_t>& tokens, bool starts_inside = false) {
  const ReasoningTokenIds i = ids();
  ReasoningTracker t(&i, starts_inside);
  std::string out;
  for (int32_t tok : tokens) {
    const ThinkTag tag = t.push(tok);
    out += tag == ThinkTag::kOpen ? '<' : tag == ThinkTag::kClose ? '>' : '.';
  }
  return out + " " + std::to_string(t.reasoning_tokens()) + (t.inside() ? " inside" : "");
}

TEST(ReasoningTracker, OpensAtTheStartAndCloses) {
  EXPECT_EQ(trace({kOpen, kNewline, kWord, kWord, kNewline, kClose, kNewline, kWord}),
            "<....>.. 5");  // "\n", two words, "\n", </think>
}

TEST(ReasoningTracker, OpensAfterLeadingWhitespace) {
  EXPECT_EQ(trace({kNewline, kOpen, kWord, kClose, kWord}), ".<.>. 2");
  EXPECT_EQ(trace({kSpaces, kNewline, kOpen, kWord}), "..<. 1 inside");
}

TEST(ReasoningTracker, LaterOpenersAreText) {
  EXPECT_EQ(trace({kWord, kOpen, kWord, kClose}), ".... 0");
  EXPECT_EQ(trace({kNbsp, kOpen, kWord}), "... 0");  // only ' ', \t, \n, \r are whitespace
  EXPECT_EQ(trace({kOpen, kWord, kOpen, kClose, kOpen, kWord}), "<..>.. 3");  // never reopens
}

TEST(ReasoningTracker, ClosingOutsideABlockIsText) {
  EXPECT_EQ(trace({kClose, kWord}), ".. 0");
  EXPECT_EQ(trace({kWord, kClose}), ".. 0");
}

TEST(ReasoningTracker, PromptOpenedTheBlock) {
  EXPECT_EQ(trace({kWord, kWord, kClose, kWord}, true), "..>. 3");
  // A repeated opener is still a tag (the pipeline drops it); it arrives inside, so it counts.
  EXPECT_EQ(trace({kNewline, kOpen, kWord, kClose}, true), ".<.> 4");
  EXPECT_EQ(trace({kClose, kWord}, true), ">. 1");
  EXPECT_EQ(trace({kWord, kWord}, true), ".. 2 inside");  // truncated: still reasoning
}

TEST(ReasoningTracker, WithoutIdsNothingIsATag) {
  ReasoningTracker t(nullptr, false);
  EXPECT_EQ(t.push(kOpen), ThinkTag::kNone);
  EXPECT_FALSE(t.inside());
  ReasoningTracker inside(nullptr, true);
  inside.push(kWord);
  EXPECT_EQ(inside.reasoning_tokens(), 1);
}

TEST(ReasoningTracker, IdsOutsideTheTableAreNotWhitespace) {
  const ReasoningTokenIds i = ids();
  EXPECT_FALSE(i.is_whitespace(-1));
  EXPECT_FALSE(i.is_whitespace(1000));
  EXPECT_TRUE(i.is_whitespace(kNewline));
}

}  // namespace
}  // namespace duet
