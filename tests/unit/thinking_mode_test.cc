// Thinking-mode decisions as a request gets them: the API adapters read the mode fields
// (api/mode_fields.cc) and decide_mode applies the policy (text/thinking_mode.h) — precedence,
// levels and budgets, soft switches, auto, bad values — and the per-mode sampling defaults.
#include "text/mode/thinking_mode.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/request_model.h"

namespace duet {
namespace {

using nlohmann::json;
using Src = ThinkingSource;
constexpr auto kOn = ThinkDefault::kOn;
constexpr auto kOff = ThinkDefault::kOff;
constexpr auto kAuto = ThinkDefault::kAuto;

json chat(const std::string& user_text) {
  return {{"messages", json::array({{{"role", "user"}, {"content", user_text}}})}};
}

// A chat body through the OpenAI parser (which reads every dialect's mode fields); a body with
// a prompt through Ollama's generate parser.
Result<ApiRequest> parse(const json& request) {
  const Json body = Json::parse(request.dump());
  return request.contains("prompt") ? parse_ollama_generate(body) : parse_openai_chat(body);
}

ThinkingDecision resolve_ok(const json& request, ThinkDefault def = kOn) {
  auto r = parse(request);
  EXPECT_TRUE(r.is_ok()) << r.message() << " for " << request.dump();
  if (!r.is_ok()) return ThinkingDecision{};
  decide_mode(*r, def);
  return r->mode;
}

std::string resolve_error(const json& request) {
  auto r = parse(request);
  EXPECT_FALSE(r.is_ok()) << "accepted " << request.dump();
  return r.message();
}

TEST(ThinkingMode, ServerDefaultWhenNothingSaid) {
  const json req = chat("hello");
  ThinkingDecision d = resolve_ok(req, kOn);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kServerDefault);
  EXPECT_EQ(d.reason, "server default: on");
  EXPECT_FALSE(d.budget);
  EXPECT_FALSE(d.hard_disabled);
  d = resolve_ok(req, kOff);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.source, Src::kServerDefault);
  EXPECT_FALSE(d.hard_disabled);  // a default is not the request turning it off
}

TEST(ThinkingMode, PrecedenceFirstPresentWins) {
  // Each row adds a lower-precedence field that disagrees; the first one still decides.
  json req = chat("hi /think");
  req["reasoning_effort"] = "none";
  EXPECT_EQ(resolve_ok(req).source, Src::kReasoningEffort);
  EXPECT_FALSE(resolve_ok(req).enabled);
  req["options"] = {{"thinking_mode", "thinking"}};
  EXPECT_EQ(resolve_ok(req).source, Src::kOptionsThinkingMode);
  EXPECT_TRUE(resolve_ok(req).enabled);
  req["mode"] = "non_thinking";
  EXPECT_EQ(resolve_ok(req).source, Src::kMode);
  EXPECT_FALSE(resolve_ok(req).enabled);
  req["enable_thinking"] = true;
  EXPECT_EQ(resolve_ok(req).source, Src::kEnableThinking);
  EXPECT_TRUE(resolve_ok(req).enabled);
  req["think"] = false;
  EXPECT_EQ(resolve_ok(req).source, Src::kThink);
  EXPECT_FALSE(resolve_ok(req).enabled);
  req["chat_template_kwargs"] = {{"enable_thinking", true}};
  EXPECT_EQ(resolve_ok(req).source, Src::kChatTemplateKwargs);
  EXPECT_TRUE(resolve_ok(req).enabled);
  EXPECT_EQ(resolve_ok(req).reason, "chat_template_kwargs.enable_thinking=true");
}

