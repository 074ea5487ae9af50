// What both dialects' adapters share: messages, tools, stop strings, reasoning format.
#include <cctype>

#include "api/request_model.h"
#include "text/output/stop_strings.h"

namespace duet {
namespace request_detail {
namespace {

std::string at(std::string_view what, size_t i) {
  return std::string(what) + "[" + std::to_string(i) + "]";
}

// content: a string, null, or OpenAI's array of parts (text parts joined with "\n").
Status content_text(const Json& message, const std::string& where, bool null_ok, std::string& out) {
  const Json* c = find_field(message, "content");
  if (c == nullptr) {
    if (!null_ok) return Status::error(where + ".content is required");
    out.clear();
    return Status::ok();
  }
  if (c->is_string()) {
    out = c->get<std::string>();
    return Status::ok();
  }
  if (!c->is_array()) return field_error(where + ".content", "a string or an array of parts");
  out.clear();
  for (size_t i = 0; i < c->size(); ++i) {
    const Json& part = (*c)[i];
    const std::string pw = at(where + ".content", i);
    if (!part.is_object()) return field_error(pw, "an object");
    const Json* type = find_field(part, "type");
    if (type == nullptr || !type->is_string()) return Status::error(pw + ".type is required");
    const std::string& t = type->get_ref<const std::string&>();
    if (t != "text" && t != "input_text")
      return Status::error(pw + ": only text content is supported (got a part of another type)");
    const Json* text = find_field(part, "text");
    if (text == nullptr || !text->is_string()) return field_error(pw + ".text", "a string");
    if (i > 0) out += '\n';
    out += text->get_ref<const std::string&>();
  }
  return Status::ok();
}

// A tool call of an assistant message. OpenAI: {"id","type":"function","function":{"name",
// "arguments":"<json string>"}}; Ollama: {"function":{"name","arguments":{...}}}.
Status normalize_tool_call(const Json& call, const std::string& where, Json& out) {
  if (!call.is_object()) return field_error(where, "an object");
  const Json* fn = find_field(call, "function");
  if (fn == nullptr || !fn->is_object()) return Status::error(where + ".function is required");
  const Json* name = find_field(*fn, "name");
  if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty())
    return field_error(where + ".function.name", "a non-empty string");
  Json arguments = Json::object();
  if (const Json* a = find_field(*fn, "arguments")) {
    if (a->is_object()) {
      arguments = *a;
    } else if (a->is_string()) {
      // The template prints a string verbatim; parsing it back gives Qwen's own spacing.
      const std::string what = where + ".function.arguments";
      DUET_ASSIGN(parsed, parse_embedded_json(a->get_ref<const std::string&>(), what));
      if (!parsed.is_object()) return Status::error(what + " must hold a JSON object");
      arguments = std::move(parsed);
    } else {
      return field_error(where + ".function.arguments", "an object or a JSON string");
    }
  }
  out = Json::object();
  if (const Json* id = find_field(call, "id"); id && id->is_string()) out["id"] = *id;
  out["type"] = "function";
  out["function"] = {{"name", *name}, {"arguments", std::move(arguments)}};
  return Status::ok();
}

}  // namespace

Status normalize_messages(const Json& messages, const RequestLimits& limits, Dialect dialect,
                          Json& out) {
  if (!messages.is_array()) return field_error("messages", "an array of message objects");
  if (messages.size() > limits.max_messages)
    return Status::error("messages has more than " + std::to_string(limits.max_messages) +
                         " entries");
  out = Json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string where = at("messages", i);
    if (!m.is_object()) return field_error(where, "an object with role and content");
    const Json* role_v = find_field(m, "role");
    if (role_v == nullptr) return Status::error(where + ".role is required");
    if (!role_v->is_string()) return field_error(where + ".role", "a string");
    std::string role = role_v->get<std::string>();
    if (role == "developer") role = "system";  // OpenAI's newer name for it
    if (role != "system" && role != "user" && role != "assistant" && role != "tool")
      return field_error(where + ".role", "one of system, developer, user, assistant, tool");
    Json n = Json::object();
    n["role"] = role;
    std::string content;
    DUET_TRY(content_text(m, where, role == "assistant" || role == "tool", content));
    n["content"] = std::move(content);
    if (dialect == Dialect::kOllama) {
      if (const Json* images = find_field(m, "images");
          images && !(images->is_array() && images->empty()))
        return Status::error(where + ": images are not supported by this model");
    }
    if (role == "assistant") {
      // Earlier turns' reasoning: the template keeps it only inside an ongoing tool chain.
      for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
        const Json* r = find_field(m, key);
        if (r == nullptr) continue;
        if (!r->is_string()) return field_error(where + "." + key, "a string");
        if (!n.contains("reasoning_content")) n["reasoning_content"] = *r;
      }
      if (const Json* calls = find_field(m, "tool_calls")) {
        if (!calls->is_array()) return field_error(where + ".tool_calls", "an array");
        if (calls->size() > limits.max_tools)
          return Status::error(where + ".tool_calls has too many entries");
        Json list = Json::array();
        for (size_t k = 0; k < calls->size(); ++k) {
          Json call;
          DUET_TRY(normalize_tool_call((*calls)[k], at(where + ".tool_calls", k), call));
          list.push_back(std::move(call));
        }
        if (!list.empty()) n["tool_calls"] = std::move(list);
      }
    }
    if (role == "tool") {
      if (const Json* id = find_field(m, "tool_call_id")) {
        if (!id->is_string()) return field_error(where + ".tool_call_id", "a string");
        n["tool_call_id"] = *id;
      }
      for (const char* key : {"name", "tool_name"}) {
        const Json* v = find_field(m, key);
        if (v == nullptr) continue;
        if (!v->is_string()) return field_error(where + "." + key, "a string");
        n["name"] = *v;
      }
    } else if (const Json* name = find_field(m, "name")) {
      if (!name->is_string()) return field_error(where + ".name", "a string");
      n["name"] = *name;
    }
    out.push_back(std::move(n));
  }
  return Status::ok();
}

