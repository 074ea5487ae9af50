// libFuzzer target: a chat template and its context from untrusted bytes, parsed and
// rendered under small limits. The input is the template source, a NUL byte, then the
// context as JSON (an invalid or missing context falls back to a small conversation, so
// that mutations of the template still render). Beyond "no crash, no sanitizer report",
// it traps when a limit is not kept: the output never exceeds max_output_bytes, and every
// failure carries a message; and when provenance goes wrong: render_marked gives render's
// text, with trusted spans that are sorted, merged and inside the text.
//
//   build-fuzz/fuzz_template -max_total_time=60 -rss_limit_mb=2048 <corpus copy>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "text/template/chat_template.h"
#include "text/template/jinja/jinja.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

const char* kDefaultContext = R"({
  "messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "<think>\nlook it up\n</think>\n\n", "tool_calls": [
      {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "18C"},
    {"role": "assistant", "content": "18C and sunny.", "reasoning_content": "easy"},
    {"role": "user", "content": "你好 😀"}],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
  "add_generation_prompt": true, "enable_thinking": false,
  "bos_token": "<s>", "eos_token": "</s>", "date_string": "29 Nov 2026"})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view source = input.substr(0, nul);
  nlohmann::ordered_json context;
  if (nul != std::string_view::npos)
    context =
        nlohmann::ordered_json::parse(input.substr(nul + 1), nullptr, /*allow_exceptions=*/false);
  if (!context.is_object()) context = nlohmann::ordered_json::parse(kDefaultContext);

  auto t = duet::jinja::Template::parse(source);
  if (!t.is_ok()) {
    check(!t.message().empty());
    return 0;
  }
  duet::jinja::RenderLimits limits;
  limits.max_depth = 16;
  limits.max_output_bytes = 64 << 10;
  limits.max_steps = 200'000;
  auto out = (*t)->render(context, limits, duet::jinja::DateTime{2026, 11, 29, 12, 0, 0});
  if (out.is_ok()) {
    check(out->size() <= limits.max_output_bytes);
  } else {
    check(!out.message().empty());
  }
  // The same context split in two: every other member trusted, the rest client text.
  nlohmann::ordered_json trusted = nlohmann::ordered_json::object(), client = trusted;
  size_t i = 0;
  for (const auto& [k, v] : context.items()) (i++ % 2 ? client : trusted)[k] = v;
  auto marked =
      (*t)->render_marked(trusted, client, limits, duet::jinja::DateTime{2026, 11, 29, 12, 0, 0});
  check(marked.is_ok() == out.is_ok());
  if (marked.is_ok()) {
    check(marked->text == *out);
    check(duet::well_formed(marked->trusted, marked->text.size()));
  }

  // The chat-template layer over the same source, when the context is a conversation.
  if (context.contains("messages")) {
    auto ct = duet::ChatTemplate::create(source);
    check(ct.is_ok());
    duet::ChatTemplateOptions opt;
    opt.limits = limits;
    opt.date_string = "29 Nov 2026";
    auto r = ct->render(context["messages"], context.value("tools", nlohmann::ordered_json()), opt);
    check(r.is_ok() || !r.message().empty());
  }
  return 0;
}