// The deployment guides send options.thinking_mode as a boolean as well as a mode's name.
TEST(ThinkingMode, OptionsThinkingModeTakesBooleans) {
  for (const bool on : {true, false}) {
    json req = chat("hi /think");
    req["options"] = {{"thinking_mode", on}};
    const ThinkingDecision d = resolve_ok(req, on ? kOff : kOn);
    EXPECT_EQ(d.enabled, on);
    EXPECT_EQ(d.source, Src::kOptionsThinkingMode);
    EXPECT_EQ(d.reason, std::string("options.thinking_mode=") + (on ? "true" : "false"));
    EXPECT_EQ(d.hard_disabled, !on);  // false beats the /think in the message
  }
  json req = chat("hi");
  req["options"] = {{"thinking_mode", true}};
  req["thinking_budget"] = 64;
  EXPECT_EQ(resolve_ok(req, kOff).budget, 64);
  // Only options.thinking_mode: the top-level mode stays a name.
  req = chat("hi");
  req["mode"] = true;
  EXPECT_NE(resolve_error(req).find("mode must be"), std::string::npos);
  req = chat("hi");
  req["options"] = {{"thinking_mode", 1}};
  EXPECT_EQ(resolve_error(req),
            R"(options.thinking_mode must be true, false, "thinking", "non_thinking" or "auto")");
}

TEST(ThinkingMode, NullMeansAbsent) {
  json req = chat("hi");
  req["think"] = nullptr;
  req["reasoning_effort"] = nullptr;
  req["chat_template_kwargs"] = {{"enable_thinking", nullptr}};
  req["options"] = nullptr;
  EXPECT_EQ(resolve_ok(req, kOff).source, Src::kServerDefault);
}

TEST(ThinkingMode, HardDisabledIgnoresSoftSwitch) {
  json req = chat("solve this /think");
  req["chat_template_kwargs"] = {{"enable_thinking", false}};
  const ThinkingDecision d = resolve_ok(req);
  EXPECT_FALSE(d.enabled);
  EXPECT_TRUE(d.hard_disabled);
  EXPECT_EQ(d.source, Src::kChatTemplateKwargs);
  for (const char* field : {"think", "enable_thinking"}) {
    json r = chat("x /think");
    r[field] = false;
    EXPECT_TRUE(resolve_ok(r).hard_disabled) << field;
  }
  json r = chat("x /think");
  r["reasoning_effort"] = "minimal";
  EXPECT_TRUE(resolve_ok(r).hard_disabled);
  r = chat("x /think");
  r["mode"] = "non_thinking";
  EXPECT_TRUE(resolve_ok(r).hard_disabled);
}

TEST(ThinkingMode, OllamaLevelsAndBudgets) {
  const struct {
    json think;
    std::optional<int> budget;
  } rows[] = {{true, {}},
              {"low", kThinkingBudgetLow},
              {"medium", kThinkingBudgetMedium},
              {"high", kThinkingBudgetHigh},
              {"max", {}}};
  for (const auto& row : rows) {
    json req = chat("hi");
    req["think"] = row.think;
    const ThinkingDecision d = resolve_ok(req, kOff);
    EXPECT_TRUE(d.enabled) << row.think;
    EXPECT_EQ(d.source, Src::kThink);
    EXPECT_EQ(d.budget, row.budget) << row.think;
  }
  EXPECT_EQ(kThinkingBudgetLow, 1024);
  EXPECT_EQ(kThinkingBudgetMedium, 4096);
  EXPECT_EQ(kThinkingBudgetHigh, 16384);
  json req = chat("hi");
  req["think"] = "low";
  EXPECT_EQ(resolve_ok(req).reason, "think=\"low\", budget 1024");
}

TEST(ThinkingMode, ReasoningEffort) {
  const struct {
    const char* effort;
    bool on;
    std::optional<int> budget;
  } rows[] = {{"none", false, {}},
              {"minimal", false, {}},
              {"low", true, 1024},
              {"medium", true, 4096},
              {"high", true, 16384}};
  for (const auto& row : rows) {
    json req = chat("hi");
    req["reasoning_effort"] = row.effort;
    const ThinkingDecision d = resolve_ok(req, kAuto);
    EXPECT_EQ(d.enabled, row.on) << row.effort;
    EXPECT_EQ(d.budget, row.budget) << row.effort;
    EXPECT_EQ(d.source, Src::kReasoningEffort);
  }
}

