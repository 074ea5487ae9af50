// ToolCallParser: every cut of the input gives the unsplit result; well-formed blocks become
// calls; anything malformed comes back as content, byte for byte.
#include "text/output/tool_call_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "unit/stream_splits.h"

namespace duet {
namespace {

using K = ToolCallEventKind;

// The events with invalidated calls removed and adjacent fragments merged: what a client that
// honours kToolCallInvalid ends up with. It must not depend on the cuts.
std::vector<ToolCallEvent> normalize(const std::vector<ToolCallEvent>& events) {
  std::vector<int> invalid;
  for (const auto& e : events)
    if (e.kind == K::kToolCallInvalid) invalid.push_back(e.index);
  std::vector<ToolCallEvent> out;
  for (const auto& e : events) {
    if (e.kind != K::kContent &&
        std::find(invalid.begin(), invalid.end(), e.index) != invalid.end())
      continue;
    if (!out.empty() && out.back().kind == e.kind &&
        (e.kind == K::kContent ||
         (e.kind == K::kToolCallArguments && out.back().index == e.index))) {
      out.back().text += e.text;
      continue;
    }
    out.push_back(e);
  }
  return out;
}

std::string show(const std::vector<ToolCallEvent>& events) {
  std::string s;
  for (const auto& e : events) {
    switch (e.kind) {
      case K::kContent:
        s += "C{" + e.text + "} ";
        break;
      case K::kToolCallBegin:
        s += "B" + std::to_string(e.index) + "{" + e.name + "} ";
        break;
      case K::kToolCallArguments:
        s += "A" + std::to_string(e.index) + "{" + e.text + "} ";
        break;
      case K::kToolCallEnd:
        s += "E" + std::to_string(e.index) + " ";
        break;
      case K::kToolCallInvalid:
        s += "X" + std::to_string(e.index) + " ";
        break;
    }
  }
  return s;
}

std::vector<ToolCallEvent> run(const test::Pieces& pieces, uint64_t seed = 0) {
  ToolCallParser p(seed);
  std::vector<ToolCallEvent> all;
  for (std::string_view piece : pieces) {
    for (auto& e : p.push(piece)) all.push_back(std::move(e));
  }
  for (auto& e : p.finish()) all.push_back(std::move(e));
  return all;
}

bool same(const std::vector<ToolCallEvent>& a, const std::vector<ToolCallEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind || a[i].text != b[i].text || a[i].index != b[i].index ||
        a[i].id != b[i].id || a[i].name != b[i].name ||
        a[i].call.arguments_string != b[i].call.arguments_string)
      return false;
  }
  return true;
}

// Checks the invariants for every cut and returns parse_all's result.
ToolCallParseResult check(const std::string& text) {
  const auto want = normalize(run({text}));
  const ToolCallParseResult all = ToolCallParser::parse_all(text);
  // Streaming and parse_all agree.
  std::string content;
  std::vector<std::string> args_by_index(64);
  size_t calls = 0;
  for (const auto& e : want) {
    if (e.kind == K::kContent) content += e.text;
    if (e.kind == K::kToolCallArguments) args_by_index.at(e.index) += e.text;
    if (e.kind == K::kToolCallEnd) {
      EXPECT_LT(calls, all.calls.size());
      if (calls >= all.calls.size()) break;
      EXPECT_EQ(e.call.arguments_string, all.calls[calls].arguments_string);
      EXPECT_EQ(args_by_index.at(e.index), e.call.arguments_string);  // fragments add up
      ++calls;
    }
  }
  EXPECT_EQ(content, all.content);
  EXPECT_EQ(calls, all.calls.size());
  // No byte is lost: the content is the text with the calls' blocks cut out.
  std::string rebuilt;
  size_t at = 0;
  for (const auto& c : all.calls) {
    EXPECT_GE(c.source_begin, at);
    rebuilt += text.substr(at, c.source_begin - at);
    EXPECT_TRUE(text.substr(c.source_begin).starts_with("<tool_call>"));
    EXPECT_TRUE(text.substr(0, c.source_end).ends_with("</tool_call>"));
    at = c.source_end;
    EXPECT_TRUE(c.arguments.is_object());
    EXPECT_EQ(c.arguments, nlohmann::json::parse(c.arguments_string));
  }
  rebuilt += text.substr(std::min(at, text.size()));
  EXPECT_EQ(rebuilt, all.content);
  for (const auto& pieces : test::all_splits(text, 30)) {
    const auto got = normalize(run(pieces));
    if (!same(got, want)) {
      ADD_FAILURE() << "split " << test::describe(pieces) << "\n got  " << show(got) << "\n want "
                    << show(want);
      break;
    }
  }
  return all;
}

