// The thinking-mode decision as the API layer uses it. A thin wrapper over
// text/thinking_mode.h, kept in its own file because that header declares a
// duet::SamplingParams of its own (sampling defaults) that clashes with the engine's; only
// mode.cc includes it.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace duet {

enum class ThinkDefault { kOn, kOff, kAuto };

// "on" | "off" | "auto" (the --think flag).
Result<ThinkDefault> parse_think_default(std::string_view text);

struct ModeDecision {
  bool thinking = false;
  std::string source;         // "chat_template_kwargs", "think", "soft_switch", "auto", ...
  std::string reason;         // e.g. "auto: math: equation"
  std::optional<int> budget;  // reasoning-token cap; absent = none
  bool hard_disabled = false;
};

// Resolves the mode of an OpenAI or Ollama request body (see text/thinking_mode.h for the
// precedence). Invalid mode fields are errors.
Result<ModeDecision> decide_mode(const nlohmann::ordered_json& request,
                                 ThinkDefault server_default);

// Qwen3's per-mode sampling advice (temperature / top_p / top_k / min_p).
struct ModeSampling {
  float temperature;
  float top_p;
  int top_k;
  float min_p;
};
ModeSampling mode_sampling_defaults(bool thinking);

// The text appended when a thinking budget runs out (it closes the think block).
std::string_view budget_closing_text();

}  // namespace duet
