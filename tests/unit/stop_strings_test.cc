// StopStringMatcher: every cut of the input gives the unsplit result; the earliest occurrence
// wins; only a possible stop prefix is held; validation limits.
#include "text/output/stop_strings.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "unit/stream_splits.h"

namespace duet {
namespace {

struct Outcome {
  std::string text;
  bool stopped = false;
  int index = -1;
  bool operator==(const Outcome&) const = default;
};

Outcome run(const std::vector<std::string>& stops, const test::Pieces& pieces) {
  StopStringMatcher m(stops);
  Outcome o;
  for (std::string_view p : pieces) {
    StopResult r = m.push(p);
    o.text += r.text;
    if (r.stopped) {
      o.stopped = true;
      o.index = r.stop_index;
      EXPECT_EQ(m.push("more").text, "");  // nothing after a stop
      return o;
    }
  }
  StopResult r = m.finish();
  o.text += r.text;
  o.stopped = r.stopped;
  o.index = r.stop_index;
  return o;
}

// The reference: the text before the smallest start of any occurrence.
Outcome naive(const std::vector<std::string>& stops, const std::string& text) {
  Outcome best{text, false, -1};
  size_t best_pos = std::string::npos;
  for (size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty()) continue;
    const size_t pos = text.find(stops[i]);
    if (pos == std::string::npos) continue;
    // Earliest start; at equal starts the shorter one completes first and wins.
    if (best_pos == std::string::npos || pos < best_pos ||
        (pos == best_pos && stops[i].size() < stops[best.index].size())) {
      best_pos = pos;
      best = {text.substr(0, pos), true, static_cast<int>(i)};
    }
  }
  return best;
}

void check_all_splits(const std::vector<std::string>& stops, const std::string& text,
                      const Outcome& want) {
  EXPECT_EQ(naive(stops, text), want) << text;
  for (const auto& pieces : test::all_splits(text)) {
    const Outcome got = run(stops, pieces);
    ASSERT_EQ(got.text, want.text) << test::describe(pieces);
    ASSERT_EQ(got.stopped, want.stopped) << test::describe(pieces);
    ASSERT_EQ(got.index, want.index) << test::describe(pieces);
  }
}

TEST(StopStrings, NoStopPassesEverythingThrough) {
  check_all_splits({"STOP"}, "hello world, no stop here. ST OP",
                   {"hello world, no stop here. ST OP", false, -1});
  check_all_splits({}, "anything", {"anything", false, -1});
}

TEST(StopStrings, StopsBeforeTheMatch) {
  check_all_splits({"\n\nUser:"}, "Answer: 42\n\nUser: next", {"Answer: 42", true, 0});
  check_all_splits({"</s>"}, "text</s>tail</s>", {"text", true, 0});
}

TEST(StopStrings, StopAtTheVeryStart) {
  check_all_splits({"abc"}, "abcdef", {"", true, 0});
  check_all_splits({"a"}, "a", {"", true, 0});
}

TEST(StopStrings, OverlappingStops) {
  check_all_splits({"ab", "b"}, "xxab", {"xx", true, 0});
  check_all_splits({"b", "ab"}, "xxab", {"xx", true, 1});
  // A longer stop that starts earlier wins over a shorter one that ends first.
  check_all_splits({"abcd", "c"}, "zabcdz", {"z", true, 0});
  // ... but if the longer one fails, the shorter one still stops the text.
  check_all_splits({"abcd", "c"}, "zabcx", {"zab", true, 1});
  check_all_splits({"abcd", "c"}, "zabc", {"zab", true, 1});  // resolved at finish()
  // Self-overlapping stops.
  check_all_splits({"aab"}, "aaaab", {"aa", true, 0});
  check_all_splits({"abab"}, "ababab", {"", true, 0});
  check_all_splits({"abcab", "bca"}, "xabcabz", {"x", true, 0});
  check_all_splits({"abcab", "bca"}, "xabcaz", {"xa", true, 1});
}

TEST(StopStrings, SameStartShorterWins) {
  check_all_splits({"abc", "ab"}, "xabc", {"x", true, 1});
  check_all_splits({"ab", "ab"}, "xab", {"x", true, 0});  // duplicates keep the first index
}

TEST(StopStrings, StopSpanningThreePieces) {
  StopStringMatcher m({"<|end|>"});
  EXPECT_EQ(m.push("hello <|").text, "hello ");
  EXPECT_EQ(m.held_bytes(), 2u);
  StopResult r = m.push("en");
  EXPECT_EQ(r.text, "");
  EXPECT_FALSE(r.stopped);
  r = m.push("d|> ignored");
  EXPECT_EQ(r.text, "");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.stop_index, 0);
}

