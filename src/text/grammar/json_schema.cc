#include "text/grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "text/grammar/gbnf.h"
#include "text/grammar/grammar.h"
#include "text/grammar/number_range.h"
#include "text/grammar/regex.h"

namespace duet::grammar {

namespace {

using Json = nlohmann::ordered_json;

// The rules every schema grammar may use; the compiler adds the schema's own after them.
constexpr const char* kJsonPrimitives = R"(ws ::= [ \t]? | "\n" [ \t]{0,20}
json-value ::= json-object | json-array | json-string | json-number | json-bool | json-null
json-object ::= "{" ws (json-member (ws "," ws json-member)*)? ws "}"
json-member ::= json-string ws ":" ws json-value
json-array ::= "[" ws (json-value (ws "," ws json-value)*)? ws "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
json-number ::= json-integer ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?
json-integer ::= "-"? ("0" | [1-9] [0-9]{0,15})
json-bool ::= "true" | "false"
json-null ::= "null"
)";

// String formats: the forms a validator accepts (days per month and leap years included).
constexpr const char* kFormatRules =
    R"(fmt-date ::= fmt-year "-" fmt-month-day | fmt-leap-year "-02-29"
fmt-year ::= [0-9]{4}
fmt-leap-year ::= [0-9]{2} ("0" [48] | [2468] [048] | [13579] [26]) | ("0" [48] | [2468] [048] | [13579] [26]) "00"
fmt-month-day ::= ("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8])
fmt-time ::= ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])
fmt-date-time ::= fmt-date "T" fmt-time
fmt-uuid ::= [0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}
fmt-email ::= fmt-email-atom ("." fmt-email-atom)* "@" (fmt-label ".")+ fmt-label
fmt-email-atom ::= [a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,64}
fmt-label ::= [a-zA-Z0-9] ([a-zA-Z0-9-]{0,61} [a-zA-Z0-9])?
fmt-ipv4 ::= fmt-octet "." fmt-octet "." fmt-octet "." fmt-octet
fmt-octet ::= "25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9]? [0-9]
)";

const std::set<std::string>& formats() {
  static const std::set<std::string> f{"date", "time", "date-time", "uuid", "email", "ipv4"};
  return f;
}

// Keywords the compiler enforces.
const std::set<std::string>& supported_keywords() {
  static const std::set<std::string> k{"type",
                                       "nullable",
                                       "properties",
                                       "required",
                                       "additionalProperties",
                                       "items",
                                       "prefixItems",
                                       "additionalItems",
                                       "minItems",
                                       "maxItems",
                                       "uniqueItems",
                                       "enum",
                                       "const",
                                       "anyOf",
                                       "oneOf",
                                       "allOf",
                                       "$ref",
                                       "$defs",
                                       "definitions",
                                       "minLength",
                                       "maxLength",
                                       "pattern",
                                       "format",
                                       "minimum",
                                       "maximum",
                                       "exclusiveMinimum",
                                       "exclusiveMaximum"};
  return k;
}

// JSON Schema keywords that constrain values but that a grammar here does not enforce: each is
// refused by name. Keywords outside both lists are annotations (title, description, default,
// examples, $schema, $id, $comment, vendor extensions) and change nothing.
const std::set<std::string>& refused_keywords() {
  static const std::set<std::string> k{"not",
                                       "if",
                                       "then",
                                       "else",
                                       "patternProperties",
                                       "propertyNames",
                                       "dependentRequired",
                                       "dependentSchemas",
                                       "dependencies",
                                       "unevaluatedProperties",
                                       "unevaluatedItems",
                                       "contains",
                                       "minContains",
                                       "maxContains",
                                       "minProperties",
                                       "maxProperties",
                                       "multipleOf",
                                       "$dynamicRef",
                                       "$recursiveRef",
                                       "contentSchema"};
  return k;
}

