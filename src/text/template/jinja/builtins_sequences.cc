// Filters over sequences: length, first, last, list, join, reverse, sort, unique, items,
// dictsort, map, select/reject, selectattr/rejectattr.
#include <algorithm>
#include <cmath>

#include "text/template/jinja/builtins_filters.h"
#include "text/template/jinja/text_util.h"

namespace duet::jinja {
namespace {

// The elements a filter walks: a list's items, a string's characters (with their
// provenance), a dict's keys (client text).
Result<std::vector<Value>> elements(Interpreter& in, const std::string& filter, const Value& v,
                                    Pos pos) {
  std::vector<Value> out;
  switch (v.kind()) {
    case Kind::kUndefined:
      return out;
    case Kind::kList:
      return v.list().items;
    case Kind::kDict:
      for (const auto& [k, x] : v.dict().entries()) out.push_back(Value::string(k));
      return out;
    case Kind::kString: {
      const std::string& s = v.str();
      DUET_TRY(in.charge(s.size()));
      for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        decode_utf8(s, i);
        out.push_back(substring(v, start, i));
      }
      return out;
    }
    default:
      return in.error(
          pos, "'" + filter + "' needs a list, string or dict, not " + std::string(type_name(v)));
  }
}

// `attribute="a.b.0"`: dict keys, and list indices for numeric parts.
Value attribute_of(Interpreter& in, const Value& item, const std::string& path) {
  Value cur = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (cur.kind() == Kind::kList && numeric && part.size() < 18) {
      const auto i = static_cast<size_t>(std::stoll(part));
      cur = i < cur.list().items.size() ? cur.list().items[i] : Value();
    } else {
      cur = in.get_attr(cur, part);
    }
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

Result<std::string> string_arg(Interpreter& in, const Value* v, const char* what, Pos pos) {
  if (!v || !v->is_string()) return in.error(pos, std::string(what) + " must be a string");
  return v->str();
}

// Ordering for sort/dictsort: numbers with numbers, strings with strings (case-folded
// unless asked), none with none.
Result<int> order(Interpreter& in, const Value& a, const Value& b, bool case_sensitive, Pos pos) {
  const auto numeric = [](const Value& v) { return v.is_number() || v.kind() == Kind::kBool; };
  if (numeric(a) && numeric(b)) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const int c = case_sensitive ? a.str().compare(b.str())
                                 : ascii_lower(a.str()).compare(ascii_lower(b.str()));
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.kind() == b.kind() && (a.is_none() || a.is_undefined())) return 0;
  return in.error(pos, std::string("cannot sort ") + type_name(a) + " with " + type_name(b));
}

Status sort_values(Interpreter& in, std::vector<Value>& items, bool reverse, bool case_sensitive,
                   const std::string* attribute, Pos pos) {
  const double n = static_cast<double>(items.size());
  DUET_TRY(in.charge(static_cast<uint64_t>(n * std::log2(n + 2))));
  Status failed;
  std::vector<Value> keys;
  keys.reserve(items.size());
  for (const Value& v : items) keys.push_back(attribute ? attribute_of(in, v, *attribute) : v);
  std::vector<size_t> idx(items.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
    if (!failed.is_ok()) return false;
    auto c = order(in, keys[x], keys[y], case_sensitive, pos);
    if (!c) {
      failed = c.status();
      return false;
    }
    return reverse ? *c > 0 : *c < 0;
  });
  DUET_TRY(failed);
  std::vector<Value> sorted;
  sorted.reserve(items.size());
  for (size_t i : idx) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
  return {};
}

bool flag(const Value* v) { return v && truthy(*v); }

// select / reject / selectattr / rejectattr
Result<Value> select(Interpreter& in, const std::string& name, const Value& v, const Args& args,
                     Pos pos) {
  const bool by_attr = name == "selectattr" || name == "rejectattr";
  const bool keep_if = name == "select" || name == "selectattr";
  JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
  size_t next = 0;
  std::string attr;
  if (by_attr) {
    JINJA_ASSIGN(attr,
                 string_arg(in, next < args.positional.size() ? &args.positional[next] : nullptr,
                            (name + "(): the attribute").c_str(), pos));
    ++next;
  }
  std::string test;
  if (next < args.positional.size()) {
    JINJA_ASSIGN(test,
                 string_arg(in, &args.positional[next], (name + "(): the test name").c_str(), pos));
    ++next;
  }
  Args test_args;
  test_args.positional.assign(
      args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, args.positional.size())),
      args.positional.end());
  std::vector<Value> out;
  for (const Value& item : items) {
    DUET_TRY(in.charge(1));
    const Value subject = by_attr ? attribute_of(in, item, attr) : item;
    bool ok;
    if (test.empty()) {
      ok = truthy(subject);
    } else {
      JINJA_ASSIGN(ok, in.apply_test(test, subject, test_args, pos));
    }
    if (ok == keep_if) out.push_back(item);
  }
  return in.new_list(std::move(out), pos);
}

Result<Value> map(Interpreter& in, const Value& v, const Args& args, Scope& scope, Pos pos) {
  JINJA_ASSIGN(std::vector<Value> items, elements(in, "map", v, pos));
  std::vector<Value> out;
  out.reserve(items.size());
  if (const Value* attribute = args.kw("attribute")) {
    JINJA_ASSIGN(std::string path, string_arg(in, attribute, "map(): attribute", pos));
    const Value* fallback = args.kw("default");
    for (const Value& item : items) {
      DUET_TRY(in.charge(1));
      Value x = attribute_of(in, item, path);
      out.push_back(x.is_undefined() && fallback ? *fallback : std::move(x));
    }
    return in.new_list(std::move(out), pos);
  }
  if (args.positional.empty()) return in.error(pos, "map() needs a filter name or attribute=");
  JINJA_ASSIGN(std::string filter,
               string_arg(in, &args.positional[0], "map(): the filter name", pos));
  Args rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    JINJA_ASSIGN(Value x, in.apply_filter(filter, item, rest, scope, pos));
    out.push_back(std::move(x));
  }
  return in.new_list(std::move(out), pos);
}

