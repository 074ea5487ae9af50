// A model's chat template (GGUF `tokenizer.chat_template` or tokenizer_config.json's
// `chat_template`) turned into the prompt text for a conversation, as Hugging Face's
// apply_chat_template would render it (held to @huggingface/jinja byte for byte).
//
// Context the template sees: `messages`, `tools` (only when given), `add_generation_prompt`,
// `enable_thinking` (only when set: Qwen3's template tests `enable_thinking is defined`),
// `bos_token` / `eos_token` / `date_string` (when set), then every extra kwarg (these win,
// except `messages`, which is always the conversation). `strftime_now` reads `now`, else
// the date in `date_string` ("29 Nov 2026"), else the clock.
//
// Messages pass through as given, with one mapping: a message that carries `reasoning`
// (some OpenAI clients' name) but no `reasoning_content` gets `reasoning_content` too.
// Tool-call `arguments` stay as given — an object or a JSON string; Qwen3's template
// prints a string verbatim and an object through `tojson`.
//
// Provenance (render_marked): the template's own text and the server's options
// (add_generation_prompt, enable_thinking, bos/eos tokens, date_string) are trusted;
// everything a client supplies — messages, tools, chat_template_kwargs, keys and values
// alike — is client text wherever the template puts it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "text/template/jinja/jinja.h"

namespace duet {

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking;  // unset: undefined in the template
  std::optional<std::string> bos_token, eos_token;
  std::optional<std::string> date_string;                                  // e.g. "29 Nov 2026"
  nlohmann::ordered_json extra_kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  std::optional<jinja::DateTime> now;                                      // for strftime_now
  jinja::RenderLimits limits;
};

class ChatTemplate {
 public:
  // Fails with the line and column of a syntax error.
  static Result<ChatTemplate> create(std::string_view source);

  // `messages`: an array of objects; `tools`: null or an array.
  Result<std::string> render(const nlohmann::ordered_json& messages,
                             const nlohmann::ordered_json& tools,
                             const ChatTemplateOptions& options) const;
  // The same text, with the byte ranges the template and the options wrote marked trusted.
  Result<MarkedText> render_marked(const nlohmann::ordered_json& messages,
                                   const nlohmann::ordered_json& tools,
                                   const ChatTemplateOptions& options) const;

  const std::string& source() const { return source_; }

 private:
  ChatTemplate(std::string source, std::shared_ptr<const jinja::Template> t)
      : source_(std::move(source)), template_(std::move(t)) {}
  std::string source_;
  std::shared_ptr<const jinja::Template> template_;
};

// Qwen3's official chat template, for model files that carry none (qwen3_template.cc).
std::string_view builtin_qwen3_template();

// "29 Nov 2026" (also "29 November 2026", "2026-11-29") → that day at midnight.
std::optional<jinja::DateTime> parse_date_string(std::string_view s);

}  // namespace duet
