#include "text/grammar/regex.h"

#include <cstdio>

#include "text/grammar/gbnf.h"
#include "text/tokenizer/unicode.h"

namespace duet::grammar {

namespace {

std::string hex_escape(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\U%08X", cp);
  return buf;
}

std::string plain_class(const std::vector<CodeRange>& ranges) {
  std::string out = "[";
  for (CodeRange r : ranges) {
    out += hex_escape(r.lo);
    if (r.hi > r.lo) out += "-" + hex_escape(r.hi);
  }
  return out + "]";
}

const std::vector<CodeRange>& digit_class() {
  static const std::vector<CodeRange> d{{'0', '9'}};
  return d;
}
const std::vector<CodeRange>& word_class() {
  static const std::vector<CodeRange> w{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
  return w;
}
const std::vector<CodeRange>& space_class() {
  static const std::vector<CodeRange> s{{'\t', '\r'}, {' ', ' '}};
  return s;
}

// One parsed piece of the pattern as GBNF. GBNF refuses a repetition whose body may match the
// empty string (the rule could loop without consuming input), so a piece that may be empty also
// carries parts that may not, chosen so that (part | part | ...)* matches what (piece)* does:
// (a|)* is a*, (a?b*)* is (a|b)*, and ()* is "".
struct Fragment {
  std::string gbnf;
  bool nullable = false;
  std::vector<std::string> nonempty_parts;  // only when nullable
};

Fragment solid(std::string gbnf) { return {std::move(gbnf), false, {}}; }

// The parts of `f` that cannot match empty, for a repetition of it.
void add_nonempty_parts(const Fragment& f, std::vector<std::string>& out) {
  if (f.nullable) {
    out.insert(out.end(), f.nonempty_parts.begin(), f.nonempty_parts.end());
  } else {
    out.push_back(f.gbnf);
  }
}

class RegexParser {
 public:
  RegexParser(std::string_view src, RegexTarget target, const RegexLimits& limits)
      : src_(src), target_(target), limits_(limits) {}

  Result<std::string> parse() {
    if (src_.size() > limits_.max_pattern_bytes)
      return Status::error("the pattern is longer than " +
                           std::to_string(limits_.max_pattern_bytes) + " bytes");
    if (!src_.empty() && src_.front() == '^') ++pos_;
    DUET_ASSIGN(body, alternation());
    if (pos_ < src_.size()) return fail("unexpected )");
    return body.gbnf;
  }

 private:
  Status fail(const std::string& what) const {
    return Status::error("pattern position " + std::to_string(pos_) + ": " + what);
  }
  bool at_end() const { return pos_ >= src_.size(); }
  char peek() const { return at_end() ? '\0' : src_[pos_]; }

  Fragment cls(const std::vector<CodeRange>& r) const { return solid(class_to_gbnf(r, target_)); }

  Result<Fragment> alternation() {
    std::vector<Fragment> alts;
    DUET_ASSIGN(first, sequence());
    alts.push_back(std::move(first));
    while (peek() == '|') {
      ++pos_;
      DUET_ASSIGN(next, sequence());
      alts.push_back(std::move(next));
    }
    if (alts.size() == 1) return alts[0];
    Fragment out;
    std::vector<std::string> texts;
    for (const Fragment& a : alts) {
      texts.push_back(a.gbnf);
      out.nullable = out.nullable || a.nullable;
      add_nonempty_parts(a, out.nonempty_parts);
    }
    out.gbnf = gbnf_alternation(texts);
    if (!out.nullable) out.nonempty_parts.clear();
    return out;
  }

  Result<Fragment> sequence() {
    Fragment out{"", true, {}};
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$' && pos_ + 1 == src_.size()) {
        ++pos_;
        break;
      }
      DUET_ASSIGN(a, atom());
      DUET_ASSIGN(q, quantified(a));
      if (!out.gbnf.empty()) out.gbnf += " ";
      out.gbnf += q.gbnf;
      // A sequence of pieces that may all be empty repeats as any mix of them: (a?b?)* = (a|b)*.
      out.nullable = out.nullable && q.nullable;
      add_nonempty_parts(q, out.nonempty_parts);
    }
    if (out.gbnf.empty()) out.gbnf = "\"\"";
    if (!out.nullable) out.nonempty_parts.clear();
    return out;
  }

