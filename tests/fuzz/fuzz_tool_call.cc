// libFuzzer target: model output through the streaming parsers the server chains —
// ReasoningSplitter, then ToolCallParser on its content — cut into random pieces. The think
// block's tags reach the splitter as tags (the caller's token-level decision), in any order.
// Beyond "no crash, no sanitizer report", it traps when:
//   - the events for random cuts differ from the events for the whole text at once;
//   - the splitter loses text other than the tags and trimmed whitespace (raw mode: loses
//     nothing);
//   - the tool-call parser's streamed result differs from parse_all(), a call's argument
//     fragments do not add up to its arguments string, or its arguments do not parse to an
//     object;
//   - content plus the calls' blocks does not give back the parser's input byte for byte.
//
// Input: byte 0 picks the splitter's mode, byte 1 seeds the cuts; each later byte is itself,
// or (0xC0 and above) one of the fragments below, so that tags and JSON appear often. The
// first two fragments are the tags; the others are text, "<th" + "ink>" included.
//
//   build-fuzz/fuzz_tool_call -max_total_time=60 <corpus copy>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "text/output/reasoning_splitter.h"
#include "text/output/tool_call_parser.h"

namespace {

using duet::ReasoningEvent;
using duet::ReasoningKind;
using duet::ReasoningSplitter;
using duet::ToolCallEvent;
using duet::ToolCallParser;
using K = duet::ToolCallEventKind;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::string_view kFragments[] = {"<think>",
                                           "</think>",
                                           "<tool_call>",
                                           "</tool_call>",
                                           "{\"name\": \"f\"",
                                           ", \"arguments\": ",
                                           "{\"a\": [1, -2.5e3, true, null]}",
                                           "}",
                                           "{",
                                           "\"",
                                           "\\",
                                           "\\u00e9",
                                           "\n",
                                           "\n\n",
                                           " ",
                                           "<",
                                           "</",
                                           "<th",
                                           "ink>",
                                           "<tool",
                                           "_call>",
                                           "中文",
                                           "🙂",
                                           ":",
                                           ",",
                                           "[",
                                           "]",
                                           "\"name\"",
                                           "\"arguments\"",
                                           "0",
                                           "01",
                                           "\xff"};

std::vector<std::string_view> cut(std::string_view text, std::mt19937& rng) {
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t len = std::uniform_int_distribution<size_t>(0, 9)(rng);
    pieces.push_back(text.substr(pos, len));
    pos += std::min(len, text.size() - pos);
  }
  return pieces;
}

// --- the reasoning splitter

void append(std::vector<ReasoningEvent>& all, std::vector<ReasoningEvent> more) {
  for (ReasoningEvent& e : more) {
    check(!e.text.empty());
    if (!all.empty() && all.back().kind == e.kind) {
      all.back().text += e.text;
    } else {
      all.push_back(std::move(e));
    }
  }
}

std::string without_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
  return out;
}

// --- the tool-call parser

struct Folded {
  std::string content;
  std::vector<std::string> names, ids, args;  // completed calls
};

Folded fold(const std::vector<ToolCallEvent>& events) {
  std::vector<int> invalid;
  for (const auto& e : events)
    if (e.kind == K::kToolCallInvalid) invalid.push_back(e.index);
  const auto dropped = [&](int index) {
    return std::find(invalid.begin(), invalid.end(), index) != invalid.end();
  };
  Folded f;
  std::vector<std::string> fragments(events.size() + 1);
  int begun = -1;
  for (const auto& e : events) {
    switch (e.kind) {
      case K::kContent:
        check(!e.text.empty());
        f.content += e.text;
        break;
      case K::kToolCallBegin:
        check(e.index > begun);  // indices only grow
        begun = e.index;
        break;
      case K::kToolCallArguments:
        check(e.index == begun);
        fragments.at(e.index) += e.text;
        break;
      case K::kToolCallEnd: {
        check(e.index == begun && !dropped(e.index));
        check(fragments.at(e.index) == e.call.arguments_string);
        const auto parsed = nlohmann::json::parse(e.call.arguments_string, nullptr, false);
        check(parsed.is_object() && parsed == e.call.arguments);
        check(!e.name.empty() && e.name == e.call.name && e.id == e.call.id);
        f.names.push_back(e.name);
        f.ids.push_back(e.id);
        f.args.push_back(e.call.arguments_string);
        break;
      }
      case K::kToolCallInvalid:
        check(e.index == begun);
        break;
    }
  }
  return f;
}

