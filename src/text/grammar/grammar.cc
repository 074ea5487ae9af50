#include "text/grammar/grammar.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "text/tokenizer/unicode.h"

namespace duet::grammar {

namespace {

constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

int utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// One byte range per position: a UTF-8 sequence pattern such as [E1-EC][80-BF][80-BF].
using ByteRanges = std::vector<std::pair<uint8_t, uint8_t>>;

// [lo, hi] (same encoded length) as byte-range sequences whose product is exactly the range.
// The split makes every continuation position span a whole aligned block, the construction
// regex engines use for UTF-8 automata.
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<ByteRanges>& out) {
  const int n = utf8_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8_sequences(lo, lo | m, out);
        utf8_sequences((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8_sequences(lo, (hi & ~m) - 1, out);
        utf8_sequences(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = encode_utf8(lo), b = encode_utf8(hi);
  ByteRanges seq;
  for (size_t k = 0; k < a.size(); ++k)
    seq.emplace_back(static_cast<uint8_t>(a[k]), static_cast<uint8_t>(b[k]));
  out.push_back(std::move(seq));
}

std::string byte_text(uint8_t b) {
  if (b >= 0x21 && b < 0x7F && b != '[' && b != ']' && b != '\\' && b != '-' && b != '^' &&
      b != '"')
    return std::string(1, static_cast<char>(b));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", b);
  return buf;
}

std::string set_text(const ByteSet& s) {
  std::string out = "[";
  for (int b = 0; b < 256;) {
    if (!s.has(static_cast<uint8_t>(b))) {
      ++b;
      continue;
    }
    int e = b;
    while (e + 1 < 256 && s.has(static_cast<uint8_t>(e + 1))) ++e;
    out += byte_text(static_cast<uint8_t>(b));
    if (e > b) out += "-" + byte_text(static_cast<uint8_t>(e));
    b = e + 1;
  }
  return out + "]";
}

}  // namespace

std::optional<uint32_t> read_hex_scalar(std::string_view text, size_t& pos, int digits,
                                        std::string& error) {
  uint32_t v = 0;
  for (int i = 0; i < digits; ++i, ++pos) {
    const char h = pos < text.size() ? text[pos] : '\0';
    const int d = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
    if (d < 0) {
      error = "bad hex digit in an escape";
      return std::nullopt;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) {
    error = "the escape is not a Unicode scalar value";
    return std::nullopt;
  }
  return v;
}

std::string encode_utf8(uint32_t cp) {
  std::string s;
  append_utf8(&s, cp);
  return s;
}

std::vector<CodeRange> normalize_ranges(std::vector<CodeRange> ranges) {
  std::vector<CodeRange> cut;
  for (CodeRange r : ranges) {
    if (r.lo > r.hi) continue;
    r.hi = std::min(r.hi, kMaxCodePoint);
    if (r.lo > kMaxCodePoint) continue;
    if (r.lo < kSurrogateLo && r.hi > kSurrogateHi) {  // straddles the surrogates: two pieces
      cut.push_back({r.lo, kSurrogateLo - 1});
      cut.push_back({kSurrogateHi + 1, r.hi});
    } else if (r.lo >= kSurrogateLo && r.hi <= kSurrogateHi) {
      continue;
    } else if (r.lo >= kSurrogateLo && r.lo <= kSurrogateHi) {
      cut.push_back({kSurrogateHi + 1, r.hi});
    } else if (r.hi >= kSurrogateLo && r.hi <= kSurrogateHi) {
      cut.push_back({r.lo, kSurrogateLo - 1});
    } else {
      cut.push_back(r);
    }
  }
  std::sort(cut.begin(), cut.end(), [](CodeRange a, CodeRange b) { return a.lo < b.lo; });
  std::vector<CodeRange> out;
  for (CodeRange r : cut) {
    if (!out.empty() && r.lo <= out.back().hi + 1)
      out.back().hi = std::max(out.back().hi, r.hi);
    else
      out.push_back(r);
  }
  return out;
}

std::vector<CodeRange> complement(std::vector<CodeRange> ranges) {
  ranges = normalize_ranges(std::move(ranges));
  std::vector<CodeRange> out;
  uint32_t next = 0;
  for (CodeRange r : ranges) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return normalize_ranges(std::move(out));
}

int32_t GrammarBuilder::rule(const std::string& name) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  ids_.emplace(name, static_cast<int32_t>(names_.size()));
  names_.push_back(name);
  defined_.push_back(false);
  alts_.emplace_back();
  return static_cast<int32_t>(names_.size() - 1);
}

int32_t GrammarBuilder::fresh_rule(const std::string& base) {
  int& count = fresh_count_[base];
  for (;;) {
    std::string name = base + "~" + std::to_string(++count);  // "~": never in a GBNF name
    if (!ids_.contains(name)) return rule(name);
  }
}

Status GrammarBuilder::define(int32_t rule, const std::vector<Seq>& alternatives) {
  if (defined_[rule]) return Status::error("rule " + names_[rule] + " is defined twice");
  if (alternatives.empty()) return Status::error("rule " + names_[rule] + " has no alternative");
  defined_[rule] = true;
  alts_[rule] = alternatives;
  for (const Seq& a : alternatives) n_elems_ += a.size() + 1;
  return Status::ok();
}

int32_t GrammarBuilder::set_index(const ByteSet& set) {
  for (size_t i = 0; i < sets_.size(); ++i)
    if (sets_[i] == set) return static_cast<int32_t>(i);
  sets_.push_back(set);
  return static_cast<int32_t>(sets_.size() - 1);
}

void GrammarBuilder::add_bytes(Seq& seq, const ByteSet& set) {
  seq.push_back({ElemKind::kBytes, set_index(set)});
}

void GrammarBuilder::add_byte(Seq& seq, uint8_t b) {
  ByteSet s;
  s.add(b);
  add_bytes(seq, s);
}

void GrammarBuilder::add_literal(Seq& seq, std::string_view utf8) {
  for (char c : utf8) add_byte(seq, static_cast<uint8_t>(c));
}

void GrammarBuilder::add_code_ranges(Seq& seq, std::vector<CodeRange> ranges) {
  ranges = normalize_ranges(std::move(ranges));
  ByteSet ascii;
  std::vector<ByteRanges> wide;
  for (CodeRange r : ranges) {
    if (r.lo < 0x80)
      ascii.add_range(static_cast<uint8_t>(r.lo),
                      static_cast<uint8_t>(std::min<uint32_t>(r.hi, 0x7F)));
    // Split at the encoded-length boundaries, then into aligned blocks.
    for (uint32_t lo = std::max<uint32_t>(r.lo, 0x80); lo <= r.hi;) {
      const uint32_t len_end = lo < 0x800 ? 0x7FF : lo < 0x10000 ? 0xFFFF : kMaxCodePoint;
      const uint32_t hi = std::min(r.hi, len_end);
      utf8_sequences(lo, hi, wide);
      lo = hi + 1;
    }
  }
  if (wide.empty()) {
    add_bytes(seq, ascii);
    return;
  }
  // A helper rule per distinct class: JSON strings use the same one many times.
  std::string key;
  for (CodeRange r : ranges) key += std::to_string(r.lo) + "-" + std::to_string(r.hi) + ",";
  auto it = class_rules_.find(key);
  if (it == class_rules_.end()) {
    const int32_t r = fresh_rule("char");
    std::vector<Seq> alts;
    if (!ascii.empty()) {
      alts.emplace_back();
      add_bytes(alts.back(), ascii);
    }
    for (const ByteRanges& w : wide) {
      Seq s;
      for (auto [lo, hi] : w) {
        ByteSet b;
        b.add_range(lo, hi);
        add_bytes(s, b);
      }
      alts.push_back(std::move(s));
    }
    (void)define(r, alts);
    it = class_rules_.emplace(key, r).first;
  }
  add_rule(seq, it->second);
}

void GrammarBuilder::add_repeat(Seq& seq, const Seq& item, int min, int max,
                                const std::string& base) {
  for (int i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
  if (max < 0) {  // R ::= item R | ""
    const int32_t r = fresh_rule(base);
    Seq again = item;
    add_rule(again, r);
    (void)define(r, {again, Seq{}});
    add_rule(seq, r);
    return;
  }
  // (item (item (…)?)?)? nested max - min deep, innermost first.
  int32_t inner = -1;
  for (int k = 0; k < max - min; ++k) {
    const int32_t r = fresh_rule(base);
    Seq once = item;
    if (inner >= 0) add_rule(once, inner);
    (void)define(r, {once, Seq{}});
    inner = r;
  }
  if (inner >= 0) add_rule(seq, inner);
}

Result<Grammar> GrammarBuilder::build(int32_t root) {
  Grammar g;
  g.sets = sets_;
  g.rule_names = names_;
  g.root = root;
  g.rule_alts.resize(names_.size());
  for (size_t r = 0; r < names_.size(); ++r) {
    if (!defined_[r]) return Status::error("rule " + names_[r] + " is used but never defined");
    for (const Seq& alt : alts_[r]) {
      g.rule_alts[r].push_back(static_cast<int32_t>(g.elems.size()));
      g.elems.insert(g.elems.end(), alt.begin(), alt.end());
      g.elems.push_back({ElemKind::kEnd, 0});
    }
  }
  DUET_TRY(check_grammar(g));
  return g;
}

Status check_grammar(const Grammar& g) {
  const int32_t n = g.n_rules();
  if (g.root < 0 || g.root >= n) return Status::error("the grammar has no root rule");
  for (const Elem& e : g.elems)
    if (e.kind == ElemKind::kRule && (e.value < 0 || e.value >= n || g.rule_alts[e.value].empty()))
      return Status::error("a rule is used but never defined");
  // Which rules can match the empty string (a fixpoint).
  std::vector<bool> nullable(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (int32_t start : g.rule_alts[r]) {
        bool all = true;
        for (int32_t p = start; g.elems[p].kind != ElemKind::kEnd && all; ++p)
          all = g.elems[p].kind == ElemKind::kRule && nullable[g.elems[p].value];
        if (all) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  // r → s when s can be the first thing r matches; a cycle is a loop without progress.
  std::vector<std::vector<int32_t>> first(n);
  for (int32_t r = 0; r < n; ++r)
    for (int32_t start : g.rule_alts[r])
      for (int32_t p = start; g.elems[p].kind == ElemKind::kRule; ++p) {
        first[r].push_back(g.elems[p].value);
        if (!nullable[g.elems[p].value]) break;
      }
  std::vector<int> color(n, 0);  // 0 new, 1 on the path, 2 done
  std::string loop;
  std::function<bool(int32_t)> visit = [&](int32_t r) {
    color[r] = 1;
    for (int32_t s : first[r]) {
      if (color[s] == 1) {
        loop = g.rule_names[s];
        return false;
      }
      if (color[s] == 0 && !visit(s)) return false;
    }
    color[r] = 2;
    return true;
  };
  for (int32_t r = 0; r < n; ++r)
    if (color[r] == 0 && !visit(r))
      return Status::error("rule " + loop +
                           " can reach itself without consuming input (left recursion, or a "
                           "repetition of something that may be empty)");
  return Status::ok();
}

std::string to_string(const Grammar& g) {
  std::string out;
  for (int32_t r = 0; r < g.n_rules(); ++r) {
    out += g.rule_names[r] + " ::=";
    bool first_alt = true;
    for (int32_t start : g.rule_alts[r]) {
      if (!first_alt) out += " |";
      first_alt = false;
      if (g.elems[start].kind == ElemKind::kEnd) out += " \"\"";
      for (int32_t p = start; g.elems[p].kind != ElemKind::kEnd; ++p) {
        const Elem& e = g.elems[p];
        out += " ";
        out += e.kind == ElemKind::kRule ? g.rule_names[e.value] : set_text(g.sets[e.value]);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace duet::grammar
