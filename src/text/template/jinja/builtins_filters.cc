// Filters on single values: output formatting (tojson, string, indent, escape), strings,
// numbers, defaults. Filters over sequences are in builtins_sequences.cc. An undefined
// operand acts as Jinja2's Undefined: empty string, zero length, empty list. The string
// filters that are methods too keep provenance; tojson, indent and escape write client text.
#include "text/template/jinja/builtins_filters.h"

#include <cmath>

#include "text/template/jinja/text_util.h"

namespace duet::jinja {
namespace {

Result<Value> tojson(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  JsonStyle style;
  style.max_bytes = in.limits().max_output_bytes;
  if (const Value* indent = args.get(0, "indent"); indent && !indent->is_none()) {
    if (indent->kind() != Kind::kInt) return in.error(pos, "tojson(): indent must be an integer");
    if (indent->as_int() < 0 || indent->as_int() > 64)
      return in.error(pos, "tojson(): indent out of range");
    style.indent = static_cast<int>(indent->as_int());
  }
  for (const char* flag : {"ensure_ascii", "sort_keys"}) {
    if (const Value* f = args.kw(flag)) {
      if (f->kind() != Kind::kBool)
        return in.error(pos, std::string("tojson(): ") + flag + " must be a boolean");
      (flag[0] == 'e' ? style.ensure_ascii : style.sort_keys) = f->as_bool();
    }
  }
  if (const Value* seps = args.kw("separators"); seps && !seps->is_none()) {
    if (seps->kind() != Kind::kList || seps->list().items.size() != 2 ||
        !seps->list().items[0].is_string() || !seps->list().items[1].is_string())
      return in.error(pos, "tojson(): separators must be two strings");
    style.item_sep = seps->list().items[0].str();
    style.key_sep = seps->list().items[1].str();
    style.custom_separators = true;
  }
  auto json = to_json(v, style);
  if (!json) return in.error(pos, "tojson: " + json.message());
  DUET_TRY(in.charge_string(json->size()));
  return Value::string(std::move(json.value()));
}

Result<Value> indent(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  std::string pad = "    ";
  if (const Value* w = args.get(0, "width")) {
    if (w->kind() == Kind::kInt) {
      if (w->as_int() < 0 || static_cast<uint64_t>(w->as_int()) > in.limits().max_output_bytes)
        return in.error(pos, "indent(): width out of range");
      pad.assign(static_cast<size_t>(w->as_int()), ' ');
    } else if (w->is_string()) {
      pad = w->str();
    } else {
      return in.error(pos, "indent(): width must be an integer or a string");
    }
  }
  const Value* first = args.get(1, "first");
  const Value* blank = args.get(2, "blank");
  const bool indent_first = first && truthy(*first);
  const bool indent_blank = blank && truthy(*blank);
  JINJA_ASSIGN(std::string s, in.display_of(v, pos));
  std::string out;
  size_t line_start = 0;
  for (size_t line = 0;; ++line) {
    const size_t nl = s.find('\n', line_start);
    const size_t end = nl == std::string::npos ? s.size() : nl;
    const bool empty = end == line_start;
    if ((line > 0 || indent_first) && (!empty || indent_blank)) out += pad;
    out.append(s, line_start, end - line_start);
    DUET_TRY(in.check_size(out.size()));
    if (nl == std::string::npos) break;
    out += '\n';
    line_start = nl + 1;
  }
  DUET_TRY(in.charge_string(out.size()));
  return Value::string(std::move(out));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Leading integer of a string as JavaScript's parseInt reads it (Jinja2's int filter
// gives the same answer on the strings templates meet).
bool parse_leading_int(std::string_view s, int64_t& out) {
  s = trim(s);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  const size_t digits_start = i;
  __int128 v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (s[i++] - '0');
    if (v > static_cast<__int128>(INT64_MAX)) return false;
  }
  if (i == digits_start) return false;
  out = static_cast<int64_t>(neg ? -v : v);
  return true;
}

Result<Value> to_int(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  const Value* fallback = args.get(0, "default");
  const Value dflt = fallback ? *fallback : Value::integer(0);
  switch (v.kind()) {
    case Kind::kInt:
      return v;
    case Kind::kBool:
      return Value::integer(v.as_bool() ? 1 : 0);
    case Kind::kFloat: {
      const double t = std::trunc(v.as_float());
      if (!std::isfinite(t) || std::fabs(t) >= 9.2e18) return dflt;
      return Value::integer(static_cast<int64_t>(t));
    }
    case Kind::kString: {
      int64_t i = 0;
      return parse_leading_int(v.str(), i) ? Value::integer(i) : dflt;
    }
    default:
      return dflt;
  }
}

Result<Value> to_float(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  const Value* fallback = args.get(0, "default");
  const Value dflt = fallback ? *fallback : Value::number(0.0);
  switch (v.kind()) {
    case Kind::kInt:
    case Kind::kBool:
      return Value::number(v.as_double());
    case Kind::kFloat:
      return v;
    case Kind::kString: {
      const std::string s(trim(v.str()));
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      return end == s.c_str() ? dflt : Value::number(d);
    }
    default:
      return dflt;
  }
}

Result<Value> round_filter(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  if (!v.is_number() && v.kind() != Kind::kBool)
    return in.error(pos, std::string("round needs a number, not ") + type_name(v));
  int64_t precision = 0;
  if (const Value* p = args.get(0, "precision")) {
    if (p->kind() != Kind::kInt || p->as_int() < 0 || p->as_int() > 15)
      return in.error(pos, "round(): precision must be an integer from 0 to 15");
    precision = p->as_int();
  }
  std::string method = "common";
  if (const Value* m = args.get(1, "method")) {
    if (!m->is_string()) return in.error(pos, "round(): method must be a string");
    method = m->str();
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = v.as_double() * scale;
  double r;
  if (method == "common") {
    r = std::round(x);  // half away from zero, as Jinja2's 'common'
  } else if (method == "ceil") {
    r = std::ceil(x);
  } else if (method == "floor") {
    r = std::floor(x);
  } else {
    return in.error(pos, "round(): method must be common, ceil or floor");
  }
  return Value::number(r / scale);
}

Result<Value> string_filter_via_method(Interpreter& in, const std::string& method, const Value& v,
                                       const Args& args, Pos pos) {
  if (v.is_undefined()) return Value::string("");
  if (!v.is_string())
    return in.error(pos, "'" + method + "' needs a string, not " + std::string(type_name(v)));
  return call_method(in, v, method, args, pos);
}

}  // namespace

Result<Value> Interpreter::apply_filter(const std::string& name, const Value& v, const Args& args,
                                        Scope& scope, Pos pos) {
  if (name == "safe") return v;
  if (name == "tojson") return tojson(*this, v, args, pos);
  if (name == "string") {
    JINJA_ASSIGN(MarkedText s, marked_display_of(v, pos));
    return Value::string(std::move(s));
  }
  if (name == "trim") {
    Args strip_args;
    if (const Value* chars = args.get(0, "chars")) strip_args.positional.push_back(*chars);
    return string_filter_via_method(*this, "strip", v, strip_args, pos);
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize" ||
      name == "replace")
    return string_filter_via_method(*this, name, v, args, pos);
  if (name == "indent") return indent(*this, v, args, pos);
  if (name == "e" || name == "escape") {
    JINJA_ASSIGN(std::string s, display_of(v, pos));
    DUET_TRY(charge_string(s.size() * 5));
    return Value::string(html_escape(s));
  }
  if (name == "default" || name == "d") {
    const Value* fallback = args.get(0, "default_value");
    const Value* boolean = args.get(1, "boolean");
    const bool use = v.is_undefined() || (boolean && truthy(*boolean) && !truthy(v));
    if (!use) return v;
    return fallback ? *fallback : Value::string("");
  }
  if (name == "int") return to_int(*this, v, args, pos);
  if (name == "float") return to_float(*this, v, args, pos);
  if (name == "abs") {
    if (v.kind() == Kind::kInt) {
      if (v.as_int() == INT64_MIN) return error(pos, "integer overflow in abs");
      return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.kind() == Kind::kFloat) return Value::number(std::fabs(v.as_float()));
    if (v.kind() == Kind::kBool) return Value::integer(v.as_bool() ? 1 : 0);
    return error(pos, std::string("abs needs a number, not ") + type_name(v));
  }
  if (name == "round") return round_filter(*this, v, args, pos);
  if (name == "bool") return Value::boolean(truthy(v));
  return sequence_filter(*this, name, v, args, scope, pos);
}

}  // namespace duet::jinja
