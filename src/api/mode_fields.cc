// The thinking-mode fields of a request body, read once for both dialects (every parser calls
// read_mode_fields), and the decision made from them and the request's messages. The rules
// themselves (precedence, soft switches, auto, budgets) are text/thinking_mode.h's.
#include <climits>

#include "api/request_model.h"

namespace duet {
namespace {

Result<std::optional<int>> parse_budget(const Json& request, const char* name) {
  const Json* v = find_field(request, name);
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

Result<std::optional<bool>> parse_bool(const Json* v, const char* name) {
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return Status::error(std::string(name) + " must be true or false");
  return std::optional<bool>(v->get<bool>());
}

ModeField on_off(bool on, ThinkingSource source, std::string name) {
  return {on ? ModeField::Wish::kOn : ModeField::Wish::kOff,
          source,
          name + "=" + (on ? "true" : "false"),
          {}};
}

// Ollama: true | false | "low" | "medium" | "high" | "max".
Result<std::optional<ModeField>> parse_think(const Json& request) {
  const Json* v = find_field(request, "think");
  if (v == nullptr) return std::optional<ModeField>();
  if (v->is_boolean())
    return std::optional<ModeField>(on_off(v->get<bool>(), ThinkingSource::kThink, "think"));
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
      return std::optional<ModeField>(
          ModeField{ModeField::Wish::kOn, ThinkingSource::kThink, "think=\"" + s + "\"", budget});
  }
  return Status::error(R"(think must be true, false, "low", "medium", "high" or "max")");
}

// mode and options.thinking_mode: "thinking" | "non_thinking" | "auto". Deployment guides
// also send options.thinking_mode as true / false, so that field takes booleans too.
Result<std::optional<ModeField>> parse_mode(const Json* v, ThinkingSource source, const char* name,
                                            bool takes_bool = false) {
  if (v == nullptr) return std::optional<ModeField>();
  if (takes_bool && v->is_boolean())
    return std::optional<ModeField>(on_off(v->get<bool>(), source, name));
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const std::string reason = std::string(name) + "=\"" + s + "\"";
    if (s == "thinking")
      return std::optional<ModeField>(ModeField{ModeField::Wish::kOn, source, reason, {}});
    if (s == "non_thinking")
      return std::optional<ModeField>(ModeField{ModeField::Wish::kOff, source, reason, {}});
    if (s == "auto")
      return std::optional<ModeField>(ModeField{ModeField::Wish::kAuto, source, reason, {}});
  }
  return Status::error(std::string(name) + (takes_bool ? " must be true, false, " : " must be ") +
                       R"("thinking", "non_thinking" or "auto")");
}

// OpenAI: "none" | "minimal" (off) | "low" | "medium" | "high".
Result<std::optional<ModeField>> parse_reasoning_effort(const Json& request) {
  const Json* v = find_field(request, "reasoning_effort");
  if (v == nullptr) return std::optional<ModeField>();
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const std::string reason = "reasoning_effort=\"" + s + "\"";
    const auto wish = [&](ModeField::Wish w, std::optional<int> budget) {
      return std::optional<ModeField>(
          ModeField{w, ThinkingSource::kReasoningEffort, reason, budget});
    };
    if (s == "none" || s == "minimal") return wish(ModeField::Wish::kOff, {});
    if (s == "low") return wish(ModeField::Wish::kOn, kThinkingBudgetLow);
    if (s == "medium") return wish(ModeField::Wish::kOn, kThinkingBudgetMedium);
    if (s == "high") return wish(ModeField::Wish::kOn, kThinkingBudgetHigh);
  }
  return Status::error(R"(reasoning_effort must be "none", "minimal", "low", "medium" or "high")");
}