TEST(ThinkingMode, ExplicitBudgetWinsOverLevel) {
  json req = chat("hi");
  req["think"] = "high";
  req["thinking_budget"] = 300;
  EXPECT_EQ(resolve_ok(req).budget, 300);
  req.erase("thinking_budget");
  req["thinking_token_budget"] = 0;  // vLLM: close the think block at once
  EXPECT_EQ(resolve_ok(req).budget, 0);
  req["thinking_budget"] = 0;  // both, agreeing
  EXPECT_EQ(resolve_ok(req).budget, 0);
  // A budget applies whatever turned thinking on, and never when it is off.
  json def = chat("hi");
  def["thinking_budget"] = 2000;
  EXPECT_EQ(resolve_ok(def, kOn).budget, 2000);
  EXPECT_FALSE(resolve_ok(def, kOff).budget);
}

TEST(ThinkingMode, InvalidValuesAreErrors) {
  auto with = [](const char* field, json value) {
    json req = chat("hi");
    req[field] = std::move(value);
    return req;
  };
  EXPECT_NE(resolve_error(with("think", "banana")).find("think must be"), std::string::npos);
  EXPECT_NE(resolve_error(with("think", 1)).find("think must be"), std::string::npos);
  EXPECT_NE(resolve_error(with("mode", 7)).find("mode must be"), std::string::npos);
  EXPECT_NE(resolve_error(with("mode", "fast")).find("mode must be"), std::string::npos);
  EXPECT_NE(resolve_error(with("enable_thinking", "yes")).find("enable_thinking must be"),
            std::string::npos);
  EXPECT_NE(resolve_error(with("reasoning_effort", "ultra")).find("reasoning_effort must be"),
            std::string::npos);
  EXPECT_EQ(resolve_error(with("thinking_budget", -1)), "thinking_budget must not be negative");
  EXPECT_EQ(resolve_error(with("thinking_budget", 10.5)), "thinking_budget must be an integer");
  EXPECT_EQ(resolve_error(with("thinking_budget", "100")), "thinking_budget must be an integer");
  EXPECT_EQ(resolve_error(with("thinking_token_budget", 1e18)),
            "thinking_token_budget must be an integer");
  EXPECT_EQ(resolve_error(with("thinking_token_budget", uint64_t{1} << 40)),
            "thinking_token_budget is too large");
  EXPECT_EQ(resolve_error(with("chat_template_kwargs", "x")),
            "chat_template_kwargs must be an object");
  EXPECT_EQ(resolve_error(with("options", json::array())), "options must be an object");
  json both = with("thinking_budget", 5);
  both["thinking_token_budget"] = 6;
  EXPECT_EQ(resolve_error(both), "thinking_budget and thinking_token_budget disagree");
  // A bad field is an error even when an earlier field decides.
  json shadowed = with("reasoning_effort", "banana");
  shadowed["chat_template_kwargs"] = {{"enable_thinking", true}};
  resolve_error(shadowed);
  // The message never echoes the value.
  EXPECT_EQ(resolve_error(with("think", "<script>")).find("<script>"), std::string::npos);
  EXPECT_FALSE(parse(json::array()).is_ok());
}

TEST(ThinkingMode, SoftSwitchLatestWins) {
  json req = {{"messages", json::array({
                               {{"role", "system"}, {"content", "You are helpful. /no_think"}},
                               {{"role", "user"}, {"content", "first /think"}},
                               {{"role", "assistant"}, {"content", "ok /no_think"}},
                               {{"role", "user"}, {"content", "second"}},
                           })}};
  // The assistant's /no_think does not count; the earlier user /think is the latest switch.
  ThinkingDecision d = resolve_ok(req, kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kSoftSwitch);
  EXPECT_EQ(d.reason, "soft switch /think in an earlier user message");
  EXPECT_FALSE(d.hard_disabled);
  req["messages"][3]["content"] = "second /think then /no_think";  // last in the text wins
  d = resolve_ok(req, kOn);
  EXPECT_FALSE(d.enabled);
  EXPECT_FALSE(d.hard_disabled);
  EXPECT_EQ(d.reason, "soft switch /no_think in the latest user message");
  // Content as an array of parts.
  req["messages"][3]["content"] =
      json::array({{{"type", "text"}, {"text", "look"}}, {{"type", "text"}, {"text", "/think"}}});
  EXPECT_TRUE(resolve_ok(req, kOff).enabled);
  // A system switch alone.
  json sys = {{"messages", json::array({{{"role", "system"}, {"content", "/no_think"}},
                                        {{"role", "user"}, {"content", "hi"}}})}};
  EXPECT_EQ(resolve_ok(sys, kOn).reason, "soft switch /no_think in the system message");
  json dev = {{"messages", json::array({{{"role", "developer"}, {"content", "/no_think"}},
                                        {{"role", "user"}, {"content", "hi"}},
                                        {{"role", "tool"}, {"content", "/think"}}})}};
  // "developer" is OpenAI's newer name for the system turn, and is read as one.
  EXPECT_EQ(resolve_ok(dev, kOn).reason, "soft switch /no_think in the system message");
  // Ollama generate: system + prompt.
  json gen = {{"prompt", "why? /think"}, {"system", "/no_think"}};
  EXPECT_TRUE(resolve_ok(gen, kOff).enabled);
}

