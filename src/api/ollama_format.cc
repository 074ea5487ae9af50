// Ollama's response shapes: /api/chat (message.content, message.thinking,
// message.tool_calls) and /api/generate (response, thinking), streamed as NDJSON, with the
// final done:true object carrying done_reason and nanosecond durations.
#include <chrono>
#include <ctime>

#include "api/response_format.h"

namespace duet {
namespace {

using nlohmann::ordered_json;

std::string line(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

// RFC 3339 with nanoseconds, UTC, as Ollama writes created_at.
std::string now_rfc3339() {
  const auto now = std::chrono::system_clock::now();
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09lldZ", static_cast<long long>(ns % 1'000'000'000));
  return buf;
}

ordered_json tool_calls_json(const std::vector<ParsedToolCall>& calls) {
  ordered_json list = ordered_json::array();
  for (const ParsedToolCall& c : calls)
    list.push_back({{"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return list;
}

class OllamaFormatter : public ResponseFormatter {
 public:
  explicit OllamaFormatter(const FormatterConfig& c) : c_(c) {}

  const char* stream_content_type() const override { return "application/x-ndjson"; }

  std::string stream_start() override { return {}; }

  std::string stream_delta(const OutputDelta& d, const DebugStamp* stamp) override {
    const bool visible = !d.content.empty() || !d.reasoning.empty() || !d.finished_calls.empty();
    if (!visible && stamp == nullptr) return {};
    ordered_json j = object(d.content, d.reasoning, d.finished_calls);
    j["done"] = false;
    if (stamp)
      j["duet_debug"] = {{"engine_ns", stamp->engine_ns},
                         {"write_ns", stamp->write_ns},
                         {"tokens", stamp->tokens}};
    return line(j);
  }

  std::string stream_end(const FinishInfo& f) override {
    ordered_json j = object("", "", {});
    finish_fields(j, f);
    return line(j);
  }

  std::string stream_keepalive() override {
    ordered_json j = object("", "", {});
    j["done"] = false;
    return line(j);
  }

  std::string stream_error(const std::string& message) override {
    return line(ordered_json{{"error", message}});
  }

  std::string full_response(const FinishInfo& f) override {
    ordered_json j = object(content_, reasoning_, calls_);
    finish_fields(j, f);
    return line(j);
  }

  // The answer to a request with no prompt: Ollama loads (or unloads) the model.
  static std::string lifecycle(const FormatterConfig& c, const char* reason) {
    ordered_json j = {{"model", c.model}, {"created_at", now_rfc3339()}};
    if (c.endpoint == Endpoint::kChat)
      j["message"] = {{"role", "assistant"}, {"content", ""}};
    else
      j["response"] = "";
    j["done"] = true;
    j["done_reason"] = reason;
    return line(j);
  }

 private:
  ordered_json object(const std::string& content, const std::string& thinking,
                      const std::vector<ParsedToolCall>& calls) const {
    ordered_json j = {{"model", c_.model}, {"created_at", now_rfc3339()}};
    if (c_.endpoint == Endpoint::kChat) {
      ordered_json m = {{"role", "assistant"}, {"content", content}};
      if (!thinking.empty()) m["thinking"] = thinking;
      if (!calls.empty()) m["tool_calls"] = tool_calls_json(calls);
      j["message"] = std::move(m);
    } else {
      j["response"] = content;
      if (!thinking.empty()) j["thinking"] = thinking;
    }
    return j;
  }

  void finish_fields(ordered_json& j, const FinishInfo& f) const {
    j["done"] = true;
    // Ollama knows "stop" and "length"; a tool call ends the turn like a stop.
    j["done_reason"] = f.reason == "tool_calls" ? std::string("stop") : f.reason;
    j["total_duration"] = f.timings.total_ns;
    j["load_duration"] = f.timings.load_ns;
    j["prompt_eval_count"] = f.usage.prompt_tokens;
    j["prompt_eval_duration"] = f.timings.prompt_eval_ns;
    j["eval_count"] = f.usage.completion_tokens;
    j["eval_duration"] = f.timings.eval_ns;
    j["duet"] = mode_json(f);
  }

  FormatterConfig c_;
};

}  // namespace

std::unique_ptr<ResponseFormatter> make_ollama_formatter(const FormatterConfig& config) {
  return std::make_unique<OllamaFormatter>(config);
}

std::string ollama_lifecycle_response(const FormatterConfig& config, bool unload) {
  return OllamaFormatter::lifecycle(config, unload ? "unload" : "load");
}

}  // namespace duet
