// GBNF, the grammar text llama.cpp's `grammar` field takes, parsed into a Grammar.
//
//   root  ::= "{" ws item ("," ws item)* "}"     # rules; `root` is where matching starts
//   item  ::= [a-z]+ | "\u00e9"{1,3} | ( "x" | . )?
//
// Supported: literals with \n \t \r \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH escapes; character
// classes with ranges and ^ negation; `.` (any character); groups; the postfix operators
// * + ? {n} {n,} {n,m} {,m}; `#` comments. A rule ends at the end of its line unless the line
// ends inside parentheses or after `|`. Not supported (refused with the position): llama.cpp's
// token references (<[id]>, <name>). Limits keep a request from building a huge automaton.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "text/grammar/grammar.h"

namespace duet::grammar {

struct GbnfLimits {
  size_t max_text_bytes = 1 << 20;
  int max_repeat = 10000;     // the largest n or m in {n,m}
  size_t max_rules = 100000;  // after repetitions are expanded into helper rules
  size_t max_elems = 1000000;
};

Result<Grammar> parse_gbnf(std::string_view text, std::string_view root = "root",
                           const GbnfLimits& limits = {});

// A GBNF literal ("...") that matches exactly `bytes`: quotes and backslashes escaped, control
// bytes as \xHH. Every writer of GBNF text (schemas, regexes, choice lists) quotes with it.
std::string gbnf_literal(std::string_view bytes);

// A GBNF alternation of expressions: "(a | b)", the expression itself when there is one, ""
// when there are none. Every writer of GBNF text joins alternatives with it.
std::string gbnf_alternation(const std::vector<std::string>& alts);

}  // namespace duet::grammar