  Result<Fragment> quantified(const Fragment& atom) {
    int min = 1, max = 1;
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      min = c == '+' ? 1 : 0;
      max = c == '?' ? 1 : limits_.unbounded_max;
      if (c != '?' && max >= 0 && min > max) max = min;
    } else if (c == '{' && is_bounds()) {
      ++pos_;
      DUET_TRY(bounds(min, max));
    } else {
      return atom;
    }
    if (peek() == '?' || peek() == '+') ++pos_;  // lazy / possessive: same strings
    if (peek() == '*' || peek() == '+' || peek() == '?' || (peek() == '{' && is_bounds()))
      return fail("a quantifier follows a quantifier");
    Fragment out;
    out.nullable = min == 0 || atom.nullable;
    if (out.nullable) add_nonempty_parts(atom, out.nonempty_parts);
    if (max < 0 && atom.nullable) {
      // X{n,} with X able to match empty is X*, written over X's parts that cannot be.
      out.gbnf = atom.nonempty_parts.empty() ? std::string("\"\"")
                                             : "(" + gbnf_alternation(atom.nonempty_parts) + ")*";
      return out;
    }
    out.gbnf = "(" + atom.gbnf + ")";
    if (min == 0 && max < 0) {
      out.gbnf += "*";
    } else if (min == 1 && max < 0) {
      out.gbnf += "+";
    } else if (min == 0 && max == 1) {
      out.gbnf += "?";
    } else {
      out.gbnf += "{" + std::to_string(min) + "," + (max < 0 ? "" : std::to_string(max)) + "}";
    }
    return out;
  }

  // "{" starts a quantifier only when it reads like one ({2}, {2,}, {2,5}, {,5}).
  bool is_bounds() const {
    size_t p = pos_ + 1;
    bool digits = false, comma = false;
    for (; p < src_.size(); ++p) {
      const char c = src_[p];
      if (c >= '0' && c <= '9') {
        digits = true;
      } else if (c == ',' && !comma) {
        comma = true;
      } else {
        return c == '}' && digits;
      }
    }
    return false;
  }

  Status bounds(int& min, int& max) {
    auto number = [&](int& out) {
      const size_t start = pos_;
      long v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = std::min<long>(v * 10 + (peek() - '0'), limits_.max_repeat + 1L);
        ++pos_;
      }
      out = static_cast<int>(v);
      return pos_ > start;
    };
    const bool has_min = number(min);
    if (peek() == ',') {
      ++pos_;
      if (!has_min) min = 0;
      if (!number(max)) max = limits_.unbounded_max;
    } else {
      max = min;
    }
    ++pos_;  // '}'
    if (min > limits_.max_repeat || max > limits_.max_repeat)
      return fail("a repetition count is above " + std::to_string(limits_.max_repeat));
    if (max >= 0 && max < min) return fail("a repetition's maximum is below its minimum");
    return Status::ok();
  }

  Result<uint32_t> hex(int digits) {
    std::string error;
    const auto v = read_hex_scalar(src_, pos_, digits, error);
    if (!v) return fail(error);
    return *v;
  }

  // One code point of the pattern's own UTF-8.
  Result<uint32_t> utf8_char() {
    const Utf8Unit u = decode_utf8(src_, pos_);
    if (u.status != Utf8Status::kValid) return fail("the pattern is not valid UTF-8");
    pos_ += u.len;
    return u.cp;
  }

  // After a backslash: a class (\d…) into `ranges`, or one code point. In a [...] class,
  // `in_class` is set.
  Status escape(std::vector<CodeRange>& ranges, bool in_class) {
    if (at_end()) return fail("the pattern ends with \\");
    const char e = src_[pos_++];
    switch (e) {
      case 'd':
        ranges.insert(ranges.end(), digit_class().begin(), digit_class().end());
        break;
      case 'w':
        ranges.insert(ranges.end(), word_class().begin(), word_class().end());
        break;
      case 's':
        ranges.insert(ranges.end(), space_class().begin(), space_class().end());
        break;
      case 'D':
        for (CodeRange r : complement(digit_class())) ranges.push_back(r);
        break;
      case 'W':
        for (CodeRange r : complement(word_class())) ranges.push_back(r);
        break;
      case 'S':
        for (CodeRange r : complement(space_class())) ranges.push_back(r);
        break;
      case 'n':
        ranges.push_back({'\n', '\n'});
        break;
      case 't':
        ranges.push_back({'\t', '\t'});
        break;
      case 'r':
        ranges.push_back({'\r', '\r'});
        break;
      case 'f':
        ranges.push_back({'\f', '\f'});
        break;
      case 'v':
        ranges.push_back({'\v', '\v'});
        break;
      case 'x': {
        DUET_ASSIGN(v, hex(2));
        ranges.push_back({v, v});
        break;
      }
      case 'u': {
        DUET_ASSIGN(v, hex(4));
        ranges.push_back({v, v});
        break;
      }
      case 'b':
        if (in_class) {
          ranges.push_back({'\b', '\b'});
          break;
        }
        return fail("word boundaries (\\b) are not supported");
      case 'B':
        return fail("\\B is not supported");
      default:
        if (e >= '1' && e <= '9') return fail("backreferences are not supported");
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
          return fail(std::string("unknown escape \\") + e);
        ranges.push_back({static_cast<uint8_t>(e), static_cast<uint8_t>(e)});
    }
    return Status::ok();
  }

  Result<Fragment> atom() {
    const char c = peek();
    if (c == '(') {
      ++pos_;
      if (peek() == '?') {
        ++pos_;
        if (peek() == ':') {
          ++pos_;
        } else if (peek() == '<' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '=' &&
                   src_[pos_ + 1] != '!') {
          while (!at_end() && peek() != '>') ++pos_;  // a named group: the name is dropped
          ++pos_;
        } else {
          return fail("lookaround and other (? groups are not supported");
        }
      }
      DUET_ASSIGN(inner, alternation());
      if (peek() != ')') return fail("expected )");
      ++pos_;
      inner.gbnf = "(" + inner.gbnf + ")";
      return inner;
    }
    if (c == '[') return char_class();
    if (c == '.') {
      ++pos_;
      return cls(complement({{'\n', '\n'}}));
    }
    if (c == '^' || c == '$') return fail("anchors are supported only at the ends");
    if (c == '*' || c == '+' || c == '?') return fail(std::string("nothing before ") + c);
    std::vector<CodeRange> r;
    if (c == '\\') {
      ++pos_;
      DUET_TRY(escape(r, false));
    } else {
      DUET_ASSIGN(cp, utf8_char());
      r.push_back({cp, cp});
    }
    return cls(r);
  }

  Result<Fragment> char_class() {
    ++pos_;
    bool negate = false;
    if (peek() == '^') {
      negate = true;
      ++pos_;
    }
    std::vector<CodeRange> ranges;
    bool first = true;
    while (!at_end() && (peek() != ']' || first)) {
      first = false;
      std::vector<CodeRange> one;
      if (peek() == '\\') {
        ++pos_;
        DUET_TRY(escape(one, true));
      } else {
        DUET_ASSIGN(cp, utf8_char());
        one.push_back({cp, cp});
      }
      // A range a-z (not when either end is a class such as \d).
      if (one.size() == 1 && one[0].lo == one[0].hi && peek() == '-' && pos_ + 1 < src_.size() &&
          src_[pos_ + 1] != ']') {
        ++pos_;
        std::vector<CodeRange> end;
        if (peek() == '\\') {
          ++pos_;
          DUET_TRY(escape(end, true));
        } else {
          DUET_ASSIGN(cp, utf8_char());
          end.push_back({cp, cp});
        }
        if (end.size() != 1 || end[0].lo != end[0].hi) return fail("a range ends in a class");
        if (end[0].lo < one[0].lo) return fail("a character range runs backwards");
        one[0].hi = end[0].lo;
      }
      ranges.insert(ranges.end(), one.begin(), one.end());
    }
    if (at_end()) return fail("unterminated character class");
    ++pos_;
    if (negate) ranges = complement(std::move(ranges));
    if (normalize_ranges(ranges).empty()) return fail("the character class matches nothing");
    return cls(ranges);
  }

  std::string_view src_;
  RegexTarget target_;
  RegexLimits limits_;
  size_t pos_ = 0;
};

}  // namespace

