#include "text/thinking_mode.h"

#include <climits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "text/auto_mode.h"

namespace duet {
namespace {

using nlohmann::json;

enum class Wish { kOn, kOff, kAuto };

// What one request field asks for.
struct FieldWish {
  Wish wish;
  ThinkingSource source;
  std::string reason;               // e.g. "think=\"low\""
  std::optional<int> level_budget;  // from a named level
};

// A present field: not missing and not null (clients send null for "unset").
const json* field(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::optional<int>> parse_budget(const json& request, const char* name) {
  const json* v = field(request, name);
  if (v == nullptr) return std::optional<int>();
  if (!v->is_number_integer()) return Status::error(std::string(name) + " must be an integer");
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(INT_MAX))
      return Status::error(std::string(name) + " is too large");
    return std::optional<int>(static_cast<int>(v->get<uint64_t>()));
  }
  const int64_t n = v->get<int64_t>();
  if (n < 0) return Status::error(std::string(name) + " must not be negative");
  if (n > INT_MAX) return Status::error(std::string(name) + " is too large");
  return std::optional<int>(static_cast<int>(n));
}

Result<std::optional<bool>> parse_bool(const json* v, const char* name) {
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return Status::error(std::string(name) + " must be true or false");
  return std::optional<bool>(v->get<bool>());
}

FieldWish on_off(bool on, ThinkingSource source, std::string name) {
  return {on ? Wish::kOn : Wish::kOff, source, name + "=" + (on ? "true" : "false"), {}};
}

// Ollama: true | false | "low" | "medium" | "high" | "max".
Result<std::optional<FieldWish>> parse_think(const json& request) {
  const json* v = field(request, "think");
  if (v == nullptr) return std::optional<FieldWish>();
  if (v->is_boolean())
    return std::optional<FieldWish>(on_off(v->get<bool>(), ThinkingSource::kThink, "think"));
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    std::optional<int> budget;
    if (s == "low")
      budget = kThinkingBudgetLow;
    else if (s == "medium")
      budget = kThinkingBudgetMedium;
    else if (s == "high")
      budget = kThinkingBudgetHigh;
    if (budget || s == "max")
      return std::optional<FieldWish>(
          FieldWish{Wish::kOn, ThinkingSource::kThink, "think=\"" + s + "\"", budget});
  }
  return Status::error(R"(think must be true, false, "low", "medium", "high" or "max")");
}

// mode and options.thinking_mode: "thinking" | "non_thinking" | "auto". Deployment guides
// also send options.thinking_mode as true / false, so that field takes booleans too.
Result<std::optional<FieldWish>> parse_mode(const json* v, ThinkingSource source, const char* name,
                                            bool takes_bool = false) {
  if (v == nullptr) return std::optional<FieldWish>();
  if (takes_bool && v->is_boolean())
    return std::optional<FieldWish>(on_off(v->get<bool>(), source, name));
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const std::string reason = std::string(name) + "=\"" + s + "\"";
    if (s == "thinking") return std::optional<FieldWish>(FieldWish{Wish::kOn, source, reason, {}});
    if (s == "non_thinking")
      return std::optional<FieldWish>(FieldWish{Wish::kOff, source, reason, {}});
    if (s == "auto") return std::optional<FieldWish>(FieldWish{Wish::kAuto, source, reason, {}});
  }
  return Status::error(std::string(name) + (takes_bool ? " must be true, false, " : " must be ") +
                       R"("thinking", "non_thinking" or "auto")");
}

// OpenAI: "none" | "minimal" (off) | "low" | "medium" | "high".
Result<std::optional<FieldWish>> parse_reasoning_effort(const json& request) {
  const json* v = field(request, "reasoning_effort");
  if (v == nullptr) return std::optional<FieldWish>();
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const std::string reason = "reasoning_effort=\"" + s + "\"";
    const auto wish = [&](Wish w, std::optional<int> budget) {
      return std::optional<FieldWish>(
          FieldWish{w, ThinkingSource::kReasoningEffort, reason, budget});
    };
    if (s == "none" || s == "minimal") return wish(Wish::kOff, {});
    if (s == "low") return wish(Wish::kOn, kThinkingBudgetLow);
    if (s == "medium") return wish(Wish::kOn, kThinkingBudgetMedium);
    if (s == "high") return wish(Wish::kOn, kThinkingBudgetHigh);
  }
  return Status::error(R"(reasoning_effort must be "none", "minimal", "low", "medium" or "high")");
}

