// OpenAI's response shapes: chat.completion / chat.completion.chunk (SSE) and
// text_completion. Reasoning goes out twice, as reasoning_content (llama.cpp, Open WebUI,
// Qwen's template) and reasoning (vLLM's newer name).
#include "api/response_format.h"

namespace duet {
namespace {

using nlohmann::ordered_json;

std::string dump(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string sse(const ordered_json& j) { return "data: " + dump(j) + "\n\n"; }

ordered_json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}},
          {"completion_tokens_details", {{"reasoning_tokens", u.reasoning_tokens}}}};
}

ordered_json chat_logprobs(const std::vector<LogprobEntry>& entries) {
  ordered_json content = ordered_json::array();
  for (const LogprobEntry& e : entries) {
    ordered_json top = ordered_json::array();
    for (size_t i = 0; i < e.top.size(); ++i)
      top.push_back(
          {{"token", e.top[i].first}, {"logprob", e.top[i].second}, {"bytes", e.top_bytes[i]}});
    content.push_back(
        {{"token", e.token}, {"logprob", e.logprob}, {"bytes", e.bytes}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

// The legacy completions shape: parallel arrays.
ordered_json completion_logprobs(const std::vector<LogprobEntry>& entries, int64_t& offset) {
  ordered_json tokens = ordered_json::array(), lps = ordered_json::array(),
               tops = ordered_json::array(), offsets = ordered_json::array();
  for (const LogprobEntry& e : entries) {
    tokens.push_back(e.token);
    lps.push_back(e.logprob);
    ordered_json top = ordered_json::object();
    for (const auto& [t, lp] : e.top) top[t] = lp;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += static_cast<int64_t>(e.bytes.size());
  }
  return {{"tokens", tokens},
          {"token_logprobs", lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

ordered_json debug_json(const DebugStamp& s) {
  return {{"engine_ns", s.engine_ns}, {"write_ns", s.write_ns}, {"tokens", s.tokens}};
}

ordered_json tool_call_json(const ParsedToolCall& c) {
  return {{"id", c.id},
          {"type", "function"},
          {"function", {{"name", c.name}, {"arguments", c.arguments_string}}}};
}

class OpenAIFormatter : public ResponseFormatter {
 public:
  explicit OpenAIFormatter(const FormatterConfig& c) : c_(c) {}

  const char* stream_content_type() const override { return "text/event-stream"; }

  std::string stream_start() override {
    if (!chat()) return {};
    ordered_json delta = {{"role", "assistant"}, {"content", ""}};
    return sse(chunk(delta, nullptr));
  }

  std::string stream_delta(const OutputDelta& d, const DebugStamp* stamp) override {
    if (!d.has_output() && stamp == nullptr) return {};
    if (!chat()) {
      // Completions: text only (reasoning, if any, is inline in raw mode).
      if (d.content.empty() && d.logprobs.empty() && stamp == nullptr) return {};
      ordered_json choice = {
          {"index", 0}, {"text", d.content}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
      if (c_.logprobs) choice["logprobs"] = completion_logprobs(d.logprobs, text_offset_);
      ordered_json j = head("text_completion");
      j["choices"] = ordered_json::array({choice});
      if (stamp) j["duet_debug"] = debug_json(*stamp);
      return sse(j);
    }
    ordered_json delta = ordered_json::object();
    if (!d.reasoning.empty()) {
      delta["reasoning_content"] = d.reasoning;
      delta["reasoning"] = d.reasoning;
    }
    if (!d.content.empty()) delta["content"] = d.content;
    if (!d.tool_calls.empty()) {
      ordered_json calls = ordered_json::array();
      for (const ToolCallDelta& t : d.tool_calls) {
        ordered_json call = {{"index", t.index}};
        if (t.begin) {
          call["id"] = t.id;
          call["type"] = "function";
          call["function"] = {{"name", t.name}, {"arguments", t.arguments}};
        } else {
          call["function"] = {{"arguments", t.arguments}};
        }
        calls.push_back(std::move(call));
      }
      delta["tool_calls"] = std::move(calls);
    }
    ordered_json j = chunk(delta, d.logprobs.empty() || !c_.logprobs ? nullptr : &d.logprobs);
    if (stamp) j["duet_debug"] = debug_json(*stamp);
    return sse(j);
  }

  std::string stream_end(const FinishInfo& f) override {
    std::string out;
    ordered_json j;
    if (chat()) {
      j = chunk(ordered_json::object(), nullptr);
    } else {
      j = head("text_completion");
      j["choices"] = ordered_json::array(
          {{{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
    }
    j["choices"][0]["finish_reason"] = f.reason;
    j["duet"] = mode_json(f);
    out += sse(j);
    if (c_.include_usage) {
      ordered_json u = head(chat() ? "chat.completion.chunk" : "text_completion");
      u["choices"] = ordered_json::array();
      u["usage"] = usage_json(f.usage);
      out += sse(u);
    }
    out += "data: [DONE]\n\n";
    return out;
  }

  std::string stream_keepalive() override { return ": keep-alive\n\n"; }

  std::string stream_error(const std::string& message) override {
    ordered_json e = {{"error", {{"message", message}, {"type", "server_error"}, {"code", 500}}}};
    return sse(e) + "data: [DONE]\n\n";
  }

  std::string full_response(const FinishInfo& f) override {
    ordered_json choice;
    if (chat()) {
      ordered_json message = {{"role", "assistant"}};
      message["content"] =
          content_.empty() && !calls_.empty() ? ordered_json(nullptr) : ordered_json(content_);
      if (!reasoning_.empty()) {
        message["reasoning_content"] = reasoning_;
        message["reasoning"] = reasoning_;
      }
      if (!calls_.empty()) {
        ordered_json calls = ordered_json::array();
        for (const ParsedToolCall& c : calls_) calls.push_back(tool_call_json(c));
        message["tool_calls"] = std::move(calls);
      }
      choice = {
          {"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", f.reason}};
      if (c_.logprobs) choice["logprobs"] = chat_logprobs(logprobs_);
    } else {
      choice = {
          {"index", 0}, {"text", content_}, {"logprobs", nullptr}, {"finish_reason", f.reason}};
      int64_t offset = 0;
      if (c_.logprobs) choice["logprobs"] = completion_logprobs(logprobs_, offset);
    }
    ordered_json j = head(chat() ? "chat.completion" : "text_completion");
    j["choices"] = ordered_json::array({choice});
    j["usage"] = usage_json(f.usage);
    j["duet"] = mode_json(f);
    return dump(j);
  }

 private:
  bool chat() const { return c_.endpoint == Endpoint::kChat; }

  ordered_json head(const char* object) const {
    return {{"id", c_.id}, {"object", object}, {"created", c_.created}, {"model", c_.model}};
  }

  ordered_json chunk(ordered_json delta, const std::vector<LogprobEntry>* logprobs) const {
    ordered_json j = head("chat.completion.chunk");
    j["choices"] =
        ordered_json::array({{{"index", 0},
                              {"delta", std::move(delta)},
                              {"logprobs", logprobs ? chat_logprobs(*logprobs) : nullptr},
                              {"finish_reason", nullptr}}});
    return j;
  }

  FormatterConfig c_;
  int64_t text_offset_ = 0;
};

}  // namespace

void ResponseFormatter::accumulate(const OutputDelta& d) {
  reasoning_ += d.reasoning;
  content_ += d.content;
  calls_.insert(calls_.end(), d.finished_calls.begin(), d.finished_calls.end());
  logprobs_.insert(logprobs_.end(), d.logprobs.begin(), d.logprobs.end());
}

nlohmann::ordered_json mode_json(const FinishInfo& f) {
  ordered_json j;
  if (f.mode.source == ThinkingSource::kRawPrompt) {
    j = {{"thinking", nullptr},
         {"mode_source", "raw_prompt"},
         {"reason", "raw prompt: no chat template, so the prompt itself sets the mode"}};
    return j;
  }
  j = {{"thinking", f.mode.enabled},
       {"mode_source", thinking_source_name(f.mode.source)},
       {"reason", f.mode.reason}};
  if (f.mode.enabled && f.mode.budget) j["thinking_budget"] = *f.mode.budget;
  return j;
}

std::string mode_header(const ThinkingDecision& mode) {
  if (mode.source == ThinkingSource::kRawPrompt) return "raw; source=raw_prompt";
  return std::string(mode.enabled ? "thinking" : "non-thinking") +
         "; source=" + std::string(thinking_source_name(mode.source));
}

std::unique_ptr<ResponseFormatter> make_ollama_formatter(const FormatterConfig& config);

std::unique_ptr<ResponseFormatter> make_formatter(const FormatterConfig& config) {
  if (config.dialect == Dialect::kOllama) return make_ollama_formatter(config);
  return std::make_unique<OpenAIFormatter>(config);
}

}  // namespace duet
