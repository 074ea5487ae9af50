#include "text/template/chat_template.h"

#include <strings.h>

#include <cstdio>

namespace duet {

Result<ChatTemplate> ChatTemplate::create(std::string_view source) {
  auto t = jinja::Template::parse(source);
  if (!t) return t.status().with_context("chat template");
  return ChatTemplate(std::string(source),
                      std::shared_ptr<const jinja::Template>(std::move(t.value())));
}

namespace {

// `reasoning` → `reasoning_content` where only the former is present.
Result<nlohmann::ordered_json> normalize_messages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) return Status::error("messages must be an array");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (!m.is_object())
      return Status::error("messages[" + std::to_string(i) + "] must be an object");
    nlohmann::ordered_json copy = m;
    const auto reasoning = m.find("reasoning");
    if (reasoning != m.end() && !m.contains("reasoning_content"))
      copy["reasoning_content"] = *reasoning;
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& messages,
                                         const nlohmann::ordered_json& tools,
                                         const ChatTemplateOptions& options) const {
  auto out = render_marked(messages, tools, options);
  if (!out) return out.status();
  return std::move(out->text);
}

Result<MarkedText> ChatTemplate::render_marked(const nlohmann::ordered_json& messages,
                                               const nlohmann::ordered_json& tools,
                                               const ChatTemplateOptions& options) const {
  auto normalized = normalize_messages(messages);
  if (!normalized) return normalized.status();
  if (!tools.is_null() && !tools.is_array()) return Status::error("tools must be an array or null");
  if (!options.extra_kwargs.is_null() && !options.extra_kwargs.is_object())
    return Status::error("chat template kwargs must be an object");

  // What the server decides is trusted; the client's context is set after it, so a client
  // kwarg still wins over an option of the same name (as with Hugging Face's kwargs).
  nlohmann::ordered_json trusted = nlohmann::ordered_json::object();
  trusted["add_generation_prompt"] = options.add_generation_prompt;
  if (options.enable_thinking) trusted["enable_thinking"] = *options.enable_thinking;
  if (options.bos_token) trusted["bos_token"] = *options.bos_token;
  if (options.eos_token) trusted["eos_token"] = *options.eos_token;
  if (options.date_string) trusted["date_string"] = *options.date_string;

  nlohmann::ordered_json client = nlohmann::ordered_json::object();
  client["messages"] = std::move(normalized.value());
  if (tools.is_array()) client["tools"] = tools;
  if (options.extra_kwargs.is_object())
    for (const auto& [k, v] : options.extra_kwargs.items())
      if (k != "messages") client[k] = v;

  std::optional<jinja::DateTime> now = options.now;
  const nlohmann::ordered_json* date = nullptr;  // the one the template sees
  if (auto it = client.find("date_string"); it != client.end()) {
    date = &*it;
  } else if (auto t = trusted.find("date_string"); t != trusted.end()) {
    date = &*t;
  }
  if (!now && date != nullptr && date->is_string())
    now = parse_date_string(date->get_ref<const std::string&>());
  return template_->render_marked(trusted, client, options.limits, now);
}

std::optional<jinja::DateTime> parse_date_string(std::string_view s) {
  static const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                  "jul", "aug", "sep", "oct", "nov", "dec"};
  const std::string str(s);
  int y = 0, m = 0, d = 0;
  char month[32] = {0};
  if (std::sscanf(str.c_str(), "%4d-%2d-%2d", &y, &m, &d) == 3) {
    // ISO date
  } else if (std::sscanf(str.c_str(), "%2d %31s %4d", &d, month, &y) == 3) {
    for (int i = 0; i < 12; ++i)
      if (strncasecmp(month, kMonths[i], 3) == 0) m = i + 1;
  } else {
    return std::nullopt;
  }
  if (m < 1 || m > 12 || d < 1 || d > 31 || y < 1 || y > 9999) return std::nullopt;
  jinja::DateTime t;
  t.year = y;
  t.month = m;
  t.day = d;
  return t;
}

}  // namespace duet
