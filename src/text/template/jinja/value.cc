#include "text/template/jinja/value.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "text/template/jinja/text_util.h"

namespace duet::jinja {
namespace {

constexpr size_t kIndexThreshold = 16;  // below this, a linear scan beats hashing

}  // namespace

const Value* Dict::find(std::string_view key) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

Value* Dict::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Dict*>(this)->find(key));
}

void Dict::set(std::string key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  if (!index_.empty()) index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  if (index_.empty() && entries_.size() > kIndexThreshold)
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
}

void Dict::add_new(std::string key, Value value) {
  assert(find(key) == nullptr);
  if (!index_.empty()) index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  if (index_.empty() && entries_.size() > kIndexThreshold)
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
}

Value Value::string(std::string s) { return string(MarkedText{std::move(s), {}}); }

Value Value::string(MarkedText s) {
  return Value(Payload(std::in_place_index<5>, std::make_shared<const MarkedText>(std::move(s))));
}

Value Value::trusted_string(std::string s) {
  MarkedText m{std::move(s), {}};
  if (!m.text.empty()) m.trusted.push_back({0, m.text.size()});
  return string(std::move(m));
}

Value Value::list(std::vector<Value> items) {
  Shared<List> s;
  for (const Value& v : items) {
    s.depth = std::max(s.depth, v.depth() + 1);
    s.has_namespace = s.has_namespace || v.has_namespace();
  }
  s.value = std::make_shared<const List>(List{std::move(items)});
  return Value(Payload(std::in_place_index<6>, std::move(s)));
}

Value Value::dict(Dict d) {
  Shared<Dict> s;
  for (const auto& [k, v] : d.entries()) {
    s.depth = std::max(s.depth, v.depth() + 1);
    s.has_namespace = s.has_namespace || v.has_namespace();
  }
  s.value = std::make_shared<const Dict>(std::move(d));
  return Value(Payload(std::in_place_index<7>, std::move(s)));
}

Value Value::ns(std::shared_ptr<Namespace> n) {
  return Value(Payload(std::in_place_index<8>, std::move(n)));
}

Value Value::callable(Callable c) {
  return Value(Payload(std::in_place_index<9>, std::make_shared<const Callable>(std::move(c))));
}

Value substring(const Value& s, size_t begin, size_t end) {
  MarkedText out;
  out.append(s.marked(), begin, end);
  return Value::string(std::move(out));
}

double Value::as_double() const {
  switch (kind()) {
    case Kind::kInt:
      return static_cast<double>(as_int());
    case Kind::kFloat:
      return as_float();
    case Kind::kBool:
      return as_bool() ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

int Value::depth() const {
  switch (kind()) {
    case Kind::kList:
      return std::get<6>(v_).depth;
    case Kind::kDict:
      return std::get<7>(v_).depth;
    case Kind::kNamespace: {
      int d = 1;
      for (const auto& [k, v] : ns().attrs.entries()) d = std::max(d, v.depth() + 1);
      return d;
    }
    case Kind::kCallable:
      return callable().self ? callable().self->depth() + 1 : 0;
    default:
      return 0;
  }
}

bool Value::has_namespace() const {
  switch (kind()) {
    case Kind::kList:
      return std::get<6>(v_).has_namespace;
    case Kind::kDict:
      return std::get<7>(v_).has_namespace;
    case Kind::kNamespace:
      return true;
    case Kind::kCallable:
      return callable().self && callable().self->has_namespace();
    default:
      return false;
  }
}

const void* Value::identity() const {
  switch (kind()) {
    case Kind::kList:
      return std::get<6>(v_).value.get();
    case Kind::kDict:
      return std::get<7>(v_).value.get();
    case Kind::kNamespace:
      return std::get<8>(v_).get();
    case Kind::kCallable:
      return std::get<9>(v_).get();
    case Kind::kString:
      return std::get<5>(v_).get();
    default:
      return nullptr;
  }
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int() != 0;
    case Kind::kFloat:
      return v.as_float() != 0.0 && !std::isnan(v.as_float());
    case Kind::kString:
      return !v.str().empty();
    case Kind::kList:
      return !v.list().items.empty();
    case Kind::kDict:
      return v.dict().size() > 0;
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "none";
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "namespace";
    case Kind::kCallable:
      return "function";
  }
  return "value";
}

bool values_equal(const Value& a, const Value& b, uint64_t& work) {
  ++work;
  const bool a_num = a.is_number() || a.kind() == Kind::kBool;
  const bool b_num = b.is_number() || b.kind() == Kind::kBool;
  if (a_num && b_num) {
    if (a.kind() == Kind::kInt && b.kind() == Kind::kInt) return a.as_int() == b.as_int();
    if (a.kind() == Kind::kBool && b.kind() == Kind::kBool) return a.as_bool() == b.as_bool();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      work += a.str().size() / 16;
      return a.str() == b.str();
    case Kind::kList: {
      const auto& x = a.list().items;
      const auto& y = b.list().items;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!values_equal(x[i], y[i], work)) return false;
      return true;
    }
    case Kind::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [k, v] : a.dict().entries()) {
        const Value* other = b.dict().find(k);
        if (other == nullptr || !values_equal(v, *other, work)) return false;
      }
      return true;
    }
    default:
      return a.identity() == b.identity();
  }
}

