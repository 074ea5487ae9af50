#include "text/mode/thinking_mode.h"

#include <algorithm>
#include <utility>

#include "text/mode/auto_mode.h"

namespace duet {
namespace {

struct SoftSwitch {
  bool on;
  std::string where;  // "the latest user message", "the system message", ...
};

// The most recent /think or /no_think in the system and user turns.
std::optional<SoftSwitch> latest_soft_switch(const std::vector<ModeTurn>& turns, int latest_user) {
  std::optional<SoftSwitch> found;
  for (int i = 0; i < static_cast<int>(turns.size()); ++i) {
    const ModeTurn& t = turns[i];
    if (t.role != "user" && t.role != "system") continue;
    if (const auto on = find_soft_switch(t.text)) {
      std::string where = t.role != "user"   ? "the " + t.role + " message"
                          : i == latest_user ? "the latest user message"
                                             : "an earlier user message";
      found = SoftSwitch{*on, std::move(where)};
    }
  }
  return found;
}

std::string soft_switch_reason(const SoftSwitch& s) {
  return std::string("soft switch ") + (s.on ? "/think" : "/no_think") + " in " + s.where;
}

// What the classifier knows of the conversation around the latest user turn: the system
// prompt, and whether the turn before it reasoned. An assistant turn that came back with its
// reasoning says so itself; otherwise (most clients drop reasoning from the history they send)
// the user turn it answered is judged, in its own context, so that "prove X" → "why?" → "and
// then?" keeps reasoning all the way. Only a short follow-up looks back at all (the context
// changes nothing else), so a request usually costs one decision, and never more than
// kTurnsJudged.
AutoContext auto_context(const std::vector<ModeTurn>& turns, int latest_user, bool has_tools) {
  constexpr size_t kTurnsJudged = 8;
  AutoContext c{.has_tools = has_tools};
  for (const ModeTurn& t : turns)
    if (t.role == "system") {
      c.system_text = t.text;
      break;
    }
  std::vector<int> users;
  for (int i = 0; i <= latest_user; ++i)
    if (turns[i].role == "user") users.push_back(i);
  const size_t first = users.size() > kTurnsJudged + 1 ? users.size() - kTurnsJudged - 1 : 0;
  // An assistant turn between users[k-1] and users[k] that carried its reasoning.
  const auto reasoned_before = [&](size_t k) {
    for (int i = users[k] - 1; i >= 0 && turns[i].role != "user"; --i)
      if (turns[i].role == "assistant" && turns[i].reasoned) return true;
    return false;
  };
  // Whether the turn before users[k] reasoned.
  const auto follows = [&](const auto& self, size_t k) -> bool {
    if (reasoned_before(k)) return true;
    if (k == first) return false;
    const std::string& previous = turns[users[k - 1]].text;
    AutoContext earlier = c;
    earlier.follows_reasoning = is_short_follow_up(previous) && self(self, k - 1);
    return classify_for_thinking(previous, earlier).think;
  };
  if (!users.empty() && is_short_follow_up(turns[latest_user].text))
    c.follows_reasoning = follows(follows, users.size() - 1);
  return c;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::optional<bool> find_soft_switch(std::string_view text) {
  std::optional<bool> last;
  for (size_t pos = text.find('/'); pos != std::string_view::npos; pos = text.find('/', pos + 1)) {
    if (pos > 0 && (is_word_char(text[pos - 1]) || text[pos - 1] == '/')) continue;
    std::string_view rest = text.substr(pos);
    std::optional<bool> which;
    size_t len = 0;
    if (rest.starts_with("/think")) {
      which = true;
      len = 6;
    } else if (rest.starts_with("/no_think")) {
      which = false;
      len = 9;
    }
    if (!which) continue;
    if (len < rest.size() && (is_word_char(rest[len]) || rest[len] == '/' || rest[len] == '-'))
      continue;
    last = which;
  }
  return last;
}

Result<ThinkDefault> parse_think_default(std::string_view text) {
  if (text == "on") return ThinkDefault::kOn;
  if (text == "off") return ThinkDefault::kOff;
  if (text == "auto") return ThinkDefault::kAuto;
  return Status::error("--think must be on, off or auto");
}

std::string_view thinking_source_name(ThinkingSource source) {
  switch (source) {
    case ThinkingSource::kChatTemplateKwargs:
      return "chat_template_kwargs";
    case ThinkingSource::kThink:
      return "think";
    case ThinkingSource::kEnableThinking:
      return "enable_thinking";
    case ThinkingSource::kMode:
      return "mode";
    case ThinkingSource::kOptionsThinkingMode:
      return "options.thinking_mode";
    case ThinkingSource::kReasoningEffort:
      return "reasoning_effort";
    case ThinkingSource::kSoftSwitch:
      return "soft_switch";
    case ThinkingSource::kModelTag:
      return "model_tag";
    case ThinkingSource::kServerDefault:
      return "server_default";
    case ThinkingSource::kAuto:
      return "auto";
    case ThinkingSource::kRawPrompt:
      return "raw_prompt";
  }
  return "unknown";
}

ThinkingDecision decide_thinking(const ModeFields& request, const std::vector<ModeTurn>& turns,
                                 bool has_tools, ThinkDefault server_default) {
  int latest_user = -1;
  for (int i = 0; i < static_cast<int>(turns.size()); ++i)
    if (turns[i].role == "user") latest_user = i;
  const std::optional<SoftSwitch> soft_switch = latest_soft_switch(turns, latest_user);

  ThinkingDecision d;
  const auto decide_on = [&](ThinkingSource source, std::string reason, std::optional<int> level) {
    d.enabled = true;
    d.source = source;
    d.reason = std::move(reason);
    d.budget = request.explicit_budget ? request.explicit_budget : level;
  };
  const auto decide_off = [&](ThinkingSource source, std::string reason) {
    d.enabled = false;
    d.source = source;
    d.reason = std::move(reason);
  };
  const auto decide_soft = [&](const SoftSwitch& s, const std::string& suffix) {
    if (s.on)
      decide_on(ThinkingSource::kSoftSwitch, soft_switch_reason(s) + suffix, {});
    else
      decide_off(ThinkingSource::kSoftSwitch, soft_switch_reason(s) + suffix);
  };
  // "auto": a soft switch is the user choosing, so it comes before the classifier.
  const auto decide_auto = [&](const std::string& requested_by) {
    const std::string suffix = requested_by.empty() ? "" : " (" + requested_by + ")";
    if (soft_switch) return decide_soft(*soft_switch, suffix);
    const std::string_view latest =
        latest_user >= 0 ? std::string_view(turns[latest_user].text) : std::string_view();
    const AutoDecision a =
        classify_for_thinking(latest, auto_context(turns, latest_user, has_tools));
    if (a.think)
      decide_on(ThinkingSource::kAuto, "auto: " + a.reason + suffix, {});
    else
      decide_off(ThinkingSource::kAuto, "auto: " + a.reason + suffix);
  };

  // The field of highest precedence (the enum lists the fields in that order).
  const auto first =
      std::min_element(request.fields.begin(), request.fields.end(),
                       [](const ModeField& a, const ModeField& b) { return a.source < b.source; });
  if (first != request.fields.end()) {
    switch (first->wish) {
      case ModeField::Wish::kOn:
        decide_on(first->source, first->reason, first->level_budget);
        break;
      case ModeField::Wish::kOff:
        decide_off(first->source, first->reason);
        d.hard_disabled = true;
        break;
      case ModeField::Wish::kAuto:
        decide_auto(first->reason);
        break;
    }
  } else if (soft_switch) {
    decide_soft(*soft_switch, "");
  } else if (request.model_pin) {
    if (*request.model_pin)
      decide_on(ThinkingSource::kModelTag, request.model_pin_reason, {});
    else
      decide_off(ThinkingSource::kModelTag, request.model_pin_reason);
  } else {
    switch (server_default) {
      case ThinkDefault::kOn:
        decide_on(ThinkingSource::kServerDefault, "server default: on", {});
        break;
      case ThinkDefault::kOff:
        decide_off(ThinkingSource::kServerDefault, "server default: off");
        break;
      case ThinkDefault::kAuto:
        decide_auto("");
        break;
    }
  }
  if (d.enabled && d.budget) d.reason += ", budget " + std::to_string(*d.budget);
  return d;
}

ThinkingDecision raw_prompt_decision() {
  ThinkingDecision d;
  d.source = ThinkingSource::kRawPrompt;
  d.reason = "raw prompt: no chat template";
  return d;
}

SamplingDefaults sampling_defaults(bool thinking) {
  if (thinking) return {.temperature = 0.6f, .top_p = 0.95f, .top_k = 20, .min_p = 0.0f};
  return {.temperature = 0.7f, .top_p = 0.8f, .top_k = 20, .min_p = 0.0f};
}

}  // namespace duet