// Every mode field of the request, in precedence order, each validated even when an earlier
// one wins: a malformed field is the client's mistake whichever field decides.
Status read_wishes(const Json& request, std::vector<ModeField>& wishes) {
  const auto add = [&](const Result<std::optional<ModeField>>& r) -> Status {
    if (!r.is_ok()) return r.status();
    if (r.value()) wishes.push_back(*r.value());
    return Status::ok();
  };
  const Json* kwargs = find_field(request, "chat_template_kwargs");
  if (kwargs != nullptr && !kwargs->is_object())
    return Status::error("chat_template_kwargs must be an object");
  const auto kw = parse_bool(kwargs ? find_field(*kwargs, "enable_thinking") : nullptr,
                             "chat_template_kwargs.enable_thinking");
  if (!kw.is_ok()) return kw.status();
  if (kw.value())
    wishes.push_back(on_off(*kw.value(), ThinkingSource::kChatTemplateKwargs,
                            "chat_template_kwargs.enable_thinking"));
  DUET_TRY(add(parse_think(request)));
  const auto enable = parse_bool(find_field(request, "enable_thinking"), "enable_thinking");
  if (!enable.is_ok()) return enable.status();
  if (enable.value())
    wishes.push_back(on_off(*enable.value(), ThinkingSource::kEnableThinking, "enable_thinking"));
  DUET_TRY(add(parse_mode(find_field(request, "mode"), ThinkingSource::kMode, "mode")));
  const Json* options = find_field(request, "options");
  if (options != nullptr && !options->is_object())
    return Status::error("options must be an object");
  DUET_TRY(add(parse_mode(options ? find_field(*options, "thinking_mode") : nullptr,
                          ThinkingSource::kOptionsThinkingMode, "options.thinking_mode",
                          /*takes_bool=*/true)));
  DUET_TRY(add(parse_reasoning_effort(request)));
  return Status::ok();
}

}  // namespace

namespace request_detail {

Status read_mode_fields(const Json& body, ModeFields& out) {
  auto budget_a = parse_budget(body, "thinking_budget");
  if (!budget_a.is_ok()) return budget_a.status();
  auto budget_b = parse_budget(body, "thinking_token_budget");
  if (!budget_b.is_ok()) return budget_b.status();
  if (budget_a.value() && budget_b.value() && *budget_a.value() != *budget_b.value())
    return Status::error("thinking_budget and thinking_token_budget disagree");
  out.explicit_budget = budget_a.value() ? budget_a.value() : budget_b.value();
  return read_wishes(body, out.fields);
}

}  // namespace request_detail

void decide_mode(ApiRequest& r, ThinkDefault server_default) {
  if (r.raw_prompt || r.load_only) {
    r.mode = raw_prompt_decision();
    return;
  }
  // The templated turns: chat messages, or Ollama generate's system prompt and prompt (which
  // the parser already laid out as messages).
  std::vector<ModeTurn> turns;
  for (const Json& m : r.messages) {
    const std::string& role = m.at("role").get_ref<const std::string&>();
    if (role == "assistant") {
      // Reasoning sent back (as reasoning_content, or inline in a think block) says that the
      // turn reasoned; auto mode keeps reasoning for a short follow-up to it.
      const Json* r = find_field(m, "reasoning_content");
      const Json* content = find_field(m, "content");
      const auto has_text = [](std::string_view t) {
        return t.find_first_not_of(" \t\r\n") != std::string_view::npos;
      };
      bool reasoned = r != nullptr && r->is_string() && has_text(r->get_ref<const std::string&>());
      if (content != nullptr && content->is_string()) {
        const std::string_view text = content->get_ref<const std::string&>();
        const size_t open = text.find("<think>");
        if (open != std::string_view::npos) {
          const size_t from = open + 7;
          const size_t close = text.find("</think>", from);
          reasoned |=
              has_text(text.substr(from, close == std::string_view::npos ? close : close - from));
        }
      }
      turns.push_back({role, "", reasoned});
      continue;
    }
    if (role != "user" && role != "system") continue;
    turns.push_back({role, m.at("content").get<std::string>()});
  }
  const bool has_tools = r.tools.is_array() && !r.tools.empty();
  r.mode = decide_thinking(r.mode_fields, turns, has_tools, server_default);
}

}  // namespace duet
