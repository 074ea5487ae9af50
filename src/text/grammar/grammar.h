// Grammar: a context-free grammar over bytes, the form every output constraint compiles to
// (GBNF text, JSON Schema, regular expressions, a choice list, a forced tool call).
//
// Rules hold alternatives; an alternative is a sequence of elements, each a set of bytes or a
// reference to a rule, closed by an end marker. Everything is bytes: a character class over
// Unicode code points is compiled to UTF-8 byte sequences when it is added (byte-level BPE
// tokens split characters, so the matcher must see bytes anyway).
//
// A grammar is checked before use: every referenced rule exists, and no rule can reach itself
// without consuming a byte (left recursion, or a repetition of something that may be empty),
// which would make the matcher's expansion loop forever.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace duet::grammar {

// 256 bits: which bytes an element accepts.
struct ByteSet {
  std::array<uint64_t, 4> bits{};

  bool has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  void add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
  bool operator==(const ByteSet&) const = default;
};

enum class ElemKind : uint8_t { kEnd, kBytes, kRule };

struct Elem {
  ElemKind kind = ElemKind::kEnd;
  int32_t value = 0;  // kBytes: index into Grammar::sets; kRule: the rule's id
};

// A code point range, inclusive.
struct CodeRange {
  uint32_t lo = 0, hi = 0;
};
constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct Grammar {
  std::vector<Elem> elems;  // every alternative's elements, each run closed by kEnd
  std::vector<ByteSet> sets;
  std::vector<std::vector<int32_t>> rule_alts;  // per rule: where its alternatives start
  std::vector<std::string> rule_names;
  int32_t root = 0;

  int32_t n_rules() const { return static_cast<int32_t>(rule_alts.size()); }
};

// Builds a Grammar rule by rule. Rules may be referenced before they are defined (declare
// them by name first); check() then says whether every one got a definition.
class GrammarBuilder {
 public:
  // One element of a sequence under construction.
  using Seq = std::vector<Elem>;

  // The id of the rule with this name, declaring it (without alternatives) if new.
  int32_t rule(const std::string& name);
  // A fresh rule named after `base` ("base~1", "base~2"…: "~" never appears in a GBNF name, so
  // these never meet a rule of the grammar text), for groups and repetitions.
  int32_t fresh_rule(const std::string& base);
  bool defined(int32_t rule) const { return defined_[rule]; }
  size_t n_rules() const { return names_.size(); }
  size_t n_elems() const { return n_elems_; }  // in the alternatives defined so far
  const std::string& name(int32_t rule) const { return names_[rule]; }

  // Gives `rule` its alternatives (replacing none: a rule is defined once).
  Status define(int32_t rule, const std::vector<Seq>& alternatives);

  // Elements appended to a sequence.
  void add_bytes(Seq& seq, const ByteSet& set);
  void add_byte(Seq& seq, uint8_t b);
  void add_literal(Seq& seq, std::string_view utf8);
  void add_rule(Seq& seq, int32_t rule) { seq.push_back({ElemKind::kRule, rule}); }
  // Any code point in `ranges` (sorted or not, may overlap), as UTF-8. A set of ASCII code
  // points becomes one element; wider sets become a helper rule of byte sequences.
  void add_code_ranges(Seq& seq, std::vector<CodeRange> ranges);

  // Repetition of a sequence `item`: between min and max times (max < 0: unbounded), as helper
  // rules that recurse on the right, so a long repetition does not deepen the matcher's stack.
  void add_repeat(Seq& seq, const Seq& item, int min, int max, const std::string& base);

  // The finished grammar with `root` as its start, after check().
  Result<Grammar> build(int32_t root);

 private:
  int32_t set_index(const ByteSet& set);

  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<bool> defined_;
  std::vector<std::vector<Seq>> alts_;
  std::vector<ByteSet> sets_;
  std::unordered_map<std::string, int> fresh_count_;  // per name used as a base
  std::map<std::string, int32_t> class_rules_;
  size_t n_elems_ = 0;  // code point class → its helper rule
};

// Every rule is defined and none can reach itself without consuming a byte.
Status check_grammar(const Grammar& g);

// Code point ranges → the complement within [0, 0x10FFFF], surrogates excluded.
std::vector<CodeRange> complement(std::vector<CodeRange> ranges);
// Sorted, merged, surrogates (U+D800–U+DFFF) removed.
std::vector<CodeRange> normalize_ranges(std::vector<CodeRange> ranges);

// The Unicode scalar value spelled by `digits` hex digits at text[pos] (an escape's \xHH,
// \uHHHH, \UHHHHHHHH); pos moves past them. On failure: nullopt, and `error` says why.
std::optional<uint32_t> read_hex_scalar(std::string_view text, size_t& pos, int digits,
                                        std::string& error);

// UTF-8 encoding of one code point (callers pass valid scalar values).
std::string encode_utf8(uint32_t cp);

// A readable dump, one rule per line in GBNF-like syntax (for tests and error messages).
std::string to_string(const Grammar& g);

}  // namespace duet::grammar
