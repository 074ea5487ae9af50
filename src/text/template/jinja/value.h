// The values a template computes with: undefined, none, bool, int, float, string, list,
// dict (insertion-ordered), namespace (the one mutable container) and callable (macros,
// global functions, methods bound to a value). Strings and containers are shared, so
// copying a value is O(1) however large it is. A string knows which of its bytes the
// template wrote (text/marked_text.h); Value::string(std::string) is client text.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "text/tokenizer/marked_text.h"

namespace duet::jinja {

struct MacroStmt;  // ast.h
class Value;

// Containers deeper than this are refused (each level costs stack in the serializers and
// destructors), and so are JSON contexts nested deeper.
constexpr int kMaxValueDepth = 512;

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kDict,
  kNamespace,
  kCallable
};

struct List {
  std::vector<Value> items;
};

class Dict;
struct Namespace;

struct Callable {
  enum class Type { kMacro, kGlobal, kMethod };
  Type type = Type::kGlobal;
  std::string name;                   // macro, global function or method name
  const MacroStmt* macro = nullptr;   // kMacro: owned by the template
  std::shared_ptr<const Value> self;  // kMethod: the value the method is bound to
};

class Value {
 public:
  Value() = default;  // undefined
  static Value none() { return Value(Payload(std::in_place_index<1>, NoneTag{})); }
  static Value boolean(bool b) { return Value(Payload(std::in_place_index<2>, b)); }
  static Value integer(int64_t i) { return Value(Payload(std::in_place_index<3>, i)); }
  static Value number(double d) { return Value(Payload(std::in_place_index<4>, d)); }
  static Value string(std::string s);  // client text
  static Value string(MarkedText s);
  static Value trusted_string(std::string s);  // the template's own text
  // Containers record their nesting depth and whether a namespace is inside.
  static Value list(std::vector<Value> items);
  static Value dict(Dict d);
  static Value ns(std::shared_ptr<Namespace> n);
  static Value callable(Callable c);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_number() const { return kind() == Kind::kInt || kind() == Kind::kFloat; }

  bool as_bool() const { return std::get<2>(v_); }
  int64_t as_int() const { return std::get<3>(v_); }
  double as_float() const { return std::get<4>(v_); }
  // Int, float or bool as a double.
  double as_double() const;
  const std::string& str() const { return std::get<5>(v_)->text; }
  const MarkedText& marked() const { return *std::get<5>(v_); }
  const List& list() const { return *std::get<6>(v_).value; }
  const Dict& dict() const { return *std::get<7>(v_).value; }
  Namespace& ns() const { return *std::get<8>(v_); }
  const Callable& callable() const { return *std::get<9>(v_); }

  int depth() const;           // 0 for scalars
  bool has_namespace() const;  // a namespace is this value or inside it
  // Same object (containers, callables) — for namespace identity.
  const void* identity() const;

 private:
  struct NoneTag {};
  template <typename T>
  struct Shared {
    std::shared_ptr<const T> value;
    int depth = 1;
    bool has_namespace = false;
  };
  using Payload = std::variant<std::monostate, NoneTag, bool, int64_t, double,
                               std::shared_ptr<const MarkedText>, Shared<List>, Shared<Dict>,
                               std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>;
  explicit Value(Payload p) : v_(std::move(p)) {}
  Payload v_;
};

// Defined after Value: a pair<std::string, Value> member needs Value complete (clang checks
// pair's constraints when the class is defined).
// Keys keep their first insertion position; setting an existing key replaces its value.
class Dict {
 public:
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string key, Value value);
  void reserve(size_t n) { entries_.reserve(n); }
  // For keys known to be new (building `loop`, converting JSON): skips the lookup.
  void add_new(std::string key, Value value);
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;  // built once the dict grows past a few keys
};

struct Namespace {
  Dict attrs;
};

// Python/Jinja truthiness; a namespace and a callable are true.
bool truthy(const Value& v);
// "undefined", "none", "boolean", "integer", "float", "string", "list", "dict", ...
const char* type_name(const Value& v);
// Jinja2 equality: numbers (and bools) by value, strings by bytes, containers deeply
// (dicts ignore order), namespaces and callables by identity; different types differ.
// `work` grows by the number of values compared.
bool values_equal(const Value& a, const Value& b, uint64_t& work);

// JSON text as @huggingface/jinja writes it (Python's json.dumps separators, key order as
// inserted, no escaping of non-ASCII unless asked).
struct JsonStyle {
  int indent = 0;  // 0: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool custom_separators = false;  // else ", " / ": " (or "," / ": " when indenting)
  std::string item_sep, key_sep;
  bool undefined_as_null = true;  // printing a list shows `undefined`, tojson shows `null`
  size_t max_bytes = SIZE_MAX;    // longer output is an error, checked as it grows
};
Result<std::string> to_json(const Value& v, const JsonStyle& style);
// Appends `s` as a JSON string literal.
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii);

// What `{{ v }}` prints: nothing for undefined and none, `true`/`false`, JavaScript's
// number formatting, containers as JSON. Callables cannot be printed.
Result<std::string> display(const Value& v, size_t max_bytes);
// JavaScript's Number.prototype.toString / JSON.stringify of a double.
std::string js_number(double d);
// @huggingface/jinja's float printing: integral values keep ".0" ("2.0", "-0.0").
std::string float_display(double d);

// s[begin, end) of a string value, each byte keeping the provenance it has in `s`.
Value substring(const Value& s, size_t begin, size_t end);

// Context JSON → values (objects keep their order). Integral floats become integers, as
// they do when JavaScript parses the same JSON. Strings are client text unless `trusted`.
Result<Value> from_json(const nlohmann::ordered_json& j, bool trusted = false);

}  // namespace duet::jinja