void expect_raw(const std::string& text) {
  const ToolCallParseResult r = check(text);
  EXPECT_TRUE(r.calls.empty()) << text;
  EXPECT_EQ(r.content, text);
}

TEST(ToolCallParser, OneCall) {
  const auto r = check(
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content, "");
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments_string, "{\"city\": \"Paris\"}");
  EXPECT_EQ(r.calls[0].arguments, nlohmann::json({{"city", "Paris"}}));
}

TEST(ToolCallParser, ContentAndSeveralCalls) {
  const auto r = check(
      "Let me check.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}}\n</tool_call>");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.content, "Let me check.\n\n");
  EXPECT_EQ(r.calls[0].name, "a");
  EXPECT_EQ(r.calls[1].name, "b");
  EXPECT_NE(r.calls[0].id, r.calls[1].id);
}

TEST(ToolCallParser, StringsWithTagsAndBraces) {
  const auto r = check(
      "<tool_call>{\"name\": \"run\", \"arguments\": {\"code\": \"if (x) { return \\\"}\\\"; } "
      "</tool_call> <tool_call>\"}}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments["code"], "if (x) { return \"}\"; } </tool_call> <tool_call>");
}

TEST(ToolCallParser, ArgumentsBeforeNameAndOtherKeys) {
  auto r = check("<tool_call>{\"arguments\": {\"a\": 1}, \"name\": \"f\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments_string, "{\"a\": 1}");
  r = check("<tool_call>{\"name\": \"now\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments_string, "{}");
  r = check(
      "<tool_call>{\"type\": \"function\", \"name\": \"f\", \"id\": 7, \"arguments\": {}, "
      "\"x\": [null, true]}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  r = check(
      "<tool_call>{\"n\\u0061me\": \"f\", \"arguments\": {\"name\": \"not this\"}}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "f");
}

TEST(ToolCallParser, NumbersAndLiterals) {
  const auto r = check(
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": -0.5e+3, \"b\": 0, \"c\": 12.25E-1, "
      "\"d\": [true, false, null, {}, []], \"e\": \"\\u00e9\\n\"}}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_DOUBLE_EQ(r.calls[0].arguments["a"].get<double>(), -500.0);
  for (const char* bad : {"01", "-", "1.", ".5", "1e", "+1", "tru", "nul", "[1,]", "{\"a\"}",
                          "\"\\x\"", "\"\\u12g4\"", "NaN"}) {
    expect_raw(std::string("<tool_call>{\"name\": \"f\", \"arguments\": {\"v\": ") + bad +
               "}}</tool_call>");
  }
}

TEST(ToolCallParser, MalformedBlocksComeBackAsContent) {
  expect_raw("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }}\n</tool_call>after");
  expect_raw("<tool_call>{\"arguments\": {}}</tool_call>");                       // no name
  expect_raw("<tool_call>{\"name\": \"\"}</tool_call>");                          // empty name
  expect_raw("<tool_call>{\"name\": 5}</tool_call>");                             // not a string
  expect_raw("<tool_call>{\"name\": \"f\", \"arguments\": \"{}\"}</tool_call>");  // a string
  expect_raw("<tool_call>{\"name\": \"f\", \"arguments\": null}</tool_call>");
  expect_raw("<tool_call>{\"name\": \"f\", \"name\": \"g\"}</tool_call>");  // duplicate key
  expect_raw("<tool_call>{\"name\": \"f\"} junk </tool_call>");             // text after the object
  expect_raw("<tool_call>{\"name\": \"f\"}</tool_cal>");
  expect_raw("<tool_call>[1, 2]</tool_call>");
  expect_raw("<tool_call></tool_call>");
  expect_raw("<tool_call>\"name\"</tool_call>");
  expect_raw("<tool_call>{\"name\": \"f\"}\n</TOOL_CALL>");
}

TEST(ToolCallParser, UnterminatedAtFinish) {
  expect_raw("ok <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1");
  expect_raw("ok <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_ca");
  expect_raw("<tool_call>");
  expect_raw("<tool_call");
  // Streaming: the call had begun, so the client is told to drop it.
  ToolCallParser p;
  auto events = p.push("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\"");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, K::kToolCallBegin);
  EXPECT_EQ(events[1].kind, K::kToolCallArguments);
  EXPECT_TRUE(p.in_tool_call());
  events = p.finish();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, K::kToolCallInvalid);
  EXPECT_EQ(events[0].index, 0);
  EXPECT_EQ(events[1].kind, K::kContent);
  EXPECT_EQ(events[1].text, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\"");
}

TEST(ToolCallParser, FailedBlockThenGoodOne) {
  auto r = check("<tool_call>oops</tool_call> then <tool_call>{\"name\": \"g\"}</tool_call>!");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content, "<tool_call>oops</tool_call> then !");
  r = check("<tool_call><tool_call>{\"name\": \"f\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content, "<tool_call>");
  // An unterminated string swallows a block; at the end it is read again and found.
  r = check("<tool_call>{\"name\": \"<tool_call>{\"name\": \"h\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "h");
  EXPECT_EQ(r.content, "<tool_call>{\"name\": \"");
  // The index of an invalidated call is not reused.
  ToolCallParser p;
  std::vector<ToolCallEvent> ev = p.push("<tool_call>{\"name\": \"a\", \"x\": nope");
  for (auto& e : p.push(" <tool_call>{\"name\": \"b\"}</tool_call>")) ev.push_back(e);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().kind, K::kToolCallEnd);
  EXPECT_EQ(ev.back().index, 1);
}

TEST(ToolCallParser, TagsInContentAndUnicode) {
  expect_raw("Use `<tool_call>` tags like this: <tool_call>…");
  expect_raw("</tool_call> stray closer");
  expect_raw("plain text, no tags 🙂 中文");
  const auto r = check(
      "好的🙂<tool_call>\n{\"name\": \"查询天气\", \"arguments\": {\"城市\": "
      "\"北京\"}}\n"
      "</tool_call>谢谢");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "查询天气");
  EXPECT_EQ(r.calls[0].arguments["城市"], "北京");
  EXPECT_EQ(r.content, "好的🙂谢谢");
}

TEST(ToolCallParser, InvalidUtf8AndDeepNesting) {
  expect_raw("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"\xff\"}}</tool_call>");
  expect_raw("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"\\ud800\"}}</tool_call>");
  expect_raw("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"\x01\"}}</tool_call>");
  std::string deep = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": ";
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  deep += "}}</tool_call>";
  const auto r = ToolCallParser::parse_all(deep);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, deep);
}

TEST(ToolCallParser, StreamsAsSoonAsKnown) {
  ToolCallParser p(42);
  auto ev = p.push("Hi <tool");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, "Hi ");  // only the possible tag start is held
  ev = p.push("_call>\n{\"name\": \"f\"");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, K::kToolCallBegin);
  EXPECT_EQ(ev[0].name, "f");
  EXPECT_EQ(ev[0].index, 0);
  const std::string id = ev[0].id;
  ev = p.push(", \"arguments\": {\"a\"");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, K::kToolCallArguments);
  EXPECT_EQ(ev[0].text, "{\"a\"");
  ev = p.push(": 1}}\n</tool");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, ": 1}");
  ev = p.push("_call>");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, K::kToolCallEnd);
  EXPECT_EQ(ev[0].id, id);
  EXPECT_EQ(ev[0].call.arguments_string, "{\"a\": 1}");
  EXPECT_FALSE(p.in_tool_call());
  ev = p.push("<toolkit");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, "<toolkit");
}