void check_tool_calls(std::string_view text, std::mt19937& rng) {
  const duet::ToolCallParseResult all = ToolCallParser::parse_all(text, 9);
  // No byte lost: content is the text with the calls' blocks cut out.
  std::string rebuilt;
  size_t at = 0;
  for (const auto& call : all.calls) {
    check(call.source_begin >= at && call.source_end <= text.size());
    rebuilt += text.substr(at, call.source_begin - at);
    check(text.substr(call.source_begin).starts_with("<tool_call>"));
    check(text.substr(0, call.source_end).ends_with("</tool_call>"));
    at = call.source_end;
  }
  rebuilt += text.substr(at);
  check(rebuilt == all.content);
  // Streaming over random cuts gives the same.
  ToolCallParser p(9);
  std::vector<ToolCallEvent> events;
  for (std::string_view piece : cut(text, rng)) {
    for (auto& e : p.push(piece)) events.push_back(std::move(e));
  }
  for (auto& e : p.finish()) events.push_back(std::move(e));
  const Folded f = fold(events);
  check(f.content == all.content);
  check(f.names.size() == all.calls.size());
  for (size_t i = 0; i < all.calls.size(); ++i) {
    check(f.names[i] == all.calls[i].name && f.ids[i] == all.calls[i].id &&
          f.args[i] == all.calls[i].arguments_string);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t mode = data[0];
  std::mt19937 rng(data[1]);
  // The output as items: text, or a tag (kOpen / kClose, whose text raw mode shows).
  enum class Item { kText, kOpen, kClose };
  std::vector<std::pair<Item, std::string>> items;
  std::string text, untagged;  // everything; the text items only
  for (size_t i = 2; i < size; ++i) {
    std::string_view piece(reinterpret_cast<const char*>(&data[i]), 1);
    Item kind = Item::kText;
    if (data[i] >= 0xC0) {
      const size_t f = (data[i] - 0xC0) % std::size(kFragments);
      piece = kFragments[f];
      kind = f == 0 ? Item::kOpen : f == 1 ? Item::kClose : Item::kText;
    }
    text += piece;
    if (kind == Item::kText) untagged += piece;
    if (kind == Item::kText && !items.empty() && items.back().first == Item::kText)
      items.back().second += piece;
    else
      items.emplace_back(kind, std::string(piece));
  }
  const bool starts_inside = mode & 1, raw = (mode & 12) == 12;
  const auto feed = [](ReasoningSplitter& s, Item kind, std::string_view piece) {
    return kind == Item::kOpen    ? s.open(piece)
           : kind == Item::kClose ? s.close(piece)
                                  : s.push(piece);
  };

  // The splitter over random cuts, the tool-call parser fed its content as it streams.
  ReasoningSplitter splitter(starts_inside, raw);
  ToolCallParser pipeline(9);
  std::vector<ReasoningEvent> split;
  std::vector<ToolCallEvent> pipeline_events;
  const auto feed_pipeline = [&](const std::vector<ReasoningEvent>& events) {
    for (const auto& e : events) {
      if (e.kind != ReasoningKind::kContent) continue;
      for (auto& t : pipeline.push(e.text)) pipeline_events.push_back(std::move(t));
    }
  };
  for (const auto& [kind, item] : items) {
    for (std::string_view piece :
         kind == Item::kText ? cut(item, rng) : std::vector<std::string_view>{item}) {
      auto events = feed(splitter, kind, piece);
      feed_pipeline(events);
      append(split, std::move(events));
    }
  }
  auto last = splitter.finish();
  feed_pipeline(last);
  append(split, std::move(last));
  for (auto& t : pipeline.finish()) pipeline_events.push_back(std::move(t));

  // Same as each item at once.
  ReasoningSplitter whole(starts_inside, raw);
  std::vector<ReasoningEvent> once;
  for (const auto& [kind, item] : items) append(once, feed(whole, kind, item));
  append(once, whole.finish());
  check(split == once);

  std::string out, content;
  for (const auto& e : once) {
    out += e.text;
    if (e.kind == ReasoningKind::kContent) content += e.text;
  }
  if (raw) {
    check(out == (starts_inside ? "<think>\n" : "") + text);
  } else {
    check(without_spaces(out) == without_spaces(untagged));  // only whitespace is trimmed
  }

  // The pipeline's tool calls equal parse_all over the splitter's content.
  const duet::ToolCallParseResult all = ToolCallParser::parse_all(content, 9);
  const Folded f = fold(pipeline_events);
  check(f.content == all.content && f.names.size() == all.calls.size());
  for (size_t i = 0; i < all.calls.size(); ++i) check(f.args[i] == all.calls[i].arguments_string);

  // And the tool-call parser alone, on the raw text.
  check_tool_calls(text, rng);
  return 0;
}
