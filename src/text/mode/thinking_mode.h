// Which reasoning mode a request runs in and how many reasoning tokens it may spend: the policy,
// with no JSON. The API adapters read the request's mode fields into ModeFields
// (api/mode_fields.cc); decide_thinking applies the rules below.
//
// A request's mode is decided once, from the first of these that is present:
//   1. chat_template_kwargs.enable_thinking           (vLLM, SGLang, llama.cpp)
//   2. think (Ollama), enable_thinking, mode, options.thinking_mode (a mode's name, or
//      true / false), reasoning_effort (OpenAI)
//   3. the soft switches /think and /no_think in the user and system messages (Qwen3's rule:
//      the most recent one wins)
//   4. the server default (--think on|off|auto)
// "auto" — from a request field or from the default — looks at a soft switch first (an explicit
// /think is the user saying which) and otherwise asks the classifier in auto_mode.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace duet {

// The server's default (--think).
enum class ThinkDefault { kOn, kOff, kAuto };

// "on" | "off" | "auto".
Result<ThinkDefault> parse_think_default(std::string_view text);

// Where a decision came from. The request fields are listed in precedence order: when several
// are present, the one listed first decides.
enum class ThinkingSource {
  kChatTemplateKwargs,   // chat_template_kwargs.enable_thinking
  kThink,                // Ollama's think
  kEnableThinking,       // top-level enable_thinking
  kMode,                 // mode
  kOptionsThinkingMode,  // options.thinking_mode
  kReasoningEffort,      // OpenAI's reasoning_effort
  kSoftSwitch,           // /think or /no_think in a message
  kModelTag,             // the model asked for by a mode-pinned name (M-thinking, M-fast)
  kServerDefault,        // --think on|off
  kAuto,                 // the classifier decided (auto asked for by a field or the default)
  kRawPrompt,            // no chat template: the prompt is the mode, nothing is decided
};

// The stable name of a source, for logs, metrics labels and the response ("mode":{...}).
std::string_view thinking_source_name(ThinkingSource source);

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

// What one present mode field asks for.
struct ModeField {
  enum class Wish { kOn, kOff, kAuto };
  Wish wish = Wish::kAuto;
  ThinkingSource source = ThinkingSource::kMode;
  std::string reason;               // e.g. "think=\"low\"", "enable_thinking=false"
  std::optional<int> level_budget;  // from a named level ("low", "high", ...)
};

// A turn, as the soft switches and the classifier read it: system and user turns by their
// text; an assistant turn by whether it reasoned (a follow-up to a reasoning turn keeps
// reasoning). Other roles are never read.
struct ModeTurn {
  std::string role;  // "system", "user" or "assistant"
  std::string text;
  bool reasoned = false;  // an assistant turn that came back with its reasoning
};

// Everything a request says about its mode, read by the API adapter.
struct ModeFields {
  std::vector<ModeField> fields;       // every present mode field, in any order
  std::optional<int> explicit_budget;  // thinking_budget / thinking_token_budget
  // The model was asked for as M-thinking (true) or M-fast (false): in place of the server's
  // default, below the fields and the soft switches (as a Modelfile's setting would be).
  std::optional<bool> model_pin;
  std::string model_pin_reason;  // e.g. "model qwen3:14b-fast"
};

struct ThinkingDecision {
  bool enabled = false;
  ThinkingSource source = ThinkingSource::kServerDefault;
  std::string reason;         // e.g. "auto: math: equation"
  std::optional<int> budget;  // reasoning-token cap; absent = unlimited (or thinking off)
  // A request field turned thinking off. The prompt then ends with an empty think block, so a
  // /think in the messages cannot turn it back on (Qwen3 behaves the same way).
  bool hard_disabled = false;
};

// The decision for a templated request: its fields, then its turns' soft switches, then the
// model name's pin, then the server default; "auto" asks the classifier about the latest user turn
// (`has_tools`: the request offers tools, which lowers its bar).
ThinkingDecision decide_thinking(const ModeFields& request, const std::vector<ModeTurn>& turns,
                                 bool has_tools, ThinkDefault server_default);

// The decision for a raw prompt (no template): off, and said to be the prompt's.
ThinkingDecision raw_prompt_decision();

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

}  // namespace duet
