#include "text/grammar/gbnf.h"

#include <cstdio>
#include <string>
#include <vector>

#include "text/tokenizer/unicode.h"

namespace duet::grammar {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  GbnfParser(std::string_view src, const GbnfLimits& limits) : src_(src), limits_(limits) {}

  Result<Grammar> parse(std::string_view root) {
    if (src_.size() > limits_.max_text_bytes)
      return Status::error("the grammar is longer than " + std::to_string(limits_.max_text_bytes) +
                           " bytes");
    Status s = parse_rules();
    if (!s.is_ok()) return s;
    if (!seen_root_) return Status::error("the grammar has no rule named " + std::string(root));
    return b_.build(b_.rule(std::string(root)));
  }

  void expect_root(std::string_view root) { root_ = root; }

 private:
  using Seq = GrammarBuilder::Seq;

  Status fail(const std::string& what) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status::error("grammar line " + std::to_string(line) + ", column " +
                         std::to_string(col) + ": " + what);
  }

  bool at_end() const { return pos_ >= src_.size(); }
  char peek() const { return at_end() ? '\0' : src_[pos_]; }

  // Spaces, tabs, comments; newlines too when `newlines` (inside parentheses, after `|`).
  void skip_space(bool newlines) {
    while (!at_end()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && src_[pos_] != '\n') ++pos_;
      } else if (c == '\n' && newlines) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(src_[pos_])) ++pos_;
    return std::string(src_.substr(start, pos_ - start));
  }

  Status parse_rules() {
    skip_space(true);
    while (!at_end()) {
      const std::string name = parse_name();
      if (name.empty()) return fail("expected a rule name");
      skip_space(false);
      if (src_.substr(pos_, 3) != "::=") return fail("expected ::= after " + name);
      pos_ += 3;
      skip_space(true);
      const int32_t rule = b_.rule(name);
      if (b_.defined(rule)) return fail("rule " + name + " is defined twice");
      std::vector<Seq> alts;
      DUET_TRY(parse_alternates(name, false, alts));
      DUET_TRY(b_.define(rule, alts));
      if (name == root_) seen_root_ = true;
      skip_space(false);
      if (!at_end() && peek() != '\n') return fail("expected the end of the line");
      skip_space(true);
    }
    return Status::ok();
  }

  Status parse_alternates(const std::string& base, bool nested, std::vector<Seq>& alts) {
    alts.emplace_back();
    DUET_TRY(parse_sequence(base, nested, alts.back()));
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alts.emplace_back();
      DUET_TRY(parse_sequence(base, nested, alts.back()));
    }
    return Status::ok();
  }

  // One code point of a literal or class, escapes included.
  Result<uint32_t> parse_char() {
    if (at_end()) return fail("unexpected end of the grammar");
    if (src_[pos_] == '\\') {
      ++pos_;
      if (at_end()) return fail("unexpected end after \\");
      const char e = src_[pos_++];
      switch (e) {
        case 'n':
          return uint32_t{'\n'};
        case 't':
          return uint32_t{'\t'};
        case 'r':
          return uint32_t{'\r'};
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
        case '.':
          return static_cast<uint32_t>(e);
        case 'x':
        case 'u':
        case 'U': {
          std::string error;
          const auto v = read_hex_scalar(src_, pos_, e == 'x' ? 2 : e == 'u' ? 4 : 8, error);
          if (!v) return fail(error);
          return *v;
        }
        default:
          return fail(std::string("unknown escape \\") + e);
      }
    }
    // UTF-8 in the grammar text itself.
    const Utf8Unit u = decode_utf8(src_, pos_);
    if (u.status != Utf8Status::kValid) return fail("the grammar is not valid UTF-8");
    pos_ += u.len;
    return u.cp;
  }

  Status parse_sequence(const std::string& base, bool nested, Seq& seq) {
    size_t last_start = seq.size();
    bool have_item = false;
    for (;;) {
      const char c = peek();
      if (c == '"') {
        ++pos_;
        last_start = seq.size();
        while (peek() != '"') {
          if (at_end() || peek() == '\n') return fail("unterminated literal");
          DUET_ASSIGN(cp, parse_char());
          b_.add_literal(seq, encode_utf8(cp));
        }
        ++pos_;
        have_item = true;
      } else if (c == '[') {
        ++pos_;
        last_start = seq.size();
        bool negate = false;
        if (peek() == '^') {
          negate = true;
          ++pos_;
        }
        std::vector<CodeRange> ranges;
        while (peek() != ']') {
          if (at_end()) return fail("unterminated character class");
          DUET_ASSIGN(lo, parse_char());
          uint32_t hi = lo;
          if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
            ++pos_;
            DUET_ASSIGN(h, parse_char());
            hi = h;
            if (hi < lo) return fail("a character range runs backwards");
          }
          ranges.push_back({lo, hi});
        }
        ++pos_;
        if (negate) ranges = complement(std::move(ranges));
        if (normalize_ranges(ranges).empty()) return fail("the character class matches nothing");
        b_.add_code_ranges(seq, std::move(ranges));
        have_item = true;
      } else if (c == '.') {
        ++pos_;
        last_start = seq.size();
        b_.add_code_ranges(seq, {{0, kMaxCodePoint}});
        have_item = true;
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        last_start = seq.size();
        std::vector<Seq> alts;
        DUET_TRY(parse_alternates(base, true, alts));
        if (peek() != ')') return fail("expected )");
        ++pos_;
        const int32_t r = b_.fresh_rule(base);
        DUET_TRY(b_.define(r, alts));
        b_.add_rule(seq, r);
        have_item = true;
      } else if (is_name_char(c)) {
        // A name followed by ::= starts the next rule (only at a line's start, outside groups).
        const size_t save = pos_;
        const std::string name = parse_name();
        size_t look = pos_;
        while (look < src_.size() && (src_[look] == ' ' || src_[look] == '\t')) ++look;
        if (src_.substr(look, 3) == "::=") {
          pos_ = save;
          return fail("expected the end of the line before the next rule");
        }
        last_start = seq.size();
        b_.add_rule(seq, b_.rule(name));
        have_item = true;
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!have_item) return fail(std::string("nothing before ") + c + " to repeat");
        int min = 0, max = -1;
        ++pos_;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
        if (c == '{') DUET_TRY(parse_bounds(min, max));
        const Seq item(seq.begin() + static_cast<std::ptrdiff_t>(last_start), seq.end());
        seq.resize(last_start);
        b_.add_repeat(seq, item, min, max, base);
        if (b_.n_rules() > limits_.max_rules || b_.n_elems() > limits_.max_elems)
          return fail("the grammar is too large once its repetitions are expanded");
        have_item = false;  // "a**" is an error, as in llama.cpp
      } else if (c == '<') {
        return fail("token references (<...>) are not supported");
      } else {
        break;
      }
      skip_space(nested);
    }
    return Status::ok();
  }

  Status parse_bounds(int& min, int& max) {
    auto number = [&](int& out) -> bool {
      const size_t start = pos_;
      long v = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') {
        v = v * 10 + (peek() - '0');
        if (v > limits_.max_repeat) v = limits_.max_repeat + 1L;
        ++pos_;
      }
      out = static_cast<int>(v);
      return pos_ > start;
    };
    skip_space(false);
    const bool has_min = number(min);
    skip_space(false);
    if (peek() == '}') {
      if (!has_min) return fail("expected a number in {}");
      max = min;
    } else if (peek() == ',') {
      ++pos_;
      skip_space(false);
      if (!has_min) min = 0;
      if (!number(max)) max = -1;
      skip_space(false);
    } else {
      return fail("expected , or } in a repetition");
    }
    if (peek() != '}') return fail("expected }");
    ++pos_;
    if (min > limits_.max_repeat || max > limits_.max_repeat)
      return fail("a repetition count is above " + std::to_string(limits_.max_repeat));
    if (max >= 0 && max < min) return fail("a repetition's maximum is below its minimum");
    return Status::ok();
  }

  std::string_view src_;
  GbnfLimits limits_;
  size_t pos_ = 0;
  GrammarBuilder b_;
  std::string_view root_ = "root";
  bool seen_root_ = false;
};

}  // namespace

Result<Grammar> parse_gbnf(std::string_view text, std::string_view root, const GbnfLimits& limits) {
  GbnfParser p(text, limits);
  p.expect_root(root);
  return p.parse(root);
}

std::string gbnf_alternation(const std::vector<std::string>& alts) {
  if (alts.empty()) return "";
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

std::string gbnf_literal(std::string_view bytes) {
  std::string out = "\"";
  for (char c : bytes) {
    const auto u = static_cast<uint8_t>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace duet::grammar