std::string class_to_gbnf(const std::vector<CodeRange>& in, RegexTarget target) {
  const std::vector<CodeRange> ranges = normalize_ranges(in);
  if (target == RegexTarget::kRaw) return plain_class(ranges);
  // In a JSON string: " and \ and control characters only as escapes.
  auto has = [&](uint32_t cp) {
    for (CodeRange r : ranges)
      if (cp >= r.lo && cp <= r.hi) return true;
    return false;
  };
  std::vector<std::string> alts;
  std::vector<CodeRange> plain;
  for (CodeRange r : ranges) plain.push_back(r);
  plain = complement(std::move(plain));
  plain.push_back({0, 0x1F});
  plain.push_back({'"', '"'});
  plain.push_back({'\\', '\\'});
  plain = complement(std::move(plain));  // ranges minus the characters that need escapes
  if (!plain.empty()) alts.push_back(plain_class(plain));
  if (has('"')) alts.push_back(gbnf_literal("\\\""));
  if (has('\\')) alts.push_back(gbnf_literal("\\\\"));
  for (uint32_t cp = 0; cp < 0x20; ++cp) {
    if (!has(cp)) continue;
    std::string esc;
    switch (cp) {
      case '\n':
        esc = "\\n";
        break;
      case '\t':
        esc = "\\t";
        break;
      case '\r':
        esc = "\\r";
        break;
      case '\b':
        esc = "\\b";
        break;
      case '\f':
        esc = "\\f";
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        esc = buf;
      }
    }
    alts.push_back(gbnf_literal(esc));
  }
  return gbnf_alternation(alts);
}

Result<std::string> regex_to_gbnf(std::string_view pattern, RegexTarget target,
                                  const RegexLimits& limits) {
  return RegexParser(pattern, target, limits).parse();
}

}  // namespace duet::grammar
