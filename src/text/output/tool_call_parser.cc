#include "text/output/tool_call_parser.h"

#include <algorithm>
#include <optional>

namespace duet {
namespace {

constexpr std::string_view kOpenTag = "<tool_call>";
constexpr std::string_view kCloseTag = "</tool_call>";

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A JSON string token (with its quotes) decoded, or nothing if it is not one.
std::optional<std::string> decode_string(std::string_view raw) {
  if (raw.empty() || raw.front() != '"') return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

}  // namespace

ToolCallParser::ToolCallParser(uint64_t id_seed) : id_seed_(id_seed) {}

std::string ToolCallParser::make_id(int index) const {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  uint64_t state = splitmix64(id_seed_ ^ splitmix64(static_cast<uint64_t>(index) + 1));
  for (int i = 0; i < 24; ++i) {
    if (i % 8 == 0) state = splitmix64(state);
    id += kAlphabet[(state >> ((i % 8) * 8)) % 62];
  }
  return id;
}

void ToolCallParser::emit_content(std::vector<ToolCallEvent>& out, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == ToolCallEventKind::kContent) {
    out.back().text += text;
  } else {
    out.push_back({.kind = ToolCallEventKind::kContent, .text = std::string(text)});
  }
}

void ToolCallParser::start_block(size_t tag_offset) {
  block_offset_ = tag_offset;
  block_.clear();
  phase_ = Phase::kBeforeObject;
  scanner_ = JsonObjectScanner();
  object_offset_ = 0;
  members_seen_ = 0;
  end_tag_matched_ = 0;
  key_decoded_at_ = SIZE_MAX;
  current_key_.clear();
  name_key_seen_ = arguments_key_seen_ = false;
  has_name_ = has_arguments_ = false;
  name_.clear();
  args_begin_ = args_end_ = 0;
  args_started_ = false;
  args_emitted_ = 0;
  index_ = -1;
  state_ = State::kBlock;
}

std::vector<ToolCallEvent> ToolCallParser::push(std::string_view piece) {
  std::vector<ToolCallEvent> out;
  pending_.append(piece);
  process(out, /*final=*/false);
  return out;
}

std::vector<ToolCallEvent> ToolCallParser::finish() {
  std::vector<ToolCallEvent> out;
  process(out, /*final=*/true);
  return out;
}

void ToolCallParser::process(std::vector<ToolCallEvent>& out, bool final) {
  while (true) {
    if (state_ == State::kText) {
      const size_t tag = pending_.find(kOpenTag);
      if (tag != std::string::npos) {
        emit_content(out, std::string_view(pending_).substr(0, tag));
        start_block(pending_offset_ + tag);
        pending_.erase(0, tag + kOpenTag.size());
        pending_offset_ += tag + kOpenTag.size();
        continue;
      }
      const size_t keep = final ? 0 : partial_tag_suffix(pending_, kOpenTag);
      const size_t n = pending_.size() - keep;
      emit_content(out, std::string_view(pending_).substr(0, n));
      pending_.erase(0, n);
      pending_offset_ += n;
      return;
    }
    // In a block: feed byte by byte until it closes, fails, or the input runs out.
    Step step = Step::kMore;
    size_t used = 0;
    while (used < pending_.size() && step == Step::kMore) {
      const char c = pending_[used++];
      block_ += c;
      step = feed_block(out, c);
    }
    pending_.erase(0, used);
    pending_offset_ += used;
    if (step == Step::kDone) continue;
    if (step == Step::kFail || final) {
      fail_block(out);
      continue;
    }
    flush_arguments(out);
    return;
  }
}

ToolCallParser::Step ToolCallParser::feed_block(std::vector<ToolCallEvent>& out, char c) {
  switch (phase_) {
    case Phase::kBeforeObject:
      if (is_ws(c)) return Step::kMore;
      if (c != '{') return Step::kFail;
      object_offset_ = block_.size() - 1;
      phase_ = Phase::kObject;
      return read_object_byte(out, c);
    case Phase::kObject:
      return read_object_byte(out, c);
    case Phase::kAfterObject:
      if (end_tag_matched_ == 0 && is_ws(c)) return Step::kMore;
      if (c != kCloseTag[end_tag_matched_]) return Step::kFail;
      if (++end_tag_matched_ == kCloseTag.size()) return finish_block(out);
      return Step::kMore;
  }
  return Step::kFail;
}

ToolCallParser::Step ToolCallParser::read_object_byte(std::vector<ToolCallEvent>& out, char c) {
  const JsonObjectScanner::Status status = scanner_.feed(c);
  if (status == JsonObjectScanner::Status::kError) return Step::kFail;
  // A top-level key just ended: decode it, and refuse a second "name" or "arguments".
  if (const auto* m = scanner_.current_member();
      m != nullptr && m->key_end != 0 && m->key_begin != key_decoded_at_) {
    key_decoded_at_ = m->key_begin;
    const auto key = decode_string(
        std::string_view(block_).substr(object_offset_ + m->key_begin, m->key_end - m->key_begin));
    if (!key) return Step::kFail;
    current_key_ = *key;
    bool& seen = current_key_ == "name" ? name_key_seen_ : arguments_key_seen_;
    if (current_key_ == "name" || current_key_ == "arguments") {
      if (seen) return Step::kFail;
      seen = true;
    }
  }
  // The arguments' value began: it must be an object, and it streams from here.
  if (const auto* m = scanner_.current_member(); m != nullptr && current_key_ == "arguments" &&
                                                 m->value_begin != JsonObjectScanner::kOpen &&
                                                 !args_started_) {
    args_begin_ = object_offset_ + m->value_begin;
    if (block_[args_begin_] != '{') return Step::kFail;
    args_started_ = true;
  }
  while (members_seen_ < scanner_.members().size()) {
    if (!on_member(out, scanner_.members()[members_seen_++])) return Step::kFail;
  }
  if (status == JsonObjectScanner::Status::kComplete) phase_ = Phase::kAfterObject;
  return Step::kMore;
}

bool ToolCallParser::on_member(std::vector<ToolCallEvent>& out,
                               const JsonObjectScanner::Member& m) {
  const std::string_view value =
      std::string_view(block_).substr(object_offset_ + m.value_begin, m.value_end - m.value_begin);
  if (current_key_ == "name") {
    auto name = decode_string(value);
    if (!name || name->empty()) return false;
    name_ = std::move(*name);
    has_name_ = true;
    index_ = next_index_++;
    out.push_back({.kind = ToolCallEventKind::kToolCallBegin,
                   .index = index_,
                   .id = make_id(index_),
                   .name = name_});
    flush_arguments(out);  // arguments written before the name go out now
  } else if (current_key_ == "arguments") {
    args_end_ = object_offset_ + m.value_end;
    has_arguments_ = true;
  }
  return true;
}

void ToolCallParser::flush_arguments(std::vector<ToolCallEvent>& out) {
  if (index_ < 0 || !args_started_) return;
  const size_t end = has_arguments_ ? args_end_ : block_.size();
  const size_t from = args_begin_ + args_emitted_;
  if (end <= from) return;
  out.push_back({.kind = ToolCallEventKind::kToolCallArguments,
                 .text = block_.substr(from, end - from),
                 .index = index_});
  args_emitted_ = end - args_begin_;
}

ToolCallParser::Step ToolCallParser::finish_block(std::vector<ToolCallEvent>& out) {
  if (!has_name_) return Step::kFail;
  ParsedToolCall call;
  call.arguments_string =
      has_arguments_ ? block_.substr(args_begin_, args_end_ - args_begin_) : std::string("{}");
  // The scanner checked the grammar; this also checks UTF-8 and \u surrogate pairs.
  call.arguments = nlohmann::json::parse(call.arguments_string, nullptr, false);
  if (!call.arguments.is_object()) return Step::kFail;
  if (has_arguments_) {
    flush_arguments(out);
  } else {
    out.push_back({.kind = ToolCallEventKind::kToolCallArguments, .text = "{}", .index = index_});
  }
  call.id = make_id(index_);
  call.name = name_;
  call.source_begin = block_offset_;
  call.source_end = block_offset_ + kOpenTag.size() + block_.size();
  out.push_back({.kind = ToolCallEventKind::kToolCallEnd,
                 .index = index_,
                 .id = call.id,
                 .name = call.name,
                 .call = std::move(call)});
  state_ = State::kText;
  block_.clear();
  return Step::kDone;
}

void ToolCallParser::fail_block(std::vector<ToolCallEvent>& out) {
  if (index_ >= 0) out.push_back({.kind = ToolCallEventKind::kToolCallInvalid, .index = index_});
  emit_content(out, kOpenTag);
  // Read what followed the tag again, as text.
  pending_.insert(0, block_);
  pending_offset_ = block_offset_ + kOpenTag.size();
  block_.clear();
  state_ = State::kText;
}

ToolCallParseResult ToolCallParser::parse_all(std::string_view text, uint64_t id_seed) {
  ToolCallParser parser(id_seed);
  std::vector<ToolCallEvent> events = parser.push(text);
  std::vector<ToolCallEvent> rest = parser.finish();
  events.insert(events.end(), std::make_move_iterator(rest.begin()),
                std::make_move_iterator(rest.end()));
  ToolCallParseResult result;
  for (ToolCallEvent& e : events) {
    if (e.kind == ToolCallEventKind::kContent) result.content += e.text;
    if (e.kind == ToolCallEventKind::kToolCallEnd) result.calls.push_back(std::move(e.call));
  }
  return result;
}

}  // namespace duet
