// OpenAI request bodies (/v1/chat/completions, /v1/completions), with the extras vLLM users
// send (top_k, min_p, repetition_penalty, chat_template_kwargs, thinking_token_budget,
// include_reasoning, ignore_eos, min_tokens, stop_token_ids, skip_special_tokens,
// continue_final_message). Unknown fields are ignored; known ones with bad values are a 400.
#include <charconv>
#include <limits>

#include "api/request_model.h"

namespace duet {
namespace {

using request_detail::read_reasoning_format;
using request_detail::read_stop;
using request_detail::read_tools;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// A float field into `dst` (validated against its range later by validate()).
Status read_float(const Json& body, const char* name, float& dst, bool* seen = nullptr) {
  DUET_ASSIGN(v, get_number(body, name));
  if (v) {
    dst = static_cast<float>(*v);
    if (seen) *seen = true;
  }
  return Status::ok();
}

Status read_logit_bias(const Json& body, const RequestLimits& limits, SamplingParams& s) {
  const Json* lb = find_field(body, "logit_bias");
  if (lb == nullptr) return Status::ok();
  if (!lb->is_object()) return field_error("logit_bias", "an object of token id → bias");
  if (lb->size() > limits.max_logit_bias)
    return Status::error("logit_bias has more than " + std::to_string(limits.max_logit_bias) +
                         " entries");
  for (const auto& [key, value] : lb->items()) {
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0 ||
        id > std::numeric_limits<int32_t>::max())
      return Status::error("logit_bias keys must be token ids (non-negative integers)");
    if (!value.is_number()) return field_error("logit_bias values", "numbers");
    s.logit_bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
  }
  return Status::ok();
}

// Fields shared by chat and completions.
Status read_common(const Json& body, const RequestLimits& limits, ApiRequest& r) {
  DUET_ASSIGN(model, get_string(body, "model"));
  if (model) r.model = *model;
  DUET_ASSIGN(stream, get_bool(body, "stream"));
  r.stream = stream.value_or(false);
  if (const Json* so = find_field(body, "stream_options")) {
    // As OpenAI answers: the options describe a stream, so without one they are an error.
    if (!r.stream) return Status::error("stream_options is only allowed when stream is true");
    if (!so->is_object()) return field_error("stream_options", "an object");
    DUET_ASSIGN(usage, get_bool(*so, "include_usage"));
    r.include_usage = usage.value_or(false);
  }
  DUET_ASSIGN(n, get_int(body, "n", 1, kI64Max));
  if (n && *n > 1)
    return Status::error("n > 1 is not supported: duet returns one choice per request");
  DUET_ASSIGN(best_of, get_int(body, "best_of", 1, 1));
  (void)best_of;

  // max_completion_tokens is the newer name; it wins when both are given.
  DUET_ASSIGN(max_tokens, get_int(body, "max_tokens", 1, limits.max_tokens_cap));
  DUET_ASSIGN(max_completion, get_int(body, "max_completion_tokens", 1, limits.max_tokens_cap));
  if (max_completion)
    r.max_tokens = max_completion;
  else if (max_tokens)
    r.max_tokens = max_tokens;
  DUET_ASSIGN(min_tokens, get_int(body, "min_tokens", 0, limits.max_tokens_cap));
  r.min_tokens = min_tokens.value_or(0);
  if (r.max_tokens && r.min_tokens > *r.max_tokens)
    return Status::error("min_tokens must not exceed max_tokens");

  SamplingParams& s = r.sampling;
  DUET_TRY(read_float(body, "temperature", s.temperature, &r.has_temperature));
  DUET_TRY(read_float(body, "top_p", s.top_p, &r.has_top_p));
  DUET_TRY(read_float(body, "min_p", s.min_p, &r.has_min_p));
  DUET_TRY(read_float(body, "presence_penalty", s.presence_penalty));
  DUET_TRY(read_float(body, "frequency_penalty", s.frequency_penalty));
  DUET_TRY(read_float(body, "repetition_penalty", s.repetition_penalty));
  // vLLM spells "off" as -1 as well as 0.
  DUET_ASSIGN(top_k, get_int(body, "top_k", -1, 1 << 30));
  if (top_k) {
    s.top_k = *top_k < 0 ? 0 : static_cast<int>(*top_k);
    r.has_top_k = true;
  }
  DUET_ASSIGN(seed, get_int(body, "seed", kI64Min, kI64Max));
  if (seed) s.seed = static_cast<uint64_t>(*seed);
  DUET_TRY(read_logit_bias(body, limits, s));

  DUET_TRY(read_stop(find_field(body, "stop"), r.stop));
  if (const Json* ids = find_field(body, "stop_token_ids")) {
    if (!ids->is_array()) return field_error("stop_token_ids", "an array of token ids");
    if (ids->size() > limits.max_stop_token_ids)
      return Status::error("stop_token_ids has more than " +
                           std::to_string(limits.max_stop_token_ids) + " entries");
    for (const Json& id : *ids) {
      DUET_ASSIGN(v, as_int(id, "stop_token_ids entries", 0, std::numeric_limits<int32_t>::max()));
      r.stop_token_ids.push_back(v);
    }
  }
  DUET_ASSIGN(ignore_eos, get_bool(body, "ignore_eos"));
  r.ignore_eos = ignore_eos.value_or(false);
  DUET_ASSIGN(skip_special, get_bool(body, "skip_special_tokens"));
  r.skip_special_tokens = skip_special.value_or(true);
  DUET_TRY(read_reasoning_format(body, r));
  DUET_TRY(request_detail::read_mode_fields(body, r.mode_fields));

  DUET_TRY(request_detail::read_output_format(body, r.output_format));
  if (const Json* kw = find_field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) return field_error("chat_template_kwargs", "an object");
    r.template_kwargs = *kw;
  }
  return Status::ok();
}

}  // namespace

