// Which reasoning mode a request runs in, how many reasoning tokens it may spend, and the
// sampling defaults that go with each mode.
//
// A request's mode is resolved once, from the first of these that is present:
//   1. chat_template_kwargs.enable_thinking           (vLLM, SGLang, llama.cpp)
//   2. think (Ollama), enable_thinking, mode, options.thinking_mode (a mode's name, or
//      true / false), reasoning_effort (OpenAI)
//   3. the soft switches /think and /no_think in the user and system (or developer) messages
//      (Qwen3's rule: the most recent one wins)
//   4. the server default (--think on|off|auto)
// "auto" — from a request field or from the default — looks at a soft switch first (an explicit
// /think is the user saying which) and otherwise asks the classifier in auto_mode.h.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace duet {

enum class ServerThinkingDefault { kOn, kOff, kAuto };

// "on" | "off" | "auto" (the --think flag).
Result<ServerThinkingDefault> parse_server_thinking_default(std::string_view text);

enum class ThinkingSource {
  kChatTemplateKwargs,   // chat_template_kwargs.enable_thinking
  kThink,                // Ollama's think
  kEnableThinking,       // top-level enable_thinking
  kMode,                 // mode
  kOptionsThinkingMode,  // options.thinking_mode
  kReasoningEffort,      // OpenAI's reasoning_effort
  kSoftSwitch,           // /think or /no_think in a message
  kServerDefault,        // --think on|off
  kAuto,                 // the classifier decided (auto asked for by a field or the default)
};

// The stable name of a source, for logs, metrics labels and the response ("mode":{...}).
std::string_view thinking_source_name(ThinkingSource source);

struct ThinkingDecision {
  bool enabled = false;
  ThinkingSource source = ThinkingSource::kServerDefault;
  std::string reason;         // e.g. "auto: math: equation"
  std::optional<int> budget;  // reasoning-token cap; absent = unlimited (or thinking off)
  // A request field turned thinking off. The prompt then ends with an empty think block, so a
  // /think in the messages cannot turn it back on (Qwen3 behaves the same way).
  bool hard_disabled = false;
};

// Reasoning-token budgets of the named levels (Ollama's think levels and OpenAI's
// reasoning_effort). "max" has none. An explicit thinking_budget / thinking_token_budget wins.
inline constexpr int kThinkingBudgetLow = 1024;
inline constexpr int kThinkingBudgetMedium = 4096;
inline constexpr int kThinkingBudgetHigh = 16384;

// Qwen's recipe for a reasoning budget: when the cap is reached the engine appends this text
// (which closes the think block) and lets the model go on to answer.
inline constexpr std::string_view kThinkingBudgetClosingText =
    "\n\nConsidering the limited time by the user, I have to give the solution based on the "
    "thinking directly now.\n</think>\n\n";

// Resolves the mode of a chat or generate request (OpenAI or Ollama body). Present fields with
// invalid values (think:"banana", mode:7, a negative or fractional budget, ...) are errors,
// whichever source wins; JSON null counts as absent. Messages are read for soft switches and
// for the classifier only; their shape is validated elsewhere, so odd entries are skipped.
Result<ThinkingDecision> resolve_thinking(const nlohmann::json& request,
                                          ServerThinkingDefault server_default);

// The last /think or /no_think in one message's text: true for /think, false for /no_think,
// nothing if neither occurs as a word of its own ("/thinking" and "a/think" do not count).
std::optional<bool> find_soft_switch(std::string_view text);

// Qwen3's advice per mode. Thinking must never sample greedily (it loops).
struct SamplingDefaults {
  float temperature;
  float top_p;
  int top_k;
  float min_p;
};
SamplingDefaults sampling_defaults(bool thinking);

// The sampling fields this layer has an opinion on; unset means "the request did not say".
struct SamplingParams {
  std::optional<float> temperature;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<int> top_k;
};

// Fills only the fields the request left unset with the mode's defaults.
void apply_sampling_defaults(SamplingParams& params, bool thinking);

}  // namespace duet
