#include "api/mode.h"

#include <nlohmann/json.hpp>

#include "text/thinking_mode.h"

namespace duet {

Result<ThinkDefault> parse_think_default(std::string_view text) {
  auto d = parse_server_thinking_default(text);
  if (!d) return d.status();
  switch (*d) {
    case ServerThinkingDefault::kOn:
      return ThinkDefault::kOn;
    case ServerThinkingDefault::kOff:
      return ThinkDefault::kOff;
    case ServerThinkingDefault::kAuto:
      return ThinkDefault::kAuto;
  }
  return ThinkDefault::kAuto;
}

Result<ModeDecision> decide_mode(const nlohmann::ordered_json& request,
                                 ThinkDefault server_default) {
  const ServerThinkingDefault d = server_default == ThinkDefault::kOn ? ServerThinkingDefault::kOn
                                  : server_default == ThinkDefault::kOff
                                      ? ServerThinkingDefault::kOff
                                      : ServerThinkingDefault::kAuto;
  auto r = resolve_thinking(nlohmann::json(request), d);
  if (!r) return r.status();
  ModeDecision m;
  m.thinking = r->enabled;
  m.source = std::string(thinking_source_name(r->source));
  m.reason = r->reason;
  m.budget = r->budget;
  m.hard_disabled = r->hard_disabled;
  return m;
}

ModeSampling mode_sampling_defaults(bool thinking) {
  const SamplingDefaults d = sampling_defaults(thinking);
  return {d.temperature, d.top_p, d.top_k, d.min_p};
}

std::string_view budget_closing_text() { return kThinkingBudgetClosingText; }

}  // namespace duet