TEST(StopStrings, HoldsOnlyAPossiblePrefix) {
  StopStringMatcher m({"STOP", "END"});
  StopResult r = m.push("abc S");
  EXPECT_EQ(r.text, "abc ");
  EXPECT_EQ(m.held_bytes(), 1u);
  r = m.push("T");
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(m.held_bytes(), 2u);
  r = m.push("x");  // "STx" can no longer become a stop: released at once
  EXPECT_EQ(r.text, "STx");
  EXPECT_EQ(m.held_bytes(), 0u);
  r = m.push("E");
  EXPECT_EQ(r.text, "");
  r = m.finish();
  EXPECT_EQ(r.text, "E");
  EXPECT_FALSE(r.stopped);
}

TEST(StopStrings, Unicode) {
  check_all_splits({"。结束"}, "你好。结束了", {"你好", true, 0});
  check_all_splits({"🙂"}, "smile 🙂 now", {"smile ", true, 0});
  check_all_splits({"é"}, "cafe café", {"cafe caf", true, 0});
}

TEST(StopStrings, RandomAgainstNaive) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab c";
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> stops;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      std::string s;
      const int len = 1 + static_cast<int>(rng() % 4);
      for (int j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
      stops.push_back(s);
    }
    std::string text;
    const int len = static_cast<int>(rng() % 16);
    for (int j = 0; j < len; ++j) text += alphabet[rng() % alphabet.size()];
    const Outcome want = naive(stops, text);
    for (const auto& pieces : test::all_splits(text, 5, trial)) {
      const Outcome got = run(stops, pieces);
      ASSERT_EQ(got, want) << "text '" << text << "' split " << test::describe(pieces);
    }
  }
}

TEST(StopStrings, ThousandsOfStops) {
  std::vector<std::string> stops;
  for (int i = 0; i < 5000; ++i) stops.push_back("stop" + std::to_string(i) + "!");
  StopStringMatcher m(stops);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "stop" + std::to_string(i % 9000 + 5000) + " ";
  text += "stop4321!tail";
  std::string out;
  StopResult r;
  for (size_t i = 0; i < text.size() && !r.stopped; i += 3) {
    r = m.push(std::string_view(text).substr(i, 3));
    out += r.text;
  }
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.stop_index, 4321);
  EXPECT_EQ(out, text.substr(0, text.size() - std::string("stop4321!tail").size()));
}

TEST(StopStrings, Validation) {
  EXPECT_TRUE(validate_stop_strings({}).is_ok());
  EXPECT_TRUE(validate_stop_strings({"a", std::string(1024, 'x')}).is_ok());
  EXPECT_EQ(validate_stop_strings({"a", ""}).message(), "stop strings must not be empty");
  EXPECT_EQ(validate_stop_strings({std::string(1025, 'x')}).message(),
            "a stop string is longer than 1024 bytes");
  EXPECT_TRUE(validate_stop_strings(std::vector<std::string>(64, "s")).is_ok());
  EXPECT_EQ(validate_stop_strings(std::vector<std::string>(10000, "s")).message(),
            "too many stop strings (10000; at most 64)");
  EXPECT_TRUE(validate_stop_strings({"a", "b", "c"}, {.max_count = 4, .max_bytes = 1}).is_ok());
  EXPECT_FALSE(validate_stop_strings({"ab"}, {.max_count = 4, .max_bytes = 1}).is_ok());
}

}  // namespace
}  // namespace duet