Result<Value> join(Interpreter& in, const Value& v, const Args& args, Pos pos) {
  JINJA_ASSIGN(std::vector<Value> items, elements(in, "join", v, pos));
  MarkedText sep;
  if (const Value* d = args.get(0, "d")) {
    JINJA_ASSIGN(sep, in.marked_display_of(*d, pos));
  }
  const Value* attribute = args.get(1, "attribute");
  MarkedText out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.append(sep);
    const Value x = attribute && attribute->is_string()
                        ? attribute_of(in, items[i], attribute->str())
                        : items[i];
    JINJA_ASSIGN(MarkedText part, in.marked_display_of(x, pos));
    out.append(part);
    DUET_TRY(in.check_size(out.text.size()));
  }
  DUET_TRY(in.charge_string(out.text.size()));
  return Value::string(std::move(out));
}

Result<Value> dict_items(Interpreter& in, const Value& v, const std::string& name, Pos pos) {
  std::vector<Value> out;
  if (v.is_undefined()) return in.new_list(std::move(out), pos);
  if (v.kind() != Kind::kDict)
    return in.error(pos, "'" + name + "' needs a dict, not " + std::string(type_name(v)));
  for (const auto& [k, x] : v.dict().entries()) {
    JINJA_ASSIGN(Value pair, in.new_list({Value::string(k), x}, pos));
    out.push_back(std::move(pair));
  }
  return in.new_list(std::move(out), pos);
}

}  // namespace

Result<Value> sequence_filter(Interpreter& in, const std::string& name, const Value& v,
                              const Args& args, Scope& scope, Pos pos) {
  if (name == "length" || name == "count") {
    switch (v.kind()) {
      case Kind::kUndefined:
        return Value::integer(0);
      case Kind::kString:
        DUET_TRY(in.charge(v.str().size() / 16));
        return Value::integer(static_cast<int64_t>(count_code_points(v.str())));
      case Kind::kList:
        return Value::integer(static_cast<int64_t>(v.list().items.size()));
      case Kind::kDict:
        return Value::integer(static_cast<int64_t>(v.dict().size()));
      default:
        return in.error(pos,
                        std::string("'length' needs a list, string or dict, not ") + type_name(v));
    }
  }
  if (name == "first" || name == "last") {
    if (v.kind() == Kind::kList) {
      const auto& items = v.list().items;
      if (items.empty()) return Value();
      return name == "first" ? items.front() : items.back();
    }
    JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
    if (items.empty()) return Value();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    if (v.kind() == Kind::kList) return v;
    JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
    return in.new_list(std::move(items), pos);
  }
  if (name == "reverse") {
    if (v.is_string()) {
      JINJA_ASSIGN(std::vector<Value> chars, elements(in, name, v, pos));
      MarkedText out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out.append(it->marked());
      return Value::string(std::move(out));
    }
    JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
    std::reverse(items.begin(), items.end());
    return in.new_list(std::move(items), pos);
  }
  if (name == "join") return join(in, v, args, pos);
  if (name == "sort") {
    JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
    const Value* attribute = args.get(2, "attribute");
    std::string attr;
    if (attribute && !attribute->is_none()) {
      if (attribute->kind() == Kind::kInt) {
        attr = std::to_string(attribute->as_int());
      } else {
        JINJA_ASSIGN(attr, string_arg(in, attribute, "sort(): attribute", pos));
      }
    }
    DUET_TRY(sort_values(in, items, flag(args.get(0, "reverse")),
                         flag(args.get(1, "case_sensitive")), attr.empty() ? nullptr : &attr, pos));
    return in.new_list(std::move(items), pos);
  }
  if (name == "unique") {
    JINJA_ASSIGN(std::vector<Value> items, elements(in, name, v, pos));
    std::vector<Value> out;
    for (const Value& x : items) {
      bool seen = false;
      for (const Value& y : out) seen = seen || in.equal(x, y);
      DUET_TRY(in.charge(out.size()));
      if (!seen) out.push_back(x);
    }
    return in.new_list(std::move(out), pos);
  }
  if (name == "items") return dict_items(in, v, name, pos);
  if (name == "dictsort") {
    JINJA_ASSIGN(Value pairs, dict_items(in, v, name, pos));
    std::vector<Value> items = pairs.list().items;
    std::string by = "key";
    if (const Value* b = args.get(1, "by")) {
      JINJA_ASSIGN(by, string_arg(in, b, "dictsort(): by", pos));
    }
    if (by != "key" && by != "value")
      return in.error(pos, "dictsort(): by must be 'key' or 'value'");
    const std::string index = by == "key" ? "0" : "1";
    DUET_TRY(sort_values(in, items, flag(args.get(2, "reverse")),
                         flag(args.get(0, "case_sensitive")), &index, pos));
    return in.new_list(std::move(items), pos);
  }
  if (name == "map") return map(in, v, args, scope, pos);
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr")
    return select(in, name, v, args, pos);
  return in.error(pos, "unknown filter '" + name + "'");
}

}  // namespace duet::jinja
