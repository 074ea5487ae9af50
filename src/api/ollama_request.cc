// Ollama request bodies (/api/chat, /api/generate). Streaming is the default; sampling lives
// in "options"; "think" picks the mode (mode_fields.cc); a request with no
// messages / no prompt only loads (or, with keep_alive 0, unloads) the model.
#include <cctype>
#include <limits>

#include "api/request_model.h"

namespace duet {
namespace {

// Go's time.ParseDuration subset Ollama clients send: "5m", "1h30m", "10s", "-1", "0",
// "300ms", and plain numbers of seconds. Returns the seconds (negative: forever).
Result<double> parse_keep_alive(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string())
    return field_error("keep_alive", "a duration (\"5m\") or a number of seconds");
  const std::string& s = v.get_ref<const std::string&>();
  const auto bad = field_error("keep_alive", "a duration such as \"5m\", \"1h\", \"-1\" or \"0\"");
  if (s.empty() || s.size() > 32) return bad;
  size_t i = 0;
  double sign = 1, total = 0;
  if (s[0] == '-' || s[0] == '+') {
    sign = s[0] == '-' ? -1 : 1;
    ++i;
  }
  bool any = false;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return bad;
    const double n = std::strtod(s.substr(start, i - start).c_str(), nullptr);
    size_t unit_start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    const std::string unit = s.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit.empty())
      scale = (unit_start == s.size() && !any) ? 1 : 0;  // a bare number
    else if (unit == "h")
      scale = 3600;
    else if (unit == "m")
      scale = 60;
    else if (unit == "s")
      scale = 1;
    else if (unit == "ms")
      scale = 1e-3;
    else if (unit == "us" || unit == "µs")
      scale = 1e-6;
    else if (unit == "ns")
      scale = 1e-9;
    if (scale == 0) return bad;
    total += n * scale;
    any = true;
  }
  return sign * total;
}

Status read_options(const Json& body, const RequestLimits& limits, ApiRequest& r) {
  const Json* o = find_field(body, "options");
  if (o == nullptr) return Status::ok();
  if (!o->is_object()) return field_error("options", "an object");
  SamplingParams& s = r.sampling;
  auto read_float = [&](const char* name, float& dst, bool* seen) -> Status {
    DUET_ASSIGN(v, get_number(*o, name));
    if (v) {
      dst = static_cast<float>(*v);
      if (seen) *seen = true;
    }
    return Status::ok();
  };
  DUET_TRY(read_float("temperature", s.temperature, &r.has_temperature));
  DUET_TRY(read_float("top_p", s.top_p, &r.has_top_p));
  DUET_TRY(read_float("min_p", s.min_p, &r.has_min_p));
  DUET_TRY(read_float("presence_penalty", s.presence_penalty, nullptr));
  DUET_TRY(read_float("frequency_penalty", s.frequency_penalty, nullptr));
  DUET_TRY(read_float("repeat_penalty", s.repetition_penalty, nullptr));
  DUET_ASSIGN(top_k, get_int(*o, "top_k", 0, 1 << 30));
  if (top_k) {
    s.top_k = static_cast<int>(*top_k);
    r.has_top_k = true;
  }
  DUET_ASSIGN(seed, get_int(*o, "seed", std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()));
  if (seed && *seed >= 0) s.seed = static_cast<uint64_t>(*seed);  // Ollama: -1 is random
  DUET_ASSIGN(num_predict, get_int(*o, "num_predict", -2, limits.max_tokens_cap));
  if (num_predict) {
    if (*num_predict == 0)
      return field_error("options.num_predict", "-1, -2 or a positive integer");
    if (*num_predict > 0) r.max_tokens = *num_predict;  // -1 and -2: until the context is full
  }
  // Accepted and checked, with no effect here: the context is the server's, threads are the
  // server's, and duet's sampler has no typical-p or repeat window.
  DUET_ASSIGN(num_ctx, get_int(*o, "num_ctx", 1, 1 << 30));
  DUET_ASSIGN(num_keep, get_int(*o, "num_keep", -1, 1 << 30));
  DUET_ASSIGN(repeat_last_n, get_int(*o, "repeat_last_n", -1, 1 << 30));
  DUET_ASSIGN(num_thread, get_int(*o, "num_thread", 0, 4096));
  DUET_ASSIGN(typical_p, get_number(*o, "typical_p"));
  if (typical_p && (*typical_p <= 0 || *typical_p > 1))
    return field_error("options.typical_p", "in (0, 1]");
  (void)num_ctx, (void)num_keep, (void)repeat_last_n, (void)num_thread;
  DUET_TRY(request_detail::read_stop(find_field(*o, "stop"), r.stop));
  return Status::ok();
}