// ---------------------------------------------------------------- numbers

std::string js_number(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  std::string out;
  if (d < 0) {
    out = "-";
    d = -d;
  }
  // Shortest round-trip digits, then ECMAScript's Number::toString layout.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));  // "d.ddde+XX"
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  const int exp10 = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;  // value = 0.digits × 10^n
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out += '.';
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    const int e = n - 1;
    out += digits[0];
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += e < 0 ? "e-" : "e+";
    out += std::to_string(e < 0 ? -e : e);
  }
  return out;
}

std::string float_display(double d) {
  if (d == 0 && std::signbit(d)) return "-0.0";
  if (std::isfinite(d) && d == std::floor(d)) {
    if (std::fabs(d) >= 1e21) return js_number(d);  // toFixed falls back to toString here
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.1f", d);
    return buf;
  }
  return js_number(d);
}

// ---------------------------------------------------------------- JSON and printing

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  static const char kHex[] = "0123456789abcdef";
  auto u_escape = [&](uint32_t unit) {
    out += "\\u";
    out += kHex[(unit >> 12) & 0xF];
    out += kHex[(unit >> 8) & 0xF];
    out += kHex[(unit >> 4) & 0xF];
    out += kHex[unit & 0xF];
  };
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || (ensure_ascii && c == 0x7F)) {
            u_escape(c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    if (!ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // ensure_ascii: every UTF-16 code unit past 0x7E becomes \uXXXX.
    const uint32_t cp = decode_utf8(s, i);
    if (cp >= 0x10000) {
      u_escape(0xD800 + ((cp - 0x10000) >> 10));
      u_escape(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      u_escape(cp);
    }
  }
  out += '"';
}

namespace {

struct JsonWriter {
  const JsonStyle& style;
  std::string out;
  std::string item_sep, key_sep;

  Status write(const Value& v, int depth) {
    if (out.size() > style.max_bytes)
      return Status::error("output is longer than " + std::to_string(style.max_bytes) + " bytes");
    if (depth > kMaxValueDepth + 2) return Status::error("value nested too deeply for JSON");
    switch (v.kind()) {
      case Kind::kUndefined:
        out += style.undefined_as_null ? "null" : "undefined";
        return {};
      case Kind::kNone:
        out += "null";
        return {};
      case Kind::kBool:
        out += v.as_bool() ? "true" : "false";
        return {};
      case Kind::kInt:
        out += std::to_string(v.as_int());
        return {};
      case Kind::kFloat:
        out += std::isfinite(v.as_float()) ? js_number(v.as_float()) : "null";
        return {};
      case Kind::kString:
        append_json_string(out, v.str(), style.ensure_ascii);
        return {};
      case Kind::kList: {
        const auto& items = v.list().items;
        if (items.empty()) {
          out += "[]";
          return {};
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out += item_sep;
          newline(depth + 1);
          DUET_TRY(write(items[i], depth + 1));
        }
        newline(depth);
        out += ']';
        return {};
      }
      case Kind::kDict:
      case Kind::kNamespace: {
        const Dict& d = v.kind() == Kind::kDict ? v.dict() : v.ns().attrs;
        if (d.size() == 0) {
          out += "{}";
          return {};
        }
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& e : d.entries()) entries.push_back(&e);
        if (style.sort_keys)
          std::stable_sort(entries.begin(), entries.end(),
                           [](auto* a, auto* b) { return a->first < b->first; });
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i > 0) out += item_sep;
          newline(depth + 1);
          append_json_string(out, entries[i]->first, style.ensure_ascii);
          out += key_sep;
          DUET_TRY(write(entries[i]->second, depth + 1));
        }
        newline(depth);
        out += '}';
        return {};
      }
      case Kind::kCallable:
        return Status::error("cannot convert a function to JSON");
    }
    return {};
  }

  void newline(int depth) {
    if (style.indent <= 0) return;
    out += '\n';
    out.append(static_cast<size_t>(style.indent) * static_cast<size_t>(depth), ' ');
  }
};

}  // namespace