TEST(ThinkingMode, SoftSwitchWordBoundaries) {
  EXPECT_EQ(find_soft_switch("/think"), true);
  EXPECT_EQ(find_soft_switch("please /no_think."), false);
  EXPECT_EQ(find_soft_switch("(/think)"), true);
  EXPECT_EQ(find_soft_switch("多想想/think"), true);
  EXPECT_EQ(find_soft_switch("/no_think\n/think"), true);
  EXPECT_EQ(find_soft_switch("/thinking"), std::nullopt);
  EXPECT_EQ(find_soft_switch("a/think"), std::nullopt);
  EXPECT_EQ(find_soft_switch("http://x.org/think"), std::nullopt);
  EXPECT_EQ(find_soft_switch("/think/more"), std::nullopt);
  EXPECT_EQ(find_soft_switch("/no_thinker"), std::nullopt);
  EXPECT_EQ(find_soft_switch("/ think"), std::nullopt);
  EXPECT_EQ(find_soft_switch(""), std::nullopt);
}

TEST(ThinkingMode, AutoUsesClassifier) {
  ThinkingDecision d = resolve_ok(chat("Solve 3x + 5 = 20"), kAuto);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kAuto);
  EXPECT_EQ(d.reason, "auto: math: equation");
  d = resolve_ok(chat("thanks!"), kAuto);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.reason, "auto: chat: greeting");
  EXPECT_FALSE(d.hard_disabled);  // auto choosing "off" is not a hard off
  // Requested by a field, and named in the reason.
  json req = chat("你好");
  req["mode"] = "auto";
  d = resolve_ok(req, kOn);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.reason, "auto: chat: greeting (mode=\"auto\")");
  req = chat("证明根号2是无理数");
  req["options"] = {{"thinking_mode", "auto"}};
  req["thinking_budget"] = 512;
  d = resolve_ok(req, kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.budget, 512);
  // The latest user message is classified, not an earlier one or the assistant's.
  json multi = {
      {"messages", json::array({{{"role", "user"}, {"content", "Prove Fermat's last theorem"}},
                                {{"role", "assistant"}, {"content", "Here..."}},
                                {{"role", "user"}, {"content", "thanks!"}}})}};
  EXPECT_FALSE(resolve_ok(multi, kAuto).enabled);
}

TEST(ThinkingMode, AutoHonoursSoftSwitchFirst) {
  ThinkingDecision d = resolve_ok(chat("hello /think"), kAuto);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kSoftSwitch);
  json req = chat("Prove that 2+2=4 /no_think");
  req["mode"] = "auto";
  d = resolve_ok(req, kOn);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.source, Src::kSoftSwitch);
  EXPECT_EQ(d.reason, "soft switch /no_think in the latest user message (mode=\"auto\")");
}

TEST(ThinkingMode, AutoSeesTools) {
  std::string medium;
  for (int i = 0; i < 25; ++i) medium += "item ";
  json req = chat(medium);
  EXPECT_FALSE(resolve_ok(req, kAuto).enabled);
  req["tools"] = json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
  EXPECT_TRUE(resolve_ok(req, kAuto).enabled);
}

