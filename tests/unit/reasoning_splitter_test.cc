// ReasoningSplitter: every cut of the input gives the unsplit result, and the specific cases of
// opening, closing, truncation, non-thinking and raw output.
#include "text/reasoning_splitter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "unit/stream_splits.h"

namespace duet {
namespace {

using Events = std::vector<ReasoningEvent>;
constexpr auto R = ReasoningKind::kReasoning;
constexpr auto C = ReasoningKind::kContent;

struct Config {
  bool prompt_opened = false;
  bool thinking = true;
  bool raw = false;
};

void append(Events& all, const Events& more) {
  for (const ReasoningEvent& e : more) {
    EXPECT_FALSE(e.text.empty());
    if (!all.empty() && all.back().kind == e.kind) {
      all.back().text += e.text;
    } else {
      all.push_back(e);
    }
  }
}

Events run(const Config& c, const test::Pieces& pieces) {
  ReasoningSplitter s(c.prompt_opened, c.thinking, c.raw);
  Events all;
  for (std::string_view p : pieces) append(all, s.push(p));
  append(all, s.finish());
  return all;
}

std::string show(const Events& events) {
  std::string s;
  for (const auto& e : events) s += (e.kind == R ? "R{" : "C{") + e.text + "} ";
  return s;
}

void check(const Config& c, const std::string& text, const Events& want) {
  for (const auto& pieces : test::all_splits(text)) {
    const Events got = run(c, pieces);
    ASSERT_EQ(got, want) << "split " << test::describe(pieces) << "\n got  " << show(got)
                         << "\n want " << show(want);
  }
}

TEST(ReasoningSplitter, OpensAndCloses) {
  check({}, "<think>\nLet me think.\n</think>\n\nThe answer is 4.",
        {{R, "Let me think."}, {C, "The answer is 4."}});
  check({}, "\n <think>abc</think>def", {{R, "abc"}, {C, "def"}});
  check({}, "<think>a\n\nb</think>  c \n", {{R, "a\n\nb"}, {C, "c \n"}});
}

TEST(ReasoningSplitter, PromptOpenedThink) {
  const Config opened{.prompt_opened = true};
  check(opened, "reasoning here\n</think>\n\nanswer", {{R, "reasoning here"}, {C, "answer"}});
  check(opened, "\n<think>\nx</think>y", {{R, "x"}, {C, "y"}});  // a repeated opener is dropped
  check(opened, "</think>\n\nno reasoning", {{C, "no reasoning"}});
}

TEST(ReasoningSplitter, NeverOpens) {
  check({}, "Just an answer <think> inline", {{C, "Just an answer <think> inline"}});
  check({}, "<thinking> is not the tag", {{C, "<thinking> is not the tag"}});
  check({}, "<b>bold</b>", {{C, "<b>bold</b>"}});
  check({}, "<thi", {{C, "<thi"}});  // a tag prefix at the end is text
}

TEST(ReasoningSplitter, NeverClosesIsReasoning) {
  check({}, "<think>\nstill thinking... ", {{R, "still thinking... "}});
  check({}, "<think>\nstill </thi", {{R, "still </thi"}});
  check({.prompt_opened = true}, "truncated", {{R, "truncated"}});
  check({}, "<think>", {});
}

TEST(ReasoningSplitter, NonThinkingMode) {
  const Config off{.prompt_opened = true, .thinking = false};
  check(off, "Hello there", {{C, "Hello there"}});
  check(off, "<think>\n\n</think>\n\nHello", {{C, "Hello"}});
  check(off, "<think></think>Hello", {{C, "Hello"}});
  check(off, "Hello <think></think>", {{C, "Hello <think></think>"}});
  check(off, "Hello</think> x", {{C, "Hello</think> x"}});
  // A model that thinks anyway: its words are reasoning, not tags in the answer.
  check(off, "<think>oops</think>ok", {{R, "oops"}, {C, "ok"}});
}

TEST(ReasoningSplitter, RawKeepsTags) {
  check({.raw = true}, "<think>\nabc</think>\n\nxyz", {{C, "<think>\nabc</think>\n\nxyz"}});
  check({.prompt_opened = true, .raw = true}, "abc</think>xyz", {{C, "<think>\nabc</think>xyz"}});
  check({.prompt_opened = true, .thinking = false, .raw = true}, "  xyz", {{C, "  xyz"}});
}

TEST(ReasoningSplitter, TagsInsideTextAndCode) {
  check({}, "<think>r</think>Use ```<think>``` and </think> literally",
        {{R, "r"}, {C, "Use ```<think>``` and </think> literally"}});
  check({}, "<think>I wonder about <think> tags</think>answer",
        {{R, "I wonder about <think> tags"}, {C, "answer"}});
  check({}, "<think>a</thinking> </thin k></think>b", {{R, "a</thinking> </thin k>"}, {C, "b"}});
  check({}, "<think><<</</think>>", {{R, "<<</"}, {C, ">"}});
}

TEST(ReasoningSplitter, Unicode) {
  check({}, "<think>让我想想🙂</think>\n\n答案是四。",
        {{R, "让我想想🙂"}, {C, "答案是四。"}});
  check({}, "  \u00a0<think>x</think>", {{C, "\u00a0<think>x</think>"}});  // NBSP is text
}

TEST(ReasoningSplitter, EmptyAndWhitespace) {
  check({}, "", {});
  check({}, "  \n ", {});
  check({}, "<think>\n\n</think>\n\n", {});
}

TEST(ReasoningSplitter, BudgetClosingText) {
  check({.prompt_opened = true},
        "long...\n\nConsidering the limited time by the user, I have to give the solution based "
        "on the thinking directly now.\n</think>\n\nAnswer",
        {{R,
          "long...\n\nConsidering the limited time by the user, I have to give the solution based "
          "on the thinking directly now."},
         {C, "Answer"}});
}

TEST(ReasoningSplitter, HoldsOnlyWhatMustBeHeld) {
  ReasoningSplitter s(false, true);
  EXPECT_TRUE(s.push("<th").empty());
  EXPECT_FALSE(s.in_reasoning());
  EXPECT_EQ(s.push("ink>\nabc</th"), (Events{{R, "abc"}}));
  EXPECT_TRUE(s.in_reasoning());
  EXPECT_TRUE(s.push("ink>").empty());
  EXPECT_TRUE(s.reasoning_closed());
  EXPECT_FALSE(s.in_reasoning());
  EXPECT_TRUE(s.push("\n\n").empty());
  EXPECT_EQ(s.push("hi"), (Events{{C, "hi"}}));
  EXPECT_EQ(s.push(" <think>"), (Events{{C, " <think>"}}));  // content is never held

  ReasoningSplitter t(false, true);
  EXPECT_EQ(t.push("<think>abc <"), (Events{{R, "abc"}}));
  EXPECT_EQ(t.push("x"), (Events{{R, " <x"}}));  // released the moment it cannot be the tag
  EXPECT_EQ(t.push("a\n"), (Events{{R, "a"}}));
  EXPECT_EQ(t.finish(), (Events{{R, "\n"}}));

  ReasoningSplitter u(false, true);
  EXPECT_EQ(u.push("Hello"), (Events{{C, "Hello"}}));  // decided at the first byte
  EXPECT_FALSE(u.in_reasoning());

  ReasoningSplitter v(true, true);
  EXPECT_TRUE(v.in_reasoning());  // expected to start in reasoning
  EXPECT_EQ(v.push("x"), (Events{{R, "x"}}));
}

// Random texts built from tag fragments: every cut equals the unsplit result, and nothing but
// tags and trimmed whitespace is lost.
TEST(ReasoningSplitter, RandomFragmentsAllSplits) {
  const std::vector<std::string> fragments = {"<think>", "</think>", "<",   "</",  "<th",
                                              "ink>",    "</thi",    "a",   "b c", "\n",
                                              " ",       "思",       "\n\n"};
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) text += fragments[rng() % fragments.size()];
    const Config c{
        .prompt_opened = (trial & 1) != 0, .thinking = (trial & 2) != 0, .raw = trial % 7 == 0};
    const Events want = run(c, {text});
    std::string kept;
    for (const auto& e : want) kept += e.text;
    if (c.raw) {
      EXPECT_EQ(kept, (c.prompt_opened && c.thinking ? "<think>\n" : "") + text);
    } else {
      EXPECT_LE(kept.size(), text.size());
    }
    for (const auto& pieces : test::all_splits(text, 5, trial)) {
      ASSERT_EQ(run(c, pieces), want) << "text '" << text << "' split " << test::describe(pieces);
    }
  }
}

}  // namespace
}  // namespace duet
