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

OutputPipeline::OutputPipeline(const Tokenizer& tokenizer, OutputOptions options)
    : tokenizer_(tokenizer),
      options_(std::move(options)),
      decoder_(tokenizer, options_.skip_special_tokens),
      splitter_(options_.prompt_opened_think, options_.thinking,
                options_.reasoning == ReasoningOutput::kRaw) {
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
    text += decoder_.push(event.tokens[i]);
    if (options_.logprobs && !event.injected && i == 0)
      out.logprobs.push_back(logprob_entry(event.tokens[i], event.logprob, event.top_logprobs));
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
  for (const ReasoningEvent& e : events) {
    if (stopped_) return;
    if (e.kind == ReasoningKind::kReasoning) {
      if (options_.reasoning != ReasoningOutput::kDrop) out.reasoning += e.text;
    } else {
      route_content(e.text, out, false);
    }
  }
  if (final) route_content({}, out, true);
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
