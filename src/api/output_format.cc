#include "api/output_format.h"

#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema.h"
#include "text/grammar/regex.h"

namespace duet {

namespace {

// Least recently used compiled grammars, by GBNF text.
class GrammarCache {
 public:
  static constexpr size_t kCapacity = 32;

  Result<std::shared_ptr<const grammar::CompiledGrammar>> get(const std::string& gbnf) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = index_.find(gbnf); it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    auto g = grammar::parse_gbnf(gbnf);
    if (!g) return g.status();
    if (grammar::ByteAutomaton(g.value()).start() == grammar::ByteAutomaton::kDead)
      return Status::error("the grammar is too ambiguous: its start alone opens more than " +
                           std::to_string(grammar::ByteAutomaton::kMaxConfigurationInts) +
                           " parse-stack entries");
    auto compiled = std::make_shared<const grammar::CompiledGrammar>(std::move(g.value()));
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.contains(gbnf)) return index_[gbnf]->second;
    order_.emplace_front(gbnf, compiled);
    index_[gbnf] = order_.begin();
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return compiled;
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const grammar::CompiledGrammar>>;
  std::mutex mu_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

GrammarCache& cache() {
  static GrammarCache c;
  return c;
}

Status set_format(OutputFormat& out, const std::string& field, const std::string& gbnf) {
  if (out.grammar)
    return Status::error(field + " and " + out.field +
                         " both constrain the output; send at most one");
  auto compiled = compile_output_grammar(gbnf);
  if (!compiled) return Status::error(field + ": " + compiled.status().message());
  out.grammar = std::move(compiled.value());
  out.field = field;
  return Status::ok();
}

// A JSON Schema given as an object or as its JSON text (vLLM accepts both).
Status schema_format(OutputFormat& out, const std::string& field, const Json& schema) {
  Json parsed = schema;
  if (schema.is_string()) {
    parsed = Json::parse(schema.get<std::string>(), nullptr, false);
    if (parsed.is_discarded()) return Status::error(field + " is not valid JSON");
  }
  if (!parsed.is_object() && !parsed.is_boolean())
    return field_error(field, "a JSON Schema object");
  auto gbnf = grammar::json_schema_to_gbnf(parsed);
  if (!gbnf) return Status::error(field + ": " + gbnf.status().message());
  return set_format(out, field, gbnf.value());
}

Status regex_format(OutputFormat& out, const std::string& field, const Json& pattern) {
  if (!pattern.is_string()) return field_error(field, "a regular expression string");
  auto body = grammar::regex_to_gbnf(pattern.get<std::string>(), grammar::RegexTarget::kRaw);
  if (!body) return Status::error(field + ": " + body.status().message());
  return set_format(out, field, "root ::= " + body.value() + "\n");
}

Status choice_format(OutputFormat& out, const std::string& field, const Json& choices) {
  if (!choices.is_array() || choices.empty())
    return field_error(field, "a non-empty array of strings");
  std::string gbnf = "root ::= ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (!choices[i].is_string()) return field_error(field, "a non-empty array of strings");
    gbnf += (i ? " | " : "") + grammar::gbnf_literal(choices[i].get<std::string>());
  }
  return set_format(out, field, gbnf + "\n");
}

Status grammar_format(OutputFormat& out, const std::string& field, const Json& text) {
  if (!text.is_string()) return field_error(field, "GBNF grammar text");
  return set_format(out, field, text.get<std::string>());
}

// The fields that hold one format each, and how each is read.
struct FieldReader {
  const char* name;
  Status (*read)(OutputFormat&, const std::string&, const Json&);
};
constexpr FieldReader kEngineFields[] = {
    {"grammar", grammar_format},      {"json_schema", schema_format},
    {"guided_json", schema_format},   {"guided_regex", regex_format},
    {"guided_choice", choice_format}, {"guided_grammar", grammar_format},
};
constexpr FieldReader kStructuredOutputsKeys[] = {
    {"json", schema_format},
    {"regex", regex_format},
    {"choice", choice_format},
    {"grammar", grammar_format},
};

}  // namespace

Result<std::shared_ptr<const grammar::CompiledGrammar>> compile_output_grammar(
    const std::string& gbnf) {
  return cache().get(gbnf);
}

