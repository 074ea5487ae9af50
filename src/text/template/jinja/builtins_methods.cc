// Methods on strings and dicts, with Python's semantics (`strip('\n')` strips only
// newlines; @huggingface/jinja ignores the argument and strips all whitespace). String
// results keep the provenance of the bytes they are made of (text/marked_text.h).
#include <algorithm>

#include "text/template/jinja/interpreter.h"
#include "text/template/jinja/text_util.h"

namespace duet::jinja {
namespace {

constexpr std::string_view kStringMethods[] = {
    "upper",      "lower",    "strip", "lstrip",  "rstrip", "title", "capitalize",
    "startswith", "endswith", "split", "replace", "find",   "count", "join"};
constexpr std::string_view kDictMethods[] = {"get", "items", "keys", "values"};

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Status arity(Interpreter& in, const Args& args, size_t max, const std::string& name, Pos pos) {
  if (args.positional.size() + args.keyword.size() > max)
    return in.error(pos, name + "() takes at most " + std::to_string(max) + " arguments");
  return {};
}

// strip/lstrip/rstrip: `chars` none → whitespace, else any of its characters.
std::string_view strip_chars(std::string_view s, const Value* chars, bool left, bool right) {
  if (!chars || !chars->is_string()) {
    if (left) s = trim_start(s);
    if (right) s = trim_end(s);
    return s;
  }
  std::vector<uint32_t> set;
  const std::string& c = chars->str();
  for (size_t i = 0; i < c.size();) set.push_back(decode_utf8(c, i));
  auto in_set = [&](uint32_t cp) { return std::find(set.begin(), set.end(), cp) != set.end(); };
  if (left) {
    size_t i = 0;
    while (i < s.size()) {
      size_t j = i;
      if (!in_set(decode_utf8(s, j))) break;
      i = j;
    }
    s = s.substr(i);
  }
  if (right) {
    const std::vector<size_t> offsets = code_point_offsets(s);
    size_t k = offsets.size() - 1;  // characters kept
    while (k > 0) {
      size_t j = offsets[k - 1];
      if (!in_set(decode_utf8(s, j))) break;
      --k;
    }
    s = s.substr(0, offsets[k]);
  }
  return s;
}

bool affix_match(const std::string& s, const Value& pattern, bool prefix, bool& ok) {
  ok = true;
  auto one = [&](const std::string& p) {
    if (p.size() > s.size()) return false;
    return prefix ? s.compare(0, p.size(), p) == 0
                  : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (pattern.is_string()) return one(pattern.str());
  if (pattern.kind() == Kind::kList) {
    for (const Value& p : pattern.list().items) {
      if (!p.is_string()) {
        ok = false;
        return false;
      }
      if (one(p.str())) return true;
    }
    return false;
  }
  ok = false;
  return false;
}

Result<Value> split(Interpreter& in, const Value& self, const Args& args, Pos pos) {
  const std::string& s = self.str();
  const Value* sep = args.get(0, "sep");
  const Value* max_v = args.get(1, "maxsplit");
  int64_t maxsplit = -1;
  if (max_v && !max_v->is_none()) {
    if (max_v->kind() != Kind::kInt) return in.error(pos, "split(): maxsplit must be an integer");
    maxsplit = max_v->as_int();
  }
  DUET_TRY(in.charge(s.size() / 16));
  std::vector<Value> parts;
  if (!sep || sep->is_none()) {
    // Runs of whitespace separate; no empty strings at the ends.
    size_t i = trim_start(s).data() - s.data();
    while (i < s.size()) {
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit) {
        parts.push_back(substring(self, i, s.size()));
        break;
      }
      size_t j = i;
      while (j < s.size() && space_at(s, j) == 0) {
        decode_utf8(s, j);
      }
      parts.push_back(substring(self, i, j));
      while (size_t n = space_at(s, j)) j += n;
      i = j;
    }
    return in.new_list(std::move(parts), pos);
  }
  if (!sep->is_string()) return in.error(pos, "split(): the separator must be a string");
  const std::string& d = sep->str();
  if (d.empty()) return in.error(pos, "split(): empty separator");
  size_t i = 0;
  while (true) {
    const size_t j = s.find(d, i);
    if (j == std::string::npos ||
        (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit)) {
      parts.push_back(substring(self, i, s.size()));
      break;
    }
    parts.push_back(substring(self, i, j));
    i = j + d.size();
  }
  return in.new_list(std::move(parts), pos);
}

Result<Value> replace(Interpreter& in, const Value& self, const Args& args, Pos pos) {
  const std::string& s = self.str();
  const Value* old_v = args.get(0, "old");
  const Value* new_v = args.get(1, "new");
  const Value* count_v = args.get(2, "count");
  if (!old_v || !new_v || !old_v->is_string() || !new_v->is_string())
    return in.error(pos, "replace() needs two strings");
  int64_t count = -1;
  if (count_v && !count_v->is_none()) {
    if (count_v->kind() != Kind::kInt) return in.error(pos, "replace(): count must be an integer");
    count = count_v->as_int();
  }
  const std::string& from = old_v->str();
  const MarkedText& to = new_v->marked();
  MarkedText out;
  DUET_TRY(in.charge(s.size() / 16));
  if (from.empty()) {  // Python inserts `to` around every character
    const std::vector<size_t> offsets = code_point_offsets(s);
    const size_t slots = offsets.size();
    const size_t n = count < 0 ? slots : std::min<size_t>(slots, static_cast<size_t>(count));
    DUET_TRY(in.charge_string(s.size() + n * to.text.size()));
    for (size_t k = 0; k + 1 < offsets.size(); ++k) {
      if (k < n) out.append(to);
      out.append(self.marked(), offsets[k], offsets[k + 1]);
    }
    if (n == slots) out.append(to);
    return Value::string(std::move(out));
  }
  size_t i = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    const size_t j = s.find(from, i);
    if (j == std::string::npos) break;
    out.append(self.marked(), i, j);
    out.append(to);
    i = j + from.size();
    DUET_TRY(in.check_size(out.text.size()));
  }
  out.append(self.marked(), i, s.size());
  DUET_TRY(in.charge_string(out.text.size()));
  return Value::string(std::move(out));
}

// A byte-for-byte mapping of `self` (ASCII case changes): the provenance stays as it was.
Value same_shape(const Value& self, std::string mapped) {
  return Value::string(MarkedText{std::move(mapped), self.marked().trusted});
}

Result<Value> string_method(Interpreter& in, const Value& self, const std::string& name,
                            const Args& args, Pos pos) {
  const std::string& s = self.str();
  if (name == "upper" || name == "lower") {
    DUET_TRY(arity(in, args, 0, name, pos));
    DUET_TRY(in.charge_string(s.size()));
    return same_shape(self, name == "upper" ? ascii_upper(s) : ascii_lower(s));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    DUET_TRY(arity(in, args, 1, name, pos));
    DUET_TRY(in.charge(s.size() / 16));
    const Value* chars = args.get(0, "chars");
    const std::string_view kept = strip_chars(s, chars, name != "rstrip", name != "lstrip");
    const auto begin = static_cast<size_t>(kept.data() - s.data());
    return substring(self, begin, begin + kept.size());
  }
  if (name == "title" || name == "capitalize") {
    DUET_TRY(arity(in, args, 0, name, pos));
    DUET_TRY(in.charge_string(s.size()));
    std::string out = ascii_lower(s);
    if (name == "capitalize") {
      if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
      return same_shape(self, std::move(out));
    }
    bool prev_letter = false;
    for (char& c : out) {
      if (is_ascii_letter(c) && !prev_letter && c >= 'a') c = static_cast<char>(c - 32);
      prev_letter = is_ascii_letter(c);
    }
    return same_shape(self, std::move(out));
  }
  if (name == "startswith" || name == "endswith") {
    const Value* p = args.get(0, "prefix");
    if (!p) return in.error(pos, name + "() needs an argument");
    bool ok = true;
    const bool r = affix_match(s, *p, name == "startswith", ok);
    if (!ok) return in.error(pos, name + "() takes a string or a list of strings");
    return Value::boolean(r);
  }
  if (name == "split") return split(in, self, args, pos);
  if (name == "replace") return replace(in, self, args, pos);
  if (name == "find" || name == "count") {
    const Value* sub = args.get(0, "sub");
    if (!sub || !sub->is_string()) return in.error(pos, name + "() needs a string");
    DUET_TRY(in.charge(s.size() / 16));
    const std::string& t = sub->str();
    if (name == "find") {
      const size_t at = s.find(t);
      if (at == std::string::npos) return Value::integer(-1);
      return Value::integer(
          static_cast<int64_t>(count_code_points(std::string_view(s).substr(0, at))));
    }
    if (t.empty()) return Value::integer(static_cast<int64_t>(count_code_points(s)) + 1);
    int64_t n = 0;
    for (size_t at = s.find(t); at != std::string::npos; at = s.find(t, at + t.size())) ++n;
    return Value::integer(n);
  }
  if (name == "join") {
    const Value* items = args.get(0, "iterable");
    if (!items || items->kind() != Kind::kList) return in.error(pos, "join() needs a list");
    MarkedText out;
    for (size_t i = 0; i < items->list().items.size(); ++i) {
      if (i > 0) out.append(self.marked());
      JINJA_ASSIGN(MarkedText part, in.marked_display_of(items->list().items[i], pos));
      out.append(part);
      DUET_TRY(in.check_size(out.text.size()));
    }
    DUET_TRY(in.charge_string(out.text.size()));
    return Value::string(std::move(out));
  }
  return in.error(pos, "string has no method '" + name + "'");
}

Result<Value> dict_method(Interpreter& in, const Dict& d, const std::string& name, const Args& args,
                          Pos pos) {
  if (name == "get") {
    const Value* key = args.get(0, "key");
    if (!key) return in.error(pos, "get() needs a key");
    const Value* fallback = args.get(1, "default");
    const Value* found = key->is_string() ? d.find(key->str()) : nullptr;
    if (found) return *found;
    return fallback ? *fallback : Value::none();
  }
  DUET_TRY(arity(in, args, 0, name, pos));
  std::vector<Value> out;
  out.reserve(d.size());
  for (const auto& [k, v] : d.entries()) {
    if (name == "keys") {
      out.push_back(Value::string(k));  // keys are client text
    } else if (name == "values") {
      out.push_back(v);
    } else {
      JINJA_ASSIGN(Value pair, in.new_list({Value::string(k), v}, pos));
      out.push_back(std::move(pair));
    }
  }
  return in.new_list(std::move(out), pos);
}

}  // namespace

bool has_method(const Value& self, std::string_view name) {
  if (self.is_string())
    return std::find(std::begin(kStringMethods), std::end(kStringMethods), name) !=
           std::end(kStringMethods);
  if (self.kind() == Kind::kDict)
    return std::find(std::begin(kDictMethods), std::end(kDictMethods), name) !=
           std::end(kDictMethods);
  return false;
}

Result<Value> call_method(Interpreter& in, const Value& self, const std::string& name,
                          const Args& args, Pos pos) {
  if (self.is_string()) return string_method(in, self, name, args, pos);
  if (self.kind() == Kind::kDict) return dict_method(in, self.dict(), name, args, pos);
  return in.error(pos, std::string(type_name(self)) + " has no method '" + name + "'");
}

}  // namespace duet::jinja
