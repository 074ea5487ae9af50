#include "loadgen/chat_stream.h"

#include <nlohmann/json.hpp>

namespace duet::loadgen {
namespace {

using Json = nlohmann::json;

bool non_empty_string(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

int64_t int_or(const Json& obj, const char* key, int64_t fallback) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace

bool ChatStreamReader::fail(const char* kind, std::string message) {
  failed_ = true;
  r_.ok = false;
  r_.error_kind = kind;
  r_.error = std::move(message);
  return false;
}

bool ChatStreamReader::on_event(const std::string& data, double t) {
  if (failed_) return false;
  if (data == "[DONE]") {
    done_ = true;
    return true;
  }
  Json j = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return fail("malformed_sse", "an event is not a JSON object: " + data.substr(0, 120));
  if (const auto e = j.find("error"); e != j.end()) {
    std::string message = e->is_object() && e->contains("message") && (*e)["message"].is_string()
                              ? (*e)["message"].get<std::string>()
                              : e->dump();
    return fail("server_error", "the server reported an error mid-stream: " + message);
  }
  if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
    r_.usage_prompt = int_or(*u, "prompt_tokens", r_.usage_prompt);
    r_.usage_completion = int_or(*u, "completion_tokens", r_.usage_completion);
    if (const auto d = u->find("completion_tokens_details"); d != u->end() && d->is_object())
      r_.usage_reasoning = int_or(*d, "reasoning_tokens", r_.usage_reasoning);
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return true;
  const Json& choice = (*choices)[0];
  if (!choice.is_object()) return fail("malformed_sse", "a choice is not an object");
  if (const auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
    r_.finish_reason = f->get<std::string>();
  const auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return true;
  // A role-only or empty delta carries no token (vLLM's openai-chat client counts it for
  // TTFT; here TTFT waits for generated text — see docs/BENCHMARKS.md).
  const bool answer = non_empty_string(*delta, "content") ||
                      (delta->contains("tool_calls") && (*delta)["tool_calls"].is_array() &&
                       !(*delta)["tool_calls"].empty());
  const bool reasoning =
      non_empty_string(*delta, "reasoning_content") || non_empty_string(*delta, "reasoning");
  if (answer || reasoning) r_.tokens.push_back({t, answer});
  return true;
}

bool ChatStreamReader::finish(double t) {
  r_.e2e = t;
  if (failed_) return false;
  if (!done_ && r_.finish_reason.empty())
    return fail("incomplete_stream", "the stream ended before [DONE] or a finish reason");
  r_.ok = true;
  return true;
}

}  // namespace duet::loadgen