namespace request_detail {

Status read_output_format(const Json& body, OutputFormat& out) {
  if (const Json* rf = find_field(body, "response_format")) {
    if (!rf->is_object()) return field_error("response_format", "an object with a type");
    DUET_ASSIGN(type, get_string(*rf, "type"));
    if (!type || (*type != "text" && *type != "json_object" && *type != "json_schema"))
      return field_error("response_format.type", "\"text\", \"json_object\" or \"json_schema\"");
    if (*type == "json_object")
      DUET_TRY(set_format(out, "response_format", grammar::json_object_gbnf()));
    if (*type == "json_schema") {
      const Json* js = find_field(*rf, "json_schema");
      if (js == nullptr || !js->is_object())
        return field_error("response_format.json_schema", "an object with a schema");
      const Json* schema = find_field(*js, "schema");
      // OpenAI allows a json_schema without a schema: any JSON object then.
      if (schema == nullptr)
        DUET_TRY(set_format(out, "response_format", grammar::json_object_gbnf()));
      else
        DUET_TRY(schema_format(out, "response_format.json_schema.schema", *schema));
    }
  }
  if (const Json* f = find_field(body, "format")) {  // Ollama
    const bool none = f->is_null() || (f->is_string() && f->get_ref<const std::string&>().empty());
    if (!none) {
      if (f->is_string() && f->get_ref<const std::string&>() == "json")
        DUET_TRY(set_format(out, "format", grammar::json_object_gbnf()));
      else if (f->is_object())
        DUET_TRY(schema_format(out, "format", *f));
      else
        return field_error("format", "\"json\" or a JSON schema object");
    }
  }
  // llama.cpp's and vLLM's fields (null counts as absent, as those servers read it).
  for (const FieldReader& f : kEngineFields)
    if (const Json* v = find_field(body, f.name); v && !v->is_null())
      DUET_TRY(f.read(out, f.name, *v));
  if (const Json* so = find_field(body, "structured_outputs"); so && !so->is_null()) {
    if (!so->is_object()) return field_error("structured_outputs", "an object");
    for (const auto& [key, value] : so->items()) {
      if (value.is_null()) continue;
      const std::string field = "structured_outputs." + key;
      if (key == "json_object") {
        if (value == true) DUET_TRY(set_format(out, field, grammar::json_object_gbnf()));
        continue;
      }
      const FieldReader* reader = nullptr;
      for (const FieldReader& f : kStructuredOutputsKeys)
        if (key == f.name) reader = &f;
      if (reader == nullptr)
        return Status::error(field +
                             " is not supported (json, regex, choice, grammar and "
                             "json_object are)");
      DUET_TRY(reader->read(out, field, value));
    }
  }
  return Status::ok();
}

Status tool_call_format(const Json& tools, const std::string& function, bool several,
                        OutputFormat& out) {
  // The JSON inside <tool_call>: {"name": N, "arguments": PARAMETERS} for each allowed tool.
  Json alternatives = Json::array();
  for (const Json& t : tools) {
    const Json* fn = find_field(t, "function");
    if (fn == nullptr) continue;
    const Json* name = find_field(*fn, "name");
    if (name == nullptr || !name->is_string()) continue;
    if (!function.empty() && name->get<std::string>() != function) continue;
    const Json* params = find_field(*fn, "parameters");
    Json call = {{"type", "object"},
                 {"properties",
                  {{"name", {{"const", *name}}},
                   {"arguments", params ? *params : Json{{"type", "object"}}}}},
                 {"required", {"name", "arguments"}}};
    alternatives.push_back(std::move(call));
  }
  if (alternatives.empty())
    return Status::error(function.empty()
                             ? "tool_choice \"required\" needs at least one tool"
                             : "tool_choice names " + function + ", which is not among the tools");
  Json schema = alternatives.size() == 1 ? alternatives[0] : Json{{"anyOf", alternatives}};
  auto gbnf = grammar::json_schema_to_gbnf(schema);
  if (!gbnf) return Status::error("tool parameters: " + gbnf.status().message());
  // The schema's grammar becomes the call's body; Qwen3 writes calls as
  // <tool_call>\n{...}\n</tool_call>, several separated by a newline.
  std::string text = gbnf.value();
  text.replace(0, text.find("::="), "tool-call-json ");
  const std::string calls = several ? " (\"\\n\" tool-call)*" : "";
  text = "root ::= tool-call" + calls + "\n" +
         "tool-call ::= \"<tool_call>\\n\" tool-call-json \"\\n</tool_call>\"\n" + text;
  return set_format(out, "tool_choice", text);
}

}  // namespace request_detail

}  // namespace duet