// Every mode field of the request, in precedence order, each validated even when an earlier
// one wins: a malformed field is the client's mistake whichever field decides.
Result<std::vector<FieldWish>> parse_wishes(const json& request) {
  std::vector<FieldWish> wishes;
  const auto add = [&](const Result<std::optional<FieldWish>>& r) -> Status {
    if (!r.is_ok()) return r.status();
    if (r.value()) wishes.push_back(*r.value());
    return Status::ok();
  };
  const json* kwargs = field(request, "chat_template_kwargs");
  if (kwargs != nullptr && !kwargs->is_object())
    return Status::error("chat_template_kwargs must be an object");
  const auto kw = parse_bool(kwargs ? field(*kwargs, "enable_thinking") : nullptr,
                             "chat_template_kwargs.enable_thinking");
  if (!kw.is_ok()) return kw.status();
  if (kw.value())
    wishes.push_back(on_off(*kw.value(), ThinkingSource::kChatTemplateKwargs,
                            "chat_template_kwargs.enable_thinking"));
  DUET_TRY(add(parse_think(request)));
  const auto enable = parse_bool(field(request, "enable_thinking"), "enable_thinking");
  if (!enable.is_ok()) return enable.status();
  if (enable.value())
    wishes.push_back(on_off(*enable.value(), ThinkingSource::kEnableThinking, "enable_thinking"));
  DUET_TRY(add(parse_mode(field(request, "mode"), ThinkingSource::kMode, "mode")));
  const json* options = field(request, "options");
  if (options != nullptr && !options->is_object())
    return Status::error("options must be an object");
  DUET_TRY(add(parse_mode(options ? field(*options, "thinking_mode") : nullptr,
                          ThinkingSource::kOptionsThinkingMode, "options.thinking_mode",
                          /*takes_bool=*/true)));
  DUET_TRY(add(parse_reasoning_effort(request)));
  return wishes;
}

// The text of a message's content: a string, or the text parts of an array of parts.
std::string content_text(const json& message) {
  const json* content = field(message, "content");
  if (content == nullptr) return {};
  if (content->is_string()) return content->get<std::string>();
  std::string text;
  if (content->is_array()) {
    for (const json& part : *content) {
      const json* t = field(part, "text");
      if (t == nullptr || !t->is_string()) continue;
      const json* type = field(part, "type");
      if (type != nullptr && (!type->is_string() || type->get_ref<const std::string&>() != "text"))
        continue;
      if (!text.empty()) text += '\n';
      text += t->get_ref<const std::string&>();
    }
  }
  return text;
}

struct SoftSwitch {
  bool on;
  std::string where;  // "the latest user message", "the system message", ...
};

struct Conversation {
  std::optional<SoftSwitch> soft_switch;  // the most recent /think or /no_think
  std::string latest_user_text;
  bool has_tools = false;
};

// Reads what the mode needs from the messages (chat) or system + prompt (generate).
Conversation read_conversation(const json& request) {
  Conversation c;
  struct Turn {
    std::string role;
    std::string text;
  };
  std::vector<Turn> turns;
  if (const json* messages = field(request, "messages"); messages && messages->is_array()) {
    for (const json& m : *messages) {
      const json* role = field(m, "role");
      if (role == nullptr || !role->is_string()) continue;
      turns.push_back({role->get<std::string>(), content_text(m)});
    }
  } else {
    if (const json* system = field(request, "system"); system && system->is_string())
      turns.push_back({"system", system->get<std::string>()});
    if (const json* prompt = field(request, "prompt"); prompt && prompt->is_string())
      turns.push_back({"user", prompt->get<std::string>()});
  }
  int latest_user = -1;
  for (int i = 0; i < static_cast<int>(turns.size()); ++i) {
    if (turns[i].role == "user") latest_user = i;
  }
  if (latest_user >= 0) c.latest_user_text = turns[latest_user].text;
  for (int i = 0; i < static_cast<int>(turns.size()); ++i) {
    const Turn& t = turns[i];
    // "developer" is OpenAI's newer name for the system turn.
    if (t.role != "user" && t.role != "system" && t.role != "developer") continue;
    if (const auto on = find_soft_switch(t.text)) {
      std::string where = t.role != "user"   ? "the " + t.role + " message"
                          : i == latest_user ? "the latest user message"
                                             : "an earlier user message";
      c.soft_switch = SoftSwitch{*on, std::move(where)};
    }
  }
  if (const json* tools = field(request, "tools"); tools && tools->is_array())
    c.has_tools = !tools->empty();
  return c;
}

