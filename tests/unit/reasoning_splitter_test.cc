// ReasoningSplitter: given where the think block's tags are (the caller's token-level
// decision, engine/reasoning_tracker.h), the text between them comes out as reasoning and
// content, trimmed at the edges, the same whatever cuts the text arrives in.
#include "text/output/reasoning_splitter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace duet {
namespace {

using Events = std::vector<ReasoningEvent>;
constexpr auto R = ReasoningKind::kReasoning;
constexpr auto C = ReasoningKind::kContent;

// The output as the splitter is fed it: text, and the two tags (tag tokens, not text).
const std::string kOpenTag = "<think>", kCloseTag = "</think>";
const std::string O = "\x01open", X = "\x01close";
using Items = std::vector<std::string>;

struct Config {
  bool starts_inside = false;
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

// Feeds the items, each text cut into pieces of the lengths `cut` draws (0: whole).
Events run(const Config& c, const Items& items, std::mt19937* cut = nullptr) {
  ReasoningSplitter s(c.starts_inside, c.raw);
  Events all;
  for (const std::string& item : items) {
    if (item == O) {
      append(all, s.open(kOpenTag));
    } else if (item == X) {
      append(all, s.close(kCloseTag));
    } else if (cut == nullptr) {
      append(all, s.push(item));
    } else {
      for (size_t pos = 0; pos < item.size();) {
        const size_t len = std::uniform_int_distribution<size_t>(0, 3)(*cut);  // empty too
        append(all, s.push(std::string_view(item).substr(pos, len)));
        pos += len;
      }
    }
  }
  append(all, s.finish());
  return all;
}

std::string show(const Events& events) {
  std::string s;
  for (const auto& e : events) s += (e.kind == R ? "R{" : "C{") + e.text + "} ";
  return s;
}

void check(const Config& c, const Items& items, const Events& want) {
  const Events whole = run(c, items);
  ASSERT_EQ(whole, want) << "\n got  " << show(whole) << "\n want " << show(want);
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    const Events got = run(c, items, &rng);
    ASSERT_EQ(got, want) << "cut " << i << "\n got  " << show(got) << "\n want " << show(want);
  }
}

TEST(ReasoningSplitter, OpensAndCloses) {
  check({}, {O, "\nLet me think.\n", X, "\n\nThe answer is 4."},
        {{R, "Let me think."}, {C, "The answer is 4."}});
  check({}, {"\n ", O, "abc", X, "def"}, {{R, "abc"}, {C, "def"}});  // whitespace before <think>
  check({}, {O, "a\n\nb", X, "  c \n"}, {{R, "a\n\nb"}, {C, "c \n"}});
}

TEST(ReasoningSplitter, PromptOpenedThink) {
  const Config opened{.starts_inside = true};
  check(opened, {"reasoning here\n", X, "\n\nanswer"}, {{R, "reasoning here"}, {C, "answer"}});
  check(opened, {"\n", O, "\nx", X, "y"}, {{R, "x"}, {C, "y"}});  // a repeated opener
  check(opened, {X, "\n\nno reasoning"}, {{C, "no reasoning"}});
}

TEST(ReasoningSplitter, TagTextIsText) {
  // Only the caller's tags count: text that spells them is text, wherever it is.
  check({}, {"Just an answer <think> inline"}, {{C, "Just an answer <think> inline"}});
  check({}, {"<think>not a tag</think>"}, {{C, "<think>not a tag</think>"}});
  check({}, {O, "r", X, "Use ```<think>``` and </think> literally"},
        {{R, "r"}, {C, "Use ```<think>``` and </think> literally"}});
  check({}, {O, "I wonder about <think> tags", X, "answer"},
        {{R, "I wonder about <think> tags"}, {C, "answer"}});
}

TEST(ReasoningSplitter, NeverClosesIsReasoning) {
  check({}, {O, "\nstill thinking... "}, {{R, "still thinking... "}});
  check({.starts_inside = true}, {"truncated"}, {{R, "truncated"}});
  check({}, {O}, {});
}

TEST(ReasoningSplitter, NonThinkingPromptAndAStrayBlock) {
  check({}, {"Hello there"}, {{C, "Hello there"}});
  check({}, {O, "\n\n", X, "\n\nHello"}, {{C, "Hello"}});
  check({}, {O, X, "Hello"}, {{C, "Hello"}});
  // A model that thinks anyway: its words are reasoning, not tags in the answer.
  check({}, {O, "oops", X, "ok"}, {{R, "oops"}, {C, "ok"}});
}

TEST(ReasoningSplitter, RawKeepsTags) {
  check({.raw = true}, {O, "\nabc", X, "\n\nxyz"}, {{C, "<think>\nabc</think>\n\nxyz"}});
  check({.starts_inside = true, .raw = true}, {"abc", X, "xyz"}, {{C, "<think>\nabc</think>xyz"}});
  check({.raw = true}, {"  xyz"}, {{C, "  xyz"}});
}

TEST(ReasoningSplitter, Unicode) {
  check({}, {O, "让我想想🙂", X, "\n\n答案是四。"},
        {{R, "让我想想🙂"}, {C, "答案是四。"}});
  check({}, {"  \u00a0x"}, {{C, "\u00a0x"}});  // NBSP is text
}

TEST(ReasoningSplitter, EmptyAndWhitespace) {
  check({}, {}, {});
  check({}, {"  \n "}, {});
  check({}, {O, "\n\n", X, "\n\n"}, {});
}

TEST(ReasoningSplitter, BudgetClosingText) {
  check({.starts_inside = true},
        {"long...\n\nConsidering the limited time by the user, I have to give the solution based "
         "on the thinking directly now.\n",
         X, "\n\nAnswer"},
        {{R,
          "long...\n\nConsidering the limited time by the user, I have to give the solution based "
          "on the thinking directly now."},
         {C, "Answer"}});
}

TEST(ReasoningSplitter, HoldsOnlyWhatMustBeHeld) {
  ReasoningSplitter s(false);
  EXPECT_TRUE(s.push("\n").empty());
  EXPECT_TRUE(s.open(kOpenTag).empty());
  EXPECT_EQ(s.push("\nabc"), (Events{{R, "abc"}}));
  EXPECT_TRUE(s.push(" ").empty());
  EXPECT_EQ(s.push("x"), (Events{{R, " x"}}));  // released the moment text follows
  EXPECT_TRUE(s.push("\n").empty());
  EXPECT_TRUE(s.close(kCloseTag).empty());
  EXPECT_TRUE(s.push("\n\n").empty());
  EXPECT_EQ(s.push("hi"), (Events{{C, "hi"}}));
  EXPECT_EQ(s.push(" "), (Events{{C, " "}}));  // content is never held
  EXPECT_EQ(s.push("<think>"), (Events{{C, "<think>"}}));

  ReasoningSplitter t(false);
  t.open(kOpenTag);
  EXPECT_EQ(t.push("a\n"), (Events{{R, "a"}}));
  EXPECT_EQ(t.finish(), (Events{{R, "\n"}}));  // truncated: nothing is trimmed at the end

  ReasoningSplitter u(false);
  EXPECT_EQ(u.push("Hello"), (Events{{C, "Hello"}}));  // decided at the first byte

  ReasoningSplitter v(true);
  EXPECT_EQ(v.push("x"), (Events{{R, "x"}}));
}

// Random outputs built from fragments and tags: every cut equals the whole, and nothing but
// the tags and trimmed whitespace is lost.
TEST(ReasoningSplitter, RandomFragmentsAllCuts) {
  const std::vector<std::string> fragments = {O,     X,    "<", "</", "<think>", "a",
                                              "b c", "\n", " ", "思", "\n\n"};
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    Items items;
    const int n = static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) items.push_back(fragments[rng() % fragments.size()]);
    const Config c{.starts_inside = (trial & 1) != 0, .raw = trial % 7 == 0};
    const Events want = run(c, items);
    std::string text, kept;
    for (const std::string& item : items)
      text += item == O ? kOpenTag : item == X ? kCloseTag : item;
    for (const auto& e : want) kept += e.text;
    if (c.raw) {
      EXPECT_EQ(kept, (c.starts_inside ? "<think>\n" : "") + text);
    } else {
      EXPECT_LE(kept.size(), text.size());
    }
    for (int k = 0; k < 10; ++k) ASSERT_EQ(run(c, items, &rng), want) << trial;
  }
}

}  // namespace
}  // namespace duet
