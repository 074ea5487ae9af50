// One internal request model for both dialects. The OpenAI and Ollama adapters
// (openai_request.cc, ollama_request.cc) validate a body into an ApiRequest; the prompt
// builder turns it into the engine's GenerateRequest; the response formatters turn the
// output back into the dialect's JSON. Nothing below this layer sees JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/errors.h"
#include "api/json_util.h"
#include "api/output_format.h"
#include "engine/sampling_params.h"
#include "text/mode/thinking_mode.h"

namespace duet {

enum class Endpoint {
  kChat,        // messages, rendered with the chat template
  kCompletion,  // a prompt: raw text (OpenAI /v1/completions, Ollama raw) or templated (Ollama)
};

// How reasoning reaches the client.
enum class ReasoningOutput {
  kSeparate,  // reasoning_content + reasoning (OpenAI), thinking (Ollama)
  kRaw,       // inline in the content as <think>…</think> (reasoning_format "raw" / "none")
  kDrop,      // not sent at all (include_reasoning: false)
};

struct ApiRequest {
  Dialect dialect = Dialect::kOpenAI;
  Endpoint endpoint = Endpoint::kChat;
  std::string model;  // as the client named it; "" when absent
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage

  // The prompt.
  Json messages = Json::array();        // chat: normalised for the template (content is a string)
  bool continue_final_message = false;  // the last message is an assistant prefill
  std::string prompt;                   // completion text
  std::optional<std::vector<int64_t>> prompt_ids;  // OpenAI completions given token ids
  std::string system;                              // Ollama generate's system prompt
  bool raw_prompt = false;                // no chat template (OpenAI completions, Ollama raw)
  Json tools;                             // null or an array of {"type":"function",...}
  Json template_kwargs = Json::object();  // chat_template_kwargs

  // Sampling and limits. Fields the client left out get the mode's defaults later.
  SamplingParams sampling;
  bool has_temperature = false, has_top_p = false, has_top_k = false, has_min_p = false;
  std::optional<int64_t> max_tokens;  // unset: as many as the context allows
  int64_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<int64_t> stop_token_ids;  // checked against the vocabulary later
  std::vector<std::string> stop;        // stop strings (on the answer's text)

  // Output.
  bool skip_special_tokens = true;
  ReasoningOutput reasoning = ReasoningOutput::kSeparate;
  bool parse_tool_calls = true;  // false with tool_choice "none" or without tools
  int completion_logprobs = -1;  // OpenAI completions' integer logprobs (-1: off)
  OutputFormat output_format;    // structured output: the grammar the answer must follow

  // Ollama lifecycle requests: no prompt at all loads the model ("load"), or with
  // keep_alive 0 unloads it ("unload"). duet keeps its one model loaded; it answers alike.
  bool load_only = false;
  bool unload = false;

  // The thinking mode: what the body's mode fields say (read by the parser), and the decision
  // made from them and the messages (decide_mode).
  ModeFields mode_fields;
  ThinkingDecision mode;
};

// Limits on what one request may carry (beyond the body size): a 10,000-tool or
// 100,000-message body is refused with a 400 rather than rendered.
struct RequestLimits {
  size_t max_messages = 4096;
  size_t max_tools = 128;
  size_t max_logit_bias = 1024;
  size_t max_stop_token_ids = 64;
  int64_t max_tokens_cap =
      1 << 30;  // larger max_tokens values are refused (then clamped to the context)
};

Result<ApiRequest> parse_openai_chat(const Json& body, const RequestLimits& limits = {});
Result<ApiRequest> parse_openai_completion(const Json& body, const RequestLimits& limits = {});
Result<ApiRequest> parse_ollama_chat(const Json& body, const RequestLimits& limits = {});
Result<ApiRequest> parse_ollama_generate(const Json& body, const RequestLimits& limits = {});

// Decides the request's thinking mode (request.mode) from its mode fields, its messages' soft
// switches and the server's default; a raw prompt (or a load-only request) gets the raw-prompt
// decision.
void decide_mode(ApiRequest& request, ThinkDefault server_default);

// A request's model names the served one: the same name, with or without a tag (":latest"),
// case-insensitively, or one of its mode-pinned names below (match_model_name). An empty
// request model means the served one.
bool model_name_matches(std::string_view requested, std::string_view served);

// Every model is also served as M-thinking and M-fast, which pin the thinking mode on and off
// as the guides' Modelfile tags do: the tag gets the suffix when the name has one other than
// "latest" (qwen3:14b -> qwen3:14b-thinking), the name otherwise (qwen3-demo ->
// qwen3-demo-fast).
struct ModelNameMatch {
  bool matches = false;
  std::optional<bool> thinking;  // pinned on (M-thinking) or off (M-fast); none for M itself
};
ModelNameMatch match_model_name(std::string_view requested, std::string_view served);
// The names the served model is listed under: M, M-thinking, M-fast.
std::vector<std::string> served_model_names(std::string_view served);
// Applies a match's pin to the request's mode fields (the reason names the model asked for).
void apply_model_pin(const ModelNameMatch& match, ApiRequest& request);

// Shared by the adapters (request_common.cc).
namespace request_detail {
// OpenAI-style messages → template messages (content as one string, tool_call arguments as
// given, reasoning / reasoning_content / thinking → reasoning_content).
Status normalize_messages(const Json& messages, const RequestLimits& limits, Dialect dialect,
                          Json& out);
Status read_tools(const Json& body, const RequestLimits& limits, Json& out);
// tool_choice ("none", "auto", "required" or {"type": "function", "function": {"name"}}) and
// parallel_tool_calls, after read_tools: "required" and a named function force the reply to be
// tool calls (OpenAI's fields; Ollama's API has none, so duet reads the same ones there).
Status read_tool_choice(const Json& body, ApiRequest& r);
Status read_stop(const Json* stop, std::vector<std::string>& out);
Status read_reasoning_format(const Json& body, ApiRequest& r);
// Every thinking-mode field (mode_fields.cc); each is validated even when another decides.
Status read_mode_fields(const Json& body, ModeFields& out);
}  // namespace request_detail

}  // namespace duet