// The policy itself takes no JSON: the fields in any order, the highest precedence decides.
TEST(ThinkingMode, PolicyTakesFieldsInAnyOrder) {
  ModeFields f;
  f.fields = {{ModeField::Wish::kOff, Src::kReasoningEffort, "reasoning_effort=\"none\"", {}},
              {ModeField::Wish::kOn, Src::kThink, "think=true", {}}};
  f.explicit_budget = 77;
  const std::vector<ModeTurn> turns = {{"system", "be brief"}, {"user", "hi /no_think"}};
  ThinkingDecision d = decide_thinking(f, turns, /*has_tools=*/false, kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kThink);
  EXPECT_EQ(d.budget, 77);
  EXPECT_EQ(d.reason, "think=true, budget 77");
  d = decide_thinking(ModeFields{}, turns, false, kOn);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.source, Src::kSoftSwitch);
  d = raw_prompt_decision();
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.source, Src::kRawPrompt);
}

// A mode-pinned model name (M-fast, M-thinking) takes the server default's place: a request's
// fields and its soft switches still decide before it.
TEST(ThinkingMode, ModelPinBelowFieldsAndSoftSwitches) {
  auto decide = [](const json& request, const char* model, ThinkDefault def) {
    auto r = parse(request);
    EXPECT_TRUE(r.is_ok()) << r.message();
    if (!r.is_ok()) return ThinkingDecision{};
    r->model = model;
    apply_model_pin(match_model_name(model, "qwen3:14b"), *r);
    decide_mode(*r, def);
    return r->mode;
  };
  ThinkingDecision d = decide(chat("hello"), "qwen3:14b-fast", kOn);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.source, Src::kModelTag);
  EXPECT_EQ(d.reason, "model qwen3:14b-fast: thinking off");
  EXPECT_FALSE(d.hard_disabled);
  d = decide(chat("hello"), "qwen3:14b-thinking", kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kModelTag);
  d = decide(chat("hello"), "qwen3:14b", kOff);  // the model itself: the server's default
  EXPECT_EQ(d.source, Src::kServerDefault);
  d = decide(chat("hello /think"), "qwen3:14b-fast", kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kSoftSwitch);
  json fields = chat("hello");
  fields["enable_thinking"] = true;
  d = decide(fields, "qwen3:14b-fast", kOff);
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.source, Src::kEnableThinking);
}

TEST(ThinkingMode, SourceNames) {
  EXPECT_EQ(thinking_source_name(Src::kChatTemplateKwargs), "chat_template_kwargs");
  EXPECT_EQ(thinking_source_name(Src::kOptionsThinkingMode), "options.thinking_mode");
  EXPECT_EQ(thinking_source_name(Src::kSoftSwitch), "soft_switch");
  EXPECT_EQ(thinking_source_name(Src::kModelTag), "model_tag");
  EXPECT_EQ(thinking_source_name(Src::kServerDefault), "server_default");
  EXPECT_EQ(thinking_source_name(Src::kAuto), "auto");
  EXPECT_EQ(thinking_source_name(Src::kRawPrompt), "raw_prompt");
}

TEST(ThinkingMode, ParseServerDefault) {
  EXPECT_EQ(parse_think_default("on").value(), kOn);
  EXPECT_EQ(parse_think_default("off").value(), kOff);
  EXPECT_EQ(parse_think_default("auto").value(), kAuto);
  EXPECT_FALSE(parse_think_default("yes").is_ok());
}

TEST(ThinkingMode, SamplingDefaults) {
  const SamplingDefaults t = sampling_defaults(true);
  EXPECT_FLOAT_EQ(t.temperature, 0.6f);
  EXPECT_FLOAT_EQ(t.top_p, 0.95f);
  EXPECT_EQ(t.top_k, 20);
  EXPECT_FLOAT_EQ(t.min_p, 0.0f);
  const SamplingDefaults n = sampling_defaults(false);
  EXPECT_FLOAT_EQ(n.temperature, 0.7f);
  EXPECT_FLOAT_EQ(n.top_p, 0.8f);
  EXPECT_EQ(n.top_k, 20);
  EXPECT_FLOAT_EQ(n.min_p, 0.0f);
}

TEST(ThinkingMode, BudgetClosingText) {
  EXPECT_EQ(kThinkingBudgetClosingText,
            "\n\nConsidering the limited time by the user, I have to give the solution based on "
            "the thinking directly now.\n</think>\n\n");
}

}  // namespace
}  // namespace duet