Status read_tools(const Json& body, const RequestLimits& limits, Json& out) {
  out = nullptr;
  const Json* tools = find_field(body, "tools");
  if (tools == nullptr) return Status::ok();
  if (!tools->is_array()) return field_error("tools", "an array");
  if (tools->size() > limits.max_tools)
    return Status::error("tools has more than " + std::to_string(limits.max_tools) + " entries");
  if (tools->empty()) return Status::ok();
  out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& t = (*tools)[i];
    const std::string where = at("tools", i);
    if (!t.is_object()) return field_error(where, "an object");
    const Json* type = find_field(t, "type");
    if (type != nullptr &&
        (!type->is_string() || type->get_ref<const std::string&>() != "function"))
      return field_error(where + ".type", "\"function\"");
    const Json* fn = find_field(t, "function");
    if (fn == nullptr || !fn->is_object()) return Status::error(where + ".function is required");
    const Json* name = find_field(*fn, "name");
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty() ||
        name->get_ref<const std::string&>().size() > 256)
      return field_error(where + ".function.name", "a non-empty string of at most 256 bytes");
    if (const Json* d = find_field(*fn, "description"); d && !d->is_string())
      return field_error(where + ".function.description", "a string");
    if (const Json* p = find_field(*fn, "parameters"); p && !p->is_object())
      return field_error(where + ".function.parameters", "a JSON schema object");
    Json tool = Json::object();
    tool["type"] = "function";
    tool["function"] = *fn;
    out.push_back(std::move(tool));
  }
  return Status::ok();
}