std::string soft_switch_reason(const SoftSwitch& s) {
  return std::string("soft switch ") + (s.on ? "/think" : "/no_think") + " in " + s.where;
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

Result<ServerThinkingDefault> parse_server_thinking_default(std::string_view text) {
  if (text == "on") return ServerThinkingDefault::kOn;
  if (text == "off") return ServerThinkingDefault::kOff;
  if (text == "auto") return ServerThinkingDefault::kAuto;
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
    case ThinkingSource::kServerDefault:
      return "server_default";
    case ThinkingSource::kAuto:
      return "auto";
  }
  return "unknown";
}

Result<ThinkingDecision> resolve_thinking(const json& request,
                                          ServerThinkingDefault server_default) {
  if (!request.is_object()) return Status::error("the request must be a JSON object");
  auto budget_a = parse_budget(request, "thinking_budget");
  if (!budget_a.is_ok()) return budget_a.status();
  auto budget_b = parse_budget(request, "thinking_token_budget");
  if (!budget_b.is_ok()) return budget_b.status();
  if (budget_a.value() && budget_b.value() && *budget_a.value() != *budget_b.value())
    return Status::error("thinking_budget and thinking_token_budget disagree");
  const std::optional<int> explicit_budget = budget_a.value() ? budget_a.value() : budget_b.value();
  auto wishes = parse_wishes(request);
  if (!wishes.is_ok()) return wishes.status();
  const Conversation conversation = read_conversation(request);

  ThinkingDecision d;
  const auto decide_on = [&](ThinkingSource source, std::string reason, std::optional<int> level) {
    d.enabled = true;
    d.source = source;
    d.reason = std::move(reason);
    d.budget = explicit_budget ? explicit_budget : level;
  };
  const auto decide_off = [&](ThinkingSource source, std::string reason) {
    d.enabled = false;
    d.source = source;
    d.reason = std::move(reason);
  };
  // "auto": a soft switch is the user choosing, so it comes before the classifier.
  const auto decide_auto = [&](const std::string& requested_by) {
    const std::string suffix = requested_by.empty() ? "" : " (" + requested_by + ")";
    if (const auto& s = conversation.soft_switch) {
      if (s->on)
        decide_on(ThinkingSource::kSoftSwitch, soft_switch_reason(*s) + suffix, {});
      else
        decide_off(ThinkingSource::kSoftSwitch, soft_switch_reason(*s) + suffix);
      return;
    }
    const AutoDecision a = classify_for_thinking(conversation.latest_user_text,
                                                 AutoContext{.has_tools = conversation.has_tools});
    if (a.think)
      decide_on(ThinkingSource::kAuto, "auto: " + a.reason + suffix, {});
    else
      decide_off(ThinkingSource::kAuto, "auto: " + a.reason + suffix);
  };

  if (!wishes.value().empty()) {
    const FieldWish& w = wishes.value().front();
    switch (w.wish) {
      case Wish::kOn:
        decide_on(w.source, w.reason, w.level_budget);
        break;
      case Wish::kOff:
        decide_off(w.source, w.reason);
        d.hard_disabled = true;
        break;
      case Wish::kAuto:
        decide_auto(w.reason);
        break;
    }
  } else if (const auto& s = conversation.soft_switch) {
    if (s->on)
      decide_on(ThinkingSource::kSoftSwitch, soft_switch_reason(*s), {});
    else
      decide_off(ThinkingSource::kSoftSwitch, soft_switch_reason(*s));
  } else {
    switch (server_default) {
      case ServerThinkingDefault::kOn:
        decide_on(ThinkingSource::kServerDefault, "server default: on", {});
        break;
      case ServerThinkingDefault::kOff:
        decide_off(ThinkingSource::kServerDefault, "server default: off");
        break;
      case ServerThinkingDefault::kAuto:
        decide_auto("");
        break;
    }
  }
  if (d.enabled && d.budget) d.reason += ", budget " + std::to_string(*d.budget);
  return d;
}

SamplingDefaults sampling_defaults(bool thinking) {
  if (thinking) return {.temperature = 0.6f, .top_p = 0.95f, .top_k = 20, .min_p = 0.0f};
  return {.temperature = 0.7f, .top_p = 0.8f, .top_k = 20, .min_p = 0.0f};
}

void apply_sampling_defaults(SamplingParams& params, bool thinking) {
  const SamplingDefaults d = sampling_defaults(thinking);
  if (!params.temperature) params.temperature = d.temperature;
  if (!params.top_p) params.top_p = d.top_p;
  if (!params.top_k) params.top_k = d.top_k;
  if (!params.min_p) params.min_p = d.min_p;
}

}  // namespace duet