Result<ApiRequest> parse_openai_chat(const Json& body, const RequestLimits& limits) {
  ApiRequest r;
  r.dialect = Dialect::kOpenAI;
  r.endpoint = Endpoint::kChat;
  const Json* messages = find_field(body, "messages");
  if (messages == nullptr) return Status::error("messages is required");
  DUET_TRY(request_detail::normalize_messages(*messages, limits, Dialect::kOpenAI, r.messages));
  if (r.messages.empty()) return Status::error("messages must not be empty");
  DUET_TRY(read_common(body, limits, r));

  DUET_ASSIGN(logprobs, get_bool(body, "logprobs"));
  DUET_ASSIGN(top_logprobs, get_int(body, "top_logprobs", 0, 20));
  r.sampling.logprobs = logprobs.value_or(false) || top_logprobs.value_or(0) > 0;
  r.sampling.top_logprobs = static_cast<int>(top_logprobs.value_or(0));

  DUET_TRY(read_tools(body, limits, r.tools));
  r.parse_tool_calls = r.tools.is_array();
  DUET_TRY(request_detail::read_tool_choice(body, r));

  DUET_ASSIGN(cont, get_bool(body, "continue_final_message"));
  DUET_ASSIGN(add_gen, get_bool(body, "add_generation_prompt"));
  r.continue_final_message = cont.value_or(false);
  if (r.continue_final_message) {
    if (r.messages.back()["role"] != "assistant")
      return Status::error("continue_final_message needs the last message to be an assistant's");
    if (add_gen.value_or(false))
      return Status::error("continue_final_message and add_generation_prompt exclude each other");
  }
  return r;
}

Result<ApiRequest> parse_openai_completion(const Json& body, const RequestLimits& limits) {
  ApiRequest r;
  r.dialect = Dialect::kOpenAI;
  r.endpoint = Endpoint::kCompletion;
  r.raw_prompt = true;
  r.max_tokens = 16;  // the completions API's documented default (vLLM keeps it)
  const Json* p = find_field(body, "prompt");
  if (p == nullptr) return Status::error("prompt is required");
  auto read_ids = [&](const Json& arr) -> Status {
    std::vector<int64_t> ids;
    for (const Json& v : arr) {
      DUET_ASSIGN(id, as_int(v, "prompt token ids", 0, std::numeric_limits<int32_t>::max()));
      ids.push_back(id);
    }
    r.prompt_ids = std::move(ids);
    return Status::ok();
  };
  if (p->is_string()) {
    r.prompt = p->get<std::string>();
  } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
    DUET_TRY(read_ids(*p));
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    r.prompt = (*p)[0].get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_array()) {
    DUET_TRY(read_ids((*p)[0]));
  } else if (p->is_array() && p->size() > 1) {
    return Status::error("prompt: one prompt per request (batches are not supported)");
  } else {
    return field_error("prompt",
                       "a string, an array of token ids, or a one-element array of either");
  }
  if (r.prompt.empty() && (!r.prompt_ids || r.prompt_ids->empty()))
    return Status::error("prompt must not be empty");
  DUET_TRY(read_common(body, limits, r));
  DUET_ASSIGN(logprobs, get_int(body, "logprobs", 0, 20));
  if (logprobs) {
    r.completion_logprobs = static_cast<int>(*logprobs);
    r.sampling.logprobs = true;
    r.sampling.top_logprobs = static_cast<int>(*logprobs);
  }
  DUET_ASSIGN(echo, get_bool(body, "echo"));
  if (echo.value_or(false)) return Status::error("echo is not supported");
  DUET_ASSIGN(suffix, get_string(body, "suffix"));
  if (suffix && !suffix->empty()) return Status::error("suffix is not supported");
  r.parse_tool_calls = false;
  // A completion is text: a think block the model writes stays in it, as written.
  if (r.reasoning == ReasoningOutput::kSeparate) r.reasoning = ReasoningOutput::kRaw;
  return r;
}

}  // namespace duet