Status read_tool_choice(const Json& body, ApiRequest& r) {
  // parallel_tool_calls false: a forced reply holds one call (OpenAI's default allows several).
  DUET_ASSIGN(parallel, get_bool(body, "parallel_tool_calls"));
  if (const Json* tc = find_field(body, "tool_choice")) {
    if (tc->is_string()) {
      const std::string& c = tc->get_ref<const std::string&>();
      if (c != "none" && c != "auto" && c != "required")
        return field_error("tool_choice", "\"none\", \"auto\", \"required\" or a function");
      if (c == "required")
        DUET_TRY(request_detail::tool_call_format(r.tools, "", parallel.value_or(true),
                                                  r.output_format));
      // "none": the model is not shown the tools and nothing is parsed as a call.
      if (c == "none") {
        r.tools = nullptr;
        r.parse_tool_calls = false;
      }
    } else if (tc->is_object()) {
      // {"type": "function", "function": {"name": ...}}: exactly one call of that function.
      const Json* fn = find_field(*tc, "function");
      const Json* name = fn != nullptr && fn->is_object() ? find_field(*fn, "name") : nullptr;
      if (name == nullptr || !name->is_string())
        return field_error("tool_choice.function.name", "the name of one of the tools");
      DUET_TRY(request_detail::tool_call_format(r.tools, name->get<std::string>(), false,
                                                r.output_format));
    } else {
      return field_error("tool_choice", "\"none\", \"auto\", \"required\" or a function");
    }
  }
  return Status::ok();
}

Status read_stop(const Json* stop, std::vector<std::string>& out) {
  out.clear();
  if (stop == nullptr) return Status::ok();
  if (stop->is_string()) {
    out.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    // Counted before copying, so a 10,000-entry list costs nothing.
    if (stop->size() > StopStringLimits{}.max_count)
      return Status::error("stop has more than " + std::to_string(StopStringLimits{}.max_count) +
                           " entries");
    for (const Json& s : *stop) {
      if (!s.is_string()) return field_error("stop", "a string or an array of strings");
      out.push_back(s.get<std::string>());
    }
  } else {
    return field_error("stop", "a string or an array of strings");
  }
  return validate_stop_strings(out);
}

Status read_reasoning_format(const Json& body, ApiRequest& r) {
  auto include = get_bool(body, "include_reasoning");
  if (!include) return include.status();
  auto format = get_string(body, "reasoning_format");
  if (!format) return format.status();
  if (*format) {
    const std::string& f = **format;
    if (f == "raw" || f == "none")
      r.reasoning = ReasoningOutput::kRaw;
    else if (f == "parsed" || f == "auto" || f == "deepseek" || f == "separate")
      r.reasoning = ReasoningOutput::kSeparate;
    else
      return field_error("reasoning_format", "\"parsed\" or \"raw\"");
  }
  if (*include && !**include) r.reasoning = ReasoningOutput::kDrop;
  return Status::ok();
}

}  // namespace request_detail

namespace {

std::string_view without_latest(std::string_view s) {
  if (s.ends_with(":latest")) s.remove_suffix(7);
  return s;
}

bool same_name(std::string_view a, std::string_view b) {
  a = without_latest(a);
  b = without_latest(b);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

bool model_name_matches(std::string_view requested, std::string_view served) {
  return match_model_name(requested, served).matches;
}

std::vector<std::string> served_model_names(std::string_view served) {
  const std::string base(without_latest(served));
  return {base, base + "-thinking", base + "-fast"};
}

ModelNameMatch match_model_name(std::string_view requested, std::string_view served) {
  ModelNameMatch m;
  if (requested.empty() || same_name(requested, served)) {
    m.matches = true;
    return m;
  }
  const std::vector<std::string> names = served_model_names(served);
  for (size_t i = 1; i < names.size(); ++i)
    if (same_name(requested, names[i])) {
      m.matches = true;
      m.thinking = i == 1;
    }
  return m;
}

void apply_model_pin(const ModelNameMatch& match, ApiRequest& request) {
  request.mode_fields.model_pin = match.thinking;
  if (match.thinking)
    request.mode_fields.model_pin_reason =
        "model " + request.model + ": thinking " + (*match.thinking ? "on" : "off");
}

}  // namespace duet
