// Regular expressions (the subset JSON Schema's `pattern` and vLLM's `guided_regex` need) as
// GBNF expressions.
//
// Supported: literals and escapes (\. \\ \n \t \r \f \v \xHH \uHHHH), the classes \d \w \s and
// their negations, `.` (any character but a newline), [...] classes with ranges and ^, groups
// (...), (?:...) and (?<name>...), alternation, and the quantifiers * + ? {n} {n,} {n,m} (a lazy
// or possessive suffix changes nothing when generating). ^ and $ are accepted at the ends only.
// Refused, naming what: backreferences, lookaround, \b and anchors inside the pattern.
//
// The pattern is matched as a whole: a generated string matches it from its first character
// to its last, which also satisfies JSON Schema's unanchored reading.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "text/grammar/grammar.h"

namespace duet::grammar {

enum class RegexTarget {
  kRaw,         // the text itself
  kJsonString,  // the body of a JSON string literal: " \ and control characters escaped
};

struct RegexLimits {
  size_t max_pattern_bytes = 4096;
  int max_repeat = 1000;   // the largest bound in {n,m}
  int unbounded_max = -1;  // * and + become {0,n}/{1,n} when >= 0 (keeps a loop finite)
};

Result<std::string> regex_to_gbnf(std::string_view pattern, RegexTarget target,
                                  const RegexLimits& limits = {});

// A GBNF character class (or alternation, for a JSON string) for a set of code point ranges.
// Exposed for the JSON Schema compiler, which writes strings with the same escaping.
std::string class_to_gbnf(const std::vector<CodeRange>& ranges, RegexTarget target);

}  // namespace duet::grammar