Result<std::string> to_json(const Value& v, const JsonStyle& style) {
  JsonWriter w{style, {}, style.item_sep, style.key_sep};
  if (!style.custom_separators) {
    w.item_sep = style.indent > 0 ? "," : ", ";
    w.key_sep = ": ";
  }
  DUET_TRY(w.write(v, 0));
  if (w.out.size() > style.max_bytes)
    return Status::error("output is longer than " + std::to_string(style.max_bytes) + " bytes");
  return std::move(w.out);
}

Result<std::string> display(const Value& v, size_t max_bytes) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return std::string();
    case Kind::kBool:
      return std::string(v.as_bool() ? "true" : "false");
    case Kind::kInt:
      return std::to_string(v.as_int());
    case Kind::kFloat:
      return float_display(v.as_float());
    case Kind::kString:
      return v.str();
    case Kind::kCallable:
      return Status::error("cannot print a function ('" + v.callable().name + "')");
    default: {
      JsonStyle style;
      style.undefined_as_null = false;
      style.max_bytes = max_bytes;
      return to_json(v, style);
    }
  }
}

namespace {

Result<Value> from_json_at(const nlohmann::ordered_json& j, int depth, bool trusted) {
  if (depth > kMaxValueDepth)
    return Status::error("context nested deeper than " + std::to_string(kMaxValueDepth));
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null:
      return Value::none();
    case T::boolean:
      return Value::boolean(j.get<bool>());
    case T::number_integer:
      return Value::integer(j.get<int64_t>());
    case T::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::integer(static_cast<int64_t>(u));
      return Value::number(static_cast<double>(u));
    }
    case T::number_float: {
      const double d = j.get<double>();
      // JavaScript has one number type: 1.0 in JSON is the integer 1 to @huggingface/jinja.
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18 &&
          !(d == 0 && std::signbit(d)))
        return Value::integer(static_cast<int64_t>(d));
      return Value::number(d);
    }
    case T::string:
      if (trusted) return Value::trusted_string(j.get_ref<const std::string&>());
      return Value::string(j.get_ref<const std::string&>());
    case T::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        auto v = from_json_at(e, depth + 1, trusted);
        if (!v) return v.status();
        items.push_back(std::move(v.value()));
      }
      return Value::list(std::move(items));
    }
    case T::object: {
      Dict d;
      for (const auto& [k, e] : j.items()) {
        auto v = from_json_at(e, depth + 1, trusted);
        if (!v) return v.status();
        d.set(k, std::move(v.value()));
      }
      return Value::dict(std::move(d));
    }
    default:
      return Status::error("context holds a value JSON cannot express");
  }
}

}  // namespace

Result<Value> from_json(const nlohmann::ordered_json& j, bool trusted) {
  return from_json_at(j, 0, trusted);
}

}  // namespace duet::jinja