Status read_common(const Json& body, const RequestLimits& limits, ApiRequest& r) {
  DUET_ASSIGN(model, get_string(body, "model"));
  if (model) r.model = *model;
  DUET_ASSIGN(stream, get_bool(body, "stream"));
  r.stream = stream.value_or(true);  // Ollama streams unless told not to
  DUET_TRY(read_options(body, limits, r));
  if (const Json* ka = find_field(body, "keep_alive")) {
    DUET_ASSIGN(seconds, parse_keep_alive(*ka));
    r.unload = seconds == 0;
  }
  DUET_TRY(request_detail::read_output_format(body, r.output_format));
  DUET_TRY(request_detail::read_reasoning_format(body, r));
  DUET_TRY(request_detail::read_mode_fields(body, r.mode_fields));
  return Status::ok();
}

}  // namespace

Result<ApiRequest> parse_ollama_chat(const Json& body, const RequestLimits& limits) {
  ApiRequest r;
  r.dialect = Dialect::kOllama;
  r.endpoint = Endpoint::kChat;
  DUET_TRY(read_common(body, limits, r));
  const Json* messages = find_field(body, "messages");
  if (messages != nullptr)
    DUET_TRY(request_detail::normalize_messages(*messages, limits, Dialect::kOllama, r.messages));
  if (r.messages.empty()) {
    r.load_only = true;
    return r;
  }
  DUET_TRY(request_detail::read_tools(body, limits, r.tools));
  r.parse_tool_calls = r.tools.is_array();
  DUET_TRY(request_detail::read_tool_choice(body, r));
  // Ollama continues a final assistant message instead of starting a new turn.
  r.continue_final_message = r.messages.back()["role"] == "assistant";
  return r;
}

Result<ApiRequest> parse_ollama_generate(const Json& body, const RequestLimits& limits) {
  ApiRequest r;
  r.dialect = Dialect::kOllama;
  r.endpoint = Endpoint::kCompletion;
  DUET_TRY(read_common(body, limits, r));
  DUET_ASSIGN(prompt, get_string(body, "prompt"));
  DUET_ASSIGN(system, get_string(body, "system"));
  DUET_ASSIGN(raw, get_bool(body, "raw"));
  DUET_ASSIGN(suffix, get_string(body, "suffix"));
  if (suffix && !suffix->empty()) return Status::error("suffix is not supported");
  if (const Json* images = find_field(body, "images");
      images && !(images->is_array() && images->empty()))
    return Status::error("images are not supported by this model");
  r.prompt = prompt.value_or("");
  r.system = system.value_or("");
  r.raw_prompt = raw.value_or(false);
  if (r.prompt.empty()) {
    r.load_only = true;
    return r;
  }
  r.parse_tool_calls = false;
  if (!r.raw_prompt) {
    // Templated: the prompt is one user turn (after the system prompt, if any).
    if (!r.system.empty()) r.messages.push_back({{"role", "system"}, {"content", r.system}});
    r.messages.push_back({{"role", "user"}, {"content", r.prompt}});
  }
  return r;
}

}  // namespace duet
