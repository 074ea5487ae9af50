#include "api/output_pipeline.h"

#include <utility>

namespace duet {
namespace {

// Bytes → valid UTF-8, each ill-formed byte becoming U+FFFD (a token can be part of a
// character; logprobs carry the exact bytes separately).
std::string lossy_utf8(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && len == 2) ok = c >= 0xC2;
    if (ok && len == 3) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = c <= 0xF4 && !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

}  // namespace

std::shared_ptr<const ReasoningTokenIds> reasoning_token_ids(const Tokenizer& tokenizer) {
  auto ids = std::make_shared<ReasoningTokenIds>();
  ids->think_open = tokenizer.find_token("<think>").value_or(-1);
  ids->think_close = tokenizer.find_token("</think>").value_or(-1);
  ids->whitespace.resize(static_cast<size_t>(tokenizer.n_vocab()));
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    const std::string_view b = tokenizer.token_bytes(id);
    // The bytes the reasoning splitter trims as whitespace.
    ids->whitespace[id] = !b.empty() && b.find_first_not_of(" \t\n\r") == std::string_view::npos;
  }
  return ids;
}

namespace {

OutputOptions with_reasoning_ids(OutputOptions o, const Tokenizer& tokenizer) {
  if (!o.reasoning_ids) o.reasoning_ids = reasoning_token_ids(tokenizer);
  return o;
}

// The prompt leaves the output inside the think block only in thinking mode; the engine
// starts from the same state (prepare_request sets gen.starts_in_reasoning alike).
bool starts_inside(const OutputOptions& o) { return o.prompt_opened_think && o.thinking; }

}  // namespace

OutputPipeline::OutputPipeline(const Tokenizer& tokenizer, OutputOptions options)
    : tokenizer_(tokenizer),
      options_(with_reasoning_ids(std::move(options), tokenizer)),
      decoder_(tokenizer, options_.skip_special_tokens),
      tracker_(options_.reasoning_ids.get(), starts_inside(options_)),
      splitter_(starts_inside(options_), options_.reasoning == ReasoningOutput::kRaw) {
  if (options_.parse_tool_calls) tools_ = std::make_unique<ToolCallParser>(options_.tool_id_seed);
  if (!options_.stop.empty()) stops_ = std::make_unique<StopStringMatcher>(options_.stop);
}

OutputPipeline::~OutputPipeline() = default;

LogprobEntry OutputPipeline::logprob_entry(int32_t token, float logprob,
                                           const std::vector<TokenLogprob>& top) const {
  LogprobEntry e;
  const std::string_view b = tokenizer_.token_bytes(token);
  e.token = lossy_utf8(b);
  e.bytes = bytes_of(b);
  e.logprob = logprob;
  for (const TokenLogprob& t : top) {
    const std::string_view tb = tokenizer_.token_bytes(t.token);
    e.top.emplace_back(lossy_utf8(tb), t.logprob);
    e.top_bytes.push_back(bytes_of(tb));
  }
  return e;
}

OutputDelta OutputPipeline::push(const TokenEvent& event) {
  OutputDelta out;
  out.tokens = static_cast<int>(event.tokens.size());
  if (stopped_) return out;
  std::string text;
  for (size_t i = 0; i < event.tokens.size(); ++i) {
    const int32_t token = event.tokens[i];
    if (options_.logprobs && !event.injected && i == 0)
      out.logprobs.push_back(logprob_entry(token, event.logprob, event.top_logprobs));
    const ThinkTag tag = tracker_.push(token);
    if (tag == ThinkTag::kNone) {
      text += decoder_.push(token);
      continue;
    }
    // A tag: the text before it belongs to the section it ends.
    text += decoder_.flush();
    route_text(text, out, false);
    text.clear();
    const std::string_view tag_text = tokenizer_.token_bytes(token);
    route_events(tag == ThinkTag::kOpen ? splitter_.open(tag_text) : splitter_.close(tag_text),
                 out);
  }
  route_text(text, out, false);
  return out;
}

OutputDelta OutputPipeline::finish() {
  OutputDelta out;
  if (stopped_) return out;
  route_text(decoder_.flush(), out, true);
  return out;
}

void OutputPipeline::route_text(std::string_view text, OutputDelta& out, bool final) {
  std::vector<ReasoningEvent> events;
  if (!text.empty()) events = splitter_.push(text);
  if (final) {
    std::vector<ReasoningEvent> rest = splitter_.finish();
    events.insert(events.end(), std::make_move_iterator(rest.begin()),
                  std::make_move_iterator(rest.end()));
  }
  route_events(events, out);
  if (final && !stopped_) route_content({}, out, true);
}

void OutputPipeline::route_events(const std::vector<ReasoningEvent>& events, OutputDelta& out) {
  for (const ReasoningEvent& e : events) {
    if (stopped_) return;
    if (e.kind == ReasoningKind::kReasoning) {
      if (options_.reasoning != ReasoningOutput::kDrop) out.reasoning += e.text;
    } else {
      route_content(e.text, out, false);
    }
  }
}

void OutputPipeline::route_content(std::string_view text, OutputDelta& out, bool final) {
  if (!tools_) {
    emit_content(text, out, final);
    return;
  }
  std::vector<ToolCallEvent> events;
  if (!text.empty()) events = tools_->push(text);
  if (final) {
    std::vector<ToolCallEvent> rest = tools_->finish();
    events.insert(events.end(), std::make_move_iterator(rest.begin()),
                  std::make_move_iterator(rest.end()));
  }
  for (ToolCallEvent& e : events) {
    if (stopped_) return;
    switch (e.kind) {
      case ToolCallEventKind::kContent:
        emit_content(e.text, out, false);
        break;
      case ToolCallEventKind::kToolCallBegin:
        out.tool_calls.push_back(
            {.index = e.index, .begin = true, .id = e.id, .name = e.name, .arguments = {}});
        break;
      case ToolCallEventKind::kToolCallArguments:
        if (!out.tool_calls.empty() && out.tool_calls.back().index == e.index)
          out.tool_calls.back().arguments += e.text;
        else
          out.tool_calls.push_back(
              {.index = e.index, .begin = false, .id = {}, .name = {}, .arguments = e.text});
        break;
      case ToolCallEventKind::kToolCallEnd:
        calls_.push_back(e.call);
        out.finished_calls.push_back(std::move(e.call));
        break;
      case ToolCallEventKind::kToolCallInvalid:
        // Its raw text follows as content; a streaming client already saw its name, which
        // is the price of showing calls as they are written.
        break;
    }
  }
  if (final) emit_content({}, out, true);
}

void OutputPipeline::emit_content(std::string_view text, OutputDelta& out, bool final) {
  if (!stops_) {
    out.content += text;
    return;
  }
  StopResult r = stops_->push(text);
  out.content += r.text;
  if (!r.stopped && final) {
    r = stops_->finish();
    out.content += r.text;
  }
  if (r.stopped) stopped_ = true;
}

}  // namespace duet