// A GBNF literal for the JSON text of a value.
std::string json_literal(const Json& v) {
  return gbnf_literal(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string rule_safe(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '-';
  }
  if (out.empty()) out = "x";
  return out.substr(0, 40);
}

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const Json& root) : root_(root) {}

  Result<std::string> compile() {
    DUET_ASSIGN(top, visit(root_, "#", "root"));
    std::string out = "root ::= [ \\t\\n]{0,4} " + top + "\n";
    out += kJsonPrimitives;
    if (used_formats_) out += kFormatRules;
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  Status fail(const std::string& path, const std::string& what) const {
    return Status::error("JSON schema at " + path + ": " + what);
  }

  // A boolean keyword (nullable, uniqueItems): false when absent, an error when not a boolean.
  Result<bool> flag(const Json& s, const char* key, const std::string& path) const {
    const auto it = s.find(key);
    if (it == s.end()) return false;
    if (!it->is_boolean()) return fail(path, std::string(key) + " must be true or false");
    return it->get<bool>();
  }

  // A new rule named after `hint`, defined later by `define` (so recursion can refer to it).
  std::string reserve(const std::string& hint) {
    std::string base = rule_safe(hint), name = base;
    for (int i = 2; names_.contains(name); ++i) name = base + "-" + std::to_string(i);
    names_.insert(name);
    return name;
  }
  void define(const std::string& name, const std::string& body) { rules_.emplace_back(name, body); }
  std::string add_rule(const std::string& hint, const std::string& body) {
    const std::string name = reserve(hint);
    define(name, body);
    return name;
  }

  Result<const Json*> resolve(const std::string& ref, const std::string& path) const {
    if (ref.empty() || ref[0] != '#')
      return fail(path, "$ref " + ref + " is not inside the schema");
    const Json* at = &root_;
    size_t pos = 1;
    if (pos < ref.size() && ref[pos] != '/')
      return fail(path, "$ref " + ref + " is not a JSON pointer");
    while (pos < ref.size()) {
      size_t next = ref.find('/', pos + 1);
      if (next == std::string::npos) next = ref.size();
      std::string token = ref.substr(pos + 1, next - pos - 1);
      // A fragment is URI-encoded first (%25 is "%"), then a JSON pointer (~1 "/", ~0 "~").
      for (size_t i = 0; (i = token.find('%', i)) != std::string::npos; ++i) {
        std::string err;
        size_t at = i + 1;
        const auto v = read_hex_scalar(token, at, 2, err);
        if (v) token.replace(i, 3, std::string(1, static_cast<char>(*v)));
      }
      for (size_t i; (i = token.find("~1")) != std::string::npos;) token.replace(i, 2, "/");
      for (size_t i; (i = token.find("~0")) != std::string::npos;) token.replace(i, 2, "~");
      if (at->is_object() && at->contains(token)) {
        at = &(*at)[token];
      } else if (at->is_array() && !token.empty() &&
                 token.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoul(token) < at->size()) {
        at = &(*at)[std::stoul(token)];
      } else {
        return fail(path, "$ref " + ref + " points at nothing");
      }
      pos = next;
    }
    return at;
  }

  // Which keywords of `s` constrain values (not annotations, not $defs).
  static bool has_constraints(const Json& s, std::initializer_list<const char*> besides) {
    for (const auto& [k, v] : s.items()) {
      if (!supported_keywords().contains(k) || k == "$defs" || k == "definitions") continue;
      bool skip = false;
      for (const char* b : besides) skip = skip || k == b;
      if (!skip) return true;
    }
    return false;
  }

  static Json without(const Json& s, std::initializer_list<const char*> keys) {
    Json out = s;
    for (const char* k : keys) out.erase(k);
    return out;
  }

  Result<std::string> visit(const Json& s, const std::string& path, const std::string& hint) {
    if (++depth_ > 200) return fail(path, "the schema nests too deeply");
    auto r = visit_inner(s, path, hint);
    --depth_;
    return r;
  }

  Result<std::string> visit_inner(const Json& s, const std::string& path, const std::string& hint) {
    if (s.is_boolean())
      return s.get<bool>() ? Result<std::string>(std::string("json-value"))
                           : Result<std::string>(fail(path, "the schema false matches nothing"));
    if (!s.is_object()) return fail(path, "a schema must be an object or a boolean");
    for (const auto& [k, v] : s.items())
      if (refused_keywords().contains(k)) return fail(path, "keyword " + k + " is not supported");

    if (const auto it = s.find("$ref"); it != s.end()) {
      if (!it->is_string()) return fail(path, "$ref must be a string");
      const std::string ref = it->get<std::string>();
      DUET_ASSIGN(target, resolve(ref, path));
      if (has_constraints(s, {"$ref"})) {
        Json merged = Json::object();
        merged["allOf"] = Json::array({*target, without(s, {"$ref", "$defs", "definitions"})});
        return visit(merged, path, hint);
      }
      if (auto known = refs_.find(ref); known != refs_.end()) return known->second;
      const size_t slash = ref.rfind('/');
      const std::string name = reserve(
          "def-" + (slash == std::string::npos ? std::string("root") : ref.substr(slash + 1)));
      refs_.emplace(ref, name);
      DUET_ASSIGN(body, visit(*target, ref, name));
      define(name, body);
      return name;
    }
    if (const auto it = s.find("allOf"); it != s.end()) {
      if (!it->is_array() || it->empty()) return fail(path, "allOf must be a non-empty array");
      Json merged = without(s, {"allOf", "$defs", "definitions"});
      for (size_t i = 0; i < it->size(); ++i) {
        const std::string p = path + "/allOf/" + std::to_string(i);
        DUET_ASSIGN(part, flatten((*it)[i], p));
        DUET_ASSIGN(m, merge(merged, part, p));
        merged = std::move(m);
      }
      return visit(merged, path, hint);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      const auto it = s.find(key);
      if (it == s.end()) continue;
      if (!it->is_array() || it->empty())
        return fail(path, std::string(key) + " must be a non-empty array");
      const Json base = without(s, {"anyOf", "oneOf", "$defs", "definitions"});
      std::vector<Json> branches;
      for (size_t i = 0; i < it->size(); ++i) {
        const std::string p = path + "/" + key + "/" + std::to_string(i);
        DUET_ASSIGN(part, flatten((*it)[i], p));
        DUET_ASSIGN(m, merge(base, part, p));
        branches.push_back(std::move(m));
      }
      // oneOf is anyOf when no value can match two branches; otherwise "exactly one" is
      // beyond a grammar.
      if (std::string(key) == "oneOf")
        for (size_t i = 0; i < branches.size(); ++i)
          for (size_t j = i + 1; j < branches.size(); ++j)
            if (!disjoint(branches[i], branches[j]))
              return fail(path, "oneOf branches " + std::to_string(i) + " and " +
                                    std::to_string(j) +
                                    " may match the same value, and a grammar cannot enforce "
                                    "\"exactly one\" (anyOf would be enforced)");
      // Branches are compiled as written when nothing surrounds them (a $ref stays a rule
      // reference, so recursive schemas stay finite), merged with the surroundings otherwise.
      const bool plain = !has_constraints(base, {});
      std::vector<std::string> alts;
      for (size_t i = 0; i < branches.size(); ++i) {
        DUET_ASSIGN(a, visit(plain ? (*it)[i] : branches[i],
                             path + "/" + key + "/" + std::to_string(i), hint));
        alts.push_back(a);
      }
      return gbnf_alternation(alts);
    }
    if (const auto it = s.find("const"); it != s.end()) return json_literal(*it);
    if (const auto it = s.find("enum"); it != s.end()) {
      if (!it->is_array() || it->empty()) return fail(path, "enum must be a non-empty array");
      std::vector<std::string> alts;
      for (const Json& v : *it) alts.push_back(json_literal(v));
      return gbnf_alternation(alts);
    }

    std::vector<std::string> types;
    if (const auto it = s.find("type"); it != s.end()) {
      if (it->is_string()) {
        types.push_back(it->get<std::string>());
      } else if (it->is_array() && !it->empty()) {
        for (const Json& t : *it) {
          if (!t.is_string()) return fail(path, "type entries must be strings");
          types.push_back(t.get<std::string>());
        }
      } else {
        return fail(path, "type must be a string or a non-empty array");
      }
    } else {
      types = inferred_types(s);
    }
    DUET_ASSIGN(nullable, flag(s, "nullable", path));
    if (nullable) types.push_back("null");
    if (types.empty()) return std::string("json-value");
    std::vector<std::string> alts;
    for (const std::string& t : types) {
      DUET_ASSIGN(a, visit_type(s, t, path, hint));
      alts.push_back(a);
    }
    return gbnf_alternation(alts);
  }

  // The JSON types a flattened schema admits ("integer" counts as "number"); every type when
  // it does not say.
  static std::set<std::string> admitted_types(const Json& s) {
    static const std::set<std::string> all{"null",  "boolean", "object",
                                           "array", "number",  "string"};
    auto type_of = [](const Json& v) -> std::string {
      return v.is_null()      ? "null"
             : v.is_boolean() ? "boolean"
             : v.is_object()  ? "object"
             : v.is_array()   ? "array"
             : v.is_number()  ? "number"
                              : "string";
    };
    if (s.contains("anyOf") || s.contains("oneOf")) return all;
    std::set<std::string> t;
    if (const auto c = s.find("const"); c != s.end()) return {type_of(*c)};
    if (const auto e = s.find("enum"); e != s.end() && e->is_array()) {
      for (const Json& v : *e) t.insert(type_of(v));
      return t;
    }
    std::vector<std::string> named;
    if (const auto ty = s.find("type"); ty != s.end()) {
      if (ty->is_string()) named.push_back(ty->get<std::string>());
      if (ty->is_array())
        for (const Json& x : *ty)
          if (x.is_string()) named.push_back(x.get<std::string>());
    } else {
      named = inferred_types(s);
    }
    for (const std::string& n : named) t.insert(n == "integer" ? "number" : n);
    if (t.empty()) return all;
    if (const auto n = s.find("nullable"); n != s.end() && *n == true) t.insert("null");
    return t;
  }

  // The values a schema allows when it lists them (const or enum).
  static std::optional<std::vector<Json>> listed_values(const Json& s) {
    if (const auto c = s.find("const"); c != s.end()) return std::vector<Json>{*c};
    if (const auto e = s.find("enum"); e != s.end() && e->is_array())
      return std::vector<Json>(e->begin(), e->end());
    return std::nullopt;
  }

  static bool share_a_value(const std::vector<Json>& a, const std::vector<Json>& b) {
    for (const Json& x : a)
      if (std::find(b.begin(), b.end(), x) != b.end()) return true;
    return false;
  }

  // No value can match both (flattened) schemas: their types differ, their listed values
  // differ, or a property both require lists different values (a discriminator).
  static bool disjoint(const Json& a, const Json& b) {
    const std::set<std::string> ta = admitted_types(a), tb = admitted_types(b);
    bool common_type = false;
    for (const std::string& t : ta) common_type = common_type || tb.contains(t);
    if (!common_type) return true;
    const auto va = listed_values(a), vb = listed_values(b);
    if (va && vb && !share_a_value(*va, *vb)) return true;
    const auto pa = a.find("properties"), pb = b.find("properties");
    const auto ra = a.find("required"), rb = b.find("required");
    if (pa == a.end() || pb == b.end() || ra == a.end() || rb == b.end() || !pa->is_object() ||
        !pb->is_object() || !ra->is_array() || !rb->is_array())
      return false;
    for (const auto& [name, sa] : pa->items()) {
      if (!pb->contains(name) || std::find(ra->begin(), ra->end(), Json(name)) == ra->end() ||
          std::find(rb->begin(), rb->end(), Json(name)) == rb->end())
        continue;
      const auto xa = listed_values(sa), xb = listed_values((*pb)[name]);
      if (xa && xb && !share_a_value(*xa, *xb)) return true;
    }
    return false;
  }

  // Without "type", the keywords say which types are meant.
  static std::vector<std::string> inferred_types(const Json& s) {
    std::vector<std::string> t;
    auto any = [&](std::initializer_list<const char*> keys) {
      for (const char* k : keys)
        if (s.contains(k)) return true;
      return false;
    };
    if (any({"properties", "required", "additionalProperties"})) t.push_back("object");
    if (any({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"})) t.push_back("array");
    if (any({"minLength", "maxLength", "pattern", "format"})) t.push_back("string");
    if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) t.push_back("number");
    return t;
  }

  // A member of allOf/anyOf with its own $ref and allOf resolved into one object.
  Result<Json> flatten(const Json& s, const std::string& path) {
    if (s.is_boolean()) {
      if (s.get<bool>()) return Json::object();
      return fail(path, "the schema false matches nothing");
    }
    if (!s.is_object()) return fail(path, "a schema must be an object or a boolean");
    if (++depth_ > 200) return fail(path, "the schema nests too deeply");
    Json out = s;
    if (const auto it = s.find("$ref"); it != s.end() && it->is_string()) {
      DUET_ASSIGN(target, resolve(it->get<std::string>(), path));
      DUET_ASSIGN(t, flatten(*target, it->get<std::string>()));
      DUET_ASSIGN(m, merge(without(s, {"$ref"}), t, path));
      out = std::move(m);
    }
    if (const auto it = out.find("allOf"); it != out.end() && it->is_array()) {
      Json merged = without(out, {"allOf"});
      for (size_t i = 0; i < it->size(); ++i) {
        DUET_ASSIGN(part, flatten((*it)[i], path + "/allOf/" + std::to_string(i)));
        DUET_ASSIGN(m, merge(merged, part, path));
        merged = std::move(m);
      }
      out = std::move(merged);
    }
    --depth_;
    return out;
  }

  // Two schemas that must both hold, as one (the keywords this compiler knows how to combine).
  Result<Json> merge(const Json& a, const Json& b, const std::string& path) {
    Json out = a;
    for (const auto& [k, v] : b.items()) {
      if (!out.contains(k)) {
        out[k] = v;
        continue;
      }
      Json& mine = out[k];
      if (mine == v) continue;
      if (k == "properties" && mine.is_object() && v.is_object()) {
        for (const auto& [name, sub] : v.items()) {
          if (!mine.contains(name))
            mine[name] = sub;
          else if (mine[name] != sub)
            mine[name] = Json{{"allOf", Json::array({mine[name], sub})}};
        }
      } else if (k == "required" && mine.is_array() && v.is_array()) {
        for (const Json& r : v)
          if (std::find(mine.begin(), mine.end(), r) == mine.end()) mine.push_back(r);
      } else if (k == "type") {
        auto as_set = [](const Json& t) {
          std::set<std::string> s;
          if (t.is_string()) s.insert(t.get<std::string>());
          if (t.is_array())
            for (const Json& x : t)
              if (x.is_string()) s.insert(x.get<std::string>());
          return s;
        };
        std::set<std::string> x = as_set(mine), y = as_set(v), both;
        for (const std::string& t : x) {
          if (y.contains(t))
            both.insert(t);
          else if (t == "integer" && y.contains("number"))
            both.insert("integer");
          else if (t == "number" && y.contains("integer"))
            both.insert("integer");
        }
        if (both.empty()) return fail(path, "allOf asks for types that exclude each other");
        mine = Json(std::vector<std::string>(both.begin(), both.end()));
      } else if (k == "minimum" || k == "exclusiveMinimum" || k == "minLength" || k == "minItems") {
        if (v.is_number() && mine.is_number()) mine = std::max(mine.get<double>(), v.get<double>());
      } else if (k == "maximum" || k == "exclusiveMaximum" || k == "maxLength" || k == "maxItems") {
        if (v.is_number() && mine.is_number()) mine = std::min(mine.get<double>(), v.get<double>());
      } else if (k == "additionalProperties") {
        if (mine == false || v == false)
          mine = false;
        else
          mine = Json{{"allOf", Json::array({mine, v})}};
      } else if (k == "items") {
        mine = Json{{"allOf", Json::array({mine, v})}};
      } else if (k == "enum" && mine.is_array() && v.is_array()) {
        Json both = Json::array();
        for (const Json& e : mine)
          if (std::find(v.begin(), v.end(), e) != v.end()) both.push_back(e);
        if (both.empty()) return fail(path, "allOf: the enums share no value");
        mine = both;
      } else if (supported_keywords().contains(k) && k != "$defs" && k != "definitions") {
        return fail(path, "allOf: cannot combine two different values of " + k);
      }
    }
    return out;
  }

  Result<std::string> visit_type(const Json& s, const std::string& type, const std::string& path,
                                 const std::string& hint) {
    if (type == "null") return std::string("json-null");
    if (type == "boolean") return std::string("json-bool");
    if (type == "string") return string_rule(s, path, hint);
    if (type == "integer" || type == "number") return number_rule(s, type == "integer", path);
    if (type == "object") return object_rule(s, path, hint);
    if (type == "array") return array_rule(s, path, hint);
    return fail(path, "unknown type " + type);
  }

  Result<std::optional<int64_t>> get_count(const Json& s, const char* key,
                                           const std::string& path) {
    const auto it = s.find(key);
    if (it == s.end()) return std::optional<int64_t>();
    if (!it->is_number() || it->get<double>() < 0 ||
        std::floor(it->get<double>()) != it->get<double>())
      return fail(path, std::string(key) + " must be a non-negative integer");
    // Capped before the conversion (a count beyond any limit below is refused there anyway).
    return std::optional<int64_t>(static_cast<int64_t>(std::min(it->get<double>(), 1e15)));
  }

  Result<std::string> string_rule(const Json& s, const std::string& path, const std::string& hint) {
    DUET_ASSIGN(min_len, get_count(s, "minLength", path));
    DUET_ASSIGN(max_len, get_count(s, "maxLength", path));
    const bool lengths = min_len.has_value() || max_len.has_value();
    if (const auto it = s.find("format"); it != s.end()) {
      if (!it->is_string() || !formats().contains(it->get<std::string>()))
        return fail(path, "format " + it->dump() +
                              " is not supported (date, time, date-time, uuid, email, ipv4 are)");
      if (lengths || s.contains("pattern"))
        return fail(path, "format cannot be combined with minLength, maxLength or pattern");
      used_formats_ = true;
      return "\"\\\"\" fmt-" + it->get<std::string>() + " \"\\\"\"";
    }
    if (const auto it = s.find("pattern"); it != s.end()) {
      if (!it->is_string()) return fail(path, "pattern must be a string");
      if (lengths) return fail(path, "pattern cannot be combined with minLength or maxLength");
      RegexLimits limits;
      limits.unbounded_max = -1;
      auto body = regex_to_gbnf(it->get<std::string>(), RegexTarget::kJsonString, limits);
      if (!body) return fail(path, "pattern: " + body.status().message());
      return add_rule(hint + "-string", "\"\\\"\" " + body.value() + " \"\\\"\"");
    }
    if (!lengths) return std::string("json-string");
    const int64_t lo = min_len.value_or(0);
    if (max_len && *max_len < lo) return fail(path, "maxLength is below minLength");
    if (lo > 10000 || max_len.value_or(0) > 10000)
      return fail(path, "minLength and maxLength above 10000 are not supported");
    return "\"\\\"\" json-char{" + std::to_string(lo) + "," +
           (max_len ? std::to_string(*max_len) : std::string()) + "} \"\\\"\"";
  }

  Result<std::string> number_rule(const Json& s, bool integer, const std::string& path) {
    struct Raw {
      double value;
      bool exclusive;
      std::string text;  // as written, for exact decimal bounds
    };
    std::optional<Raw> lo, hi;
    auto read = [&](const char* key, bool exclusive, std::optional<Raw>& into,
                    bool lower) -> Status {
      const auto it = s.find(key);
      if (it == s.end()) return Status::ok();
      if (it->is_boolean()) return Status::ok();  // draft-4 exclusive flags: read below
      if (!it->is_number()) return fail(path, std::string(key) + " must be a number");
      Raw r{it->get<double>(), exclusive, it->dump()};
      if (!into || (lower ? r.value > into->value || (r.value == into->value && exclusive)
                          : r.value < into->value || (r.value == into->value && exclusive)))
        into = r;
      return Status::ok();
    };
    DUET_TRY(read("minimum", false, lo, true));
    DUET_TRY(read("exclusiveMinimum", true, lo, true));
    DUET_TRY(read("maximum", false, hi, false));
    DUET_TRY(read("exclusiveMaximum", true, hi, false));
    // Draft 4: "exclusiveMinimum": true makes minimum exclusive.
    if (lo && s.value("exclusiveMinimum", Json()) == true) lo->exclusive = true;
    if (hi && s.value("exclusiveMaximum", Json()) == true) hi->exclusive = true;
    if (!lo && !hi) return std::string(integer ? "json-integer" : "json-number");
    for (const auto& b : {lo, hi})
      if (b && std::fabs(b->value) > static_cast<double>(kMaxBoundMagnitude))
        return fail(path, "bounds beyond 10^15 are not supported");
    std::string body;
    if (integer) {
      std::optional<int64_t> a, b;
      if (lo)
        a = static_cast<int64_t>(lo->exclusive ? std::floor(lo->value) + 1 : std::ceil(lo->value));
      if (hi)
        b = static_cast<int64_t>(hi->exclusive ? std::ceil(hi->value) - 1 : std::floor(hi->value));
      body = integer_range_gbnf(a, b);
    } else {
      auto exact = [&](const Raw& r) -> Result<Bound> {
        auto b = bound_from_decimal_text(r.text, r.exclusive);
        if (!b)
          return fail(path, "the bound " + r.text + " has more than " +
                                std::to_string(kMaxBoundFractionDigits) + " decimal places");
        return *b;
      };
      std::optional<Bound> a, b;
      if (lo) {
        DUET_ASSIGN(v, exact(*lo));
        a = v;
      }
      if (hi) {
        DUET_ASSIGN(v, exact(*hi));
        b = v;
      }
      body = decimal_range_gbnf(a, b);
    }
    if (body.empty()) return fail(path, "no number lies between the bounds");
    return body;
  }

  Result<std::string> object_rule(const Json& s, const std::string& path, const std::string& hint) {
    struct Prop {
      std::string key;
      std::string value;  // GBNF expression
      bool required;
    };
    std::set<std::string> required;
    if (const auto it = s.find("required"); it != s.end()) {
      if (!it->is_array()) return fail(path, "required must be an array");
      for (const Json& r : *it) {
        if (!r.is_string()) return fail(path, "required entries must be strings");
        required.insert(r.get<std::string>());
      }
    }
    std::vector<Prop> props;
    std::set<std::string> listed;
    if (const auto it = s.find("properties"); it != s.end()) {
      if (!it->is_object()) return fail(path, "properties must be an object");
      for (const auto& [key, sub] : it->items()) {
        DUET_ASSIGN(v, visit(sub, path + "/properties/" + key, hint + "-" + key));
        props.push_back({key, v, required.contains(key)});
        listed.insert(key);
      }
    }
    for (const std::string& r : required)
      if (!listed.contains(r)) props.push_back({r, "json-value", true});
    // Extra members: what additionalProperties allows (nothing, by default, when properties
    // are listed).
    std::string extra;
    const auto ap = s.find("additionalProperties");
    if (ap == s.end()) {
      if (!s.contains("properties") && !s.contains("required")) extra = "json-value";
    } else if (ap->is_boolean()) {
      if (ap->get<bool>()) extra = "json-value";
    } else {
      DUET_ASSIGN(v, visit(*ap, path + "/additionalProperties", hint + "-extra"));
      extra = v;
    }
    const std::string extra_member = extra.empty() ? "" : "json-string ws \":\" ws " + extra;
    auto member = [&](const Prop& p) {
      return json_literal(Json(p.key)) + " ws \":\" ws " + p.value;
    };
    const std::string sep = "ws \",\" ws ";
    const std::string name = reserve(hint + "-object");
    bool all_required = true;
    for (const Prop& p : props) all_required = all_required && p.required;
    if (all_required) {
      std::string body = "\"{\" ws ";
      for (size_t i = 0; i < props.size(); ++i) body += (i ? sep : "") + member(props[i]) + " ";
      if (!extra_member.empty())
        body += props.empty() ? "(" + extra_member + " (" + sep + extra_member + ")*)? "
                              : "(" + sep + extra_member + ")* ";
      define(name, body + "ws \"}\"");
      return name;
    }
    // Optional members: rules first-i (nothing written yet) and rest-i (something was), so
    // commas go exactly between members.
    const size_t n = props.size();
    std::vector<std::string> first(n + 1), rest(n + 1);
    for (size_t i = 0; i <= n; ++i) {
      first[i] = reserve(name + "-f" + std::to_string(i));
      rest[i] = reserve(name + "-r" + std::to_string(i));
    }
    define(first[n],
           extra_member.empty() ? "\"\"" : "(" + extra_member + " (" + sep + extra_member + ")*)?");
    define(rest[n], extra_member.empty() ? "\"\"" : "(" + sep + extra_member + ")*");
    for (size_t i = 0; i < n; ++i) {
      const std::string m = member(props[i]);
      if (props[i].required) {
        define(first[i], m + " " + rest[i + 1]);
        define(rest[i], sep + m + " " + rest[i + 1]);
      } else {
        define(first[i], m + " " + rest[i + 1] + " | " + first[i + 1]);
        define(rest[i], sep + m + " " + rest[i + 1] + " | " + rest[i + 1]);
      }
    }
    define(name, "\"{\" ws " + first[0] + " ws \"}\"");
    return name;
  }

  Result<std::string> array_rule(const Json& s, const std::string& path, const std::string& hint) {
    DUET_ASSIGN(min_items, get_count(s, "minItems", path));
    DUET_ASSIGN(max_items, get_count(s, "maxItems", path));
    if (max_items && min_items && *max_items < *min_items)
      return fail(path, "maxItems is below minItems");
    DUET_ASSIGN(unique, flag(s, "uniqueItems", path));
    if (unique && !(max_items && *max_items <= 1))
      return fail(path, "uniqueItems cannot be enforced (only with maxItems of at most 1)");
    if (max_items.value_or(0) > 10000 || min_items.value_or(0) > 10000)
      return fail(path, "minItems and maxItems above 10000 are not supported");
    // A tuple: prefixItems then items (2020-12), or items as an array then additionalItems
    // (drafts 4 to 7).
    const auto tuple_it = s.find("items") != s.end() && s.find("items")->is_array()
                              ? s.find("items")
                              : s.find("prefixItems");
    const char* rest_key =
        tuple_it != s.end() && tuple_it.key() == "items" ? "additionalItems" : "items";
    std::vector<std::string> prefix;
    if (tuple_it != s.end()) {
      if (!tuple_it->is_array()) return fail(path, "prefixItems must be an array");
      for (size_t i = 0; i < tuple_it->size(); ++i) {
        DUET_ASSIGN(v, visit((*tuple_it)[i], path + "/" + tuple_it.key() + "/" + std::to_string(i),
                             hint + "-" + std::to_string(i)));
        prefix.push_back(v);
      }
    }
    std::string item = "json-value";
    bool more = true;
    if (const auto it = s.find(rest_key); it != s.end()) {
      if (it->is_array()) return fail(path, std::string(rest_key) + " must be a schema");
      if (*it == false) {
        more = false;
      } else {
        DUET_ASSIGN(v, visit(*it, path + "/" + rest_key, hint + "-item"));
        item = v;
      }
    }
    // Prefix items are all written (a shorter array is valid, a full one too), up to maxItems.
    const int64_t n_prefix =
        std::min<int64_t>(static_cast<int64_t>(prefix.size()), max_items.value_or(INT64_MAX));
    const int64_t min_more = std::max<int64_t>(0, min_items.value_or(0) - n_prefix);
    if (!more && min_more > 0)
      return fail(path, "minItems needs more items than prefixItems allows");
    const int64_t max_more = !more ? 0 : max_items ? *max_items - n_prefix : -1;
    const std::string sep = "ws \",\" ws ";
    std::string body = "\"[\" ws ";
    for (int64_t i = 0; i < n_prefix; ++i) body += (i ? sep : "") + prefix[i] + " ";
    auto bounds = [](int64_t lo, int64_t hi) {
      return "{" + std::to_string(lo) + "," + (hi < 0 ? std::string() : std::to_string(hi)) + "}";
    };
    if (max_more != 0) {
      if (n_prefix > 0) {
        body += "(" + sep + item + ")" + bounds(min_more, max_more) + " ";
      } else if (min_more == 0) {
        body += "(" + item + " (" + sep + item + ")" + bounds(0, max_more < 0 ? -1 : max_more - 1) +
                ")? ";
      } else {
        body += item + " (" + sep + item + ")" +
                bounds(min_more - 1, max_more < 0 ? -1 : max_more - 1) + " ";
      }
    }
    return add_rule(hint + "-array", body + "ws \"]\"");
  }

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::set<std::string> names_{"root",        "ws",           "json-value",  "json-object",
                               "json-member", "json-array",   "json-string", "json-char",
                               "json-number", "json-integer", "json-bool",   "json-null"};
  std::map<std::string, std::string> refs_;  // $ref → its rule
  bool used_formats_ = false;
  int depth_ = 0;
};

}  // namespace

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
  return SchemaCompiler(schema).compile();
}

std::string json_object_gbnf() {
  return std::string("root ::= [ \\t\\n]{0,4} json-object\n") + kJsonPrimitives;
}

std::string json_value_gbnf() {
  return std::string("root ::= [ \\t\\n]{0,4} json-value\n") + kJsonPrimitives;
}

}  // namespace duet::grammar