TEST(ToolCallParser, Ids) {
  const std::string text =
      "<tool_call>{\"name\": \"f\"}</tool_call><tool_call>{\"name\": \"g\"}</tool_call>";
  const auto a = ToolCallParser::parse_all(text, 1);
  const auto b = ToolCallParser::parse_all(text, 1);
  const auto c = ToolCallParser::parse_all(text, 2);
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0].id, b.calls[0].id);
  EXPECT_NE(a.calls[0].id, c.calls[0].id);
  EXPECT_NE(a.calls[0].id, a.calls[1].id);
  for (const auto& call : a.calls) {
    ASSERT_EQ(call.id.size(), 5u + 24u);
    EXPECT_TRUE(call.id.starts_with("call_"));
    for (char ch : call.id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)));
  }
}

TEST(ToolCallParser, RandomFragmentsAllSplits) {
  const std::vector<std::string> fragments = {"<tool_call>",
                                              "</tool_call>",
                                              "{\"name\": \"f\"",
                                              ", \"arguments\": ",
                                              "{\"a\": 1}",
                                              "}",
                                              "\"",
                                              "\\",
                                              "{",
                                              "x",
                                              "\n",
                                              " ",
                                              "<tool",
                                              "_call>",
                                              "中",
                                              "[",
                                              "]",
                                              ", \"name\": \"g\""};
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) text += fragments[rng() % fragments.size()];
    SCOPED_TRACE(text);
    check(text);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace duet
