// Whole-text and prefix matching of a grammar, for the grammar, schema and engine tests.
#pragma once

#include <string_view>

#include "text/grammar/byte_automaton.h"

namespace duet::test {

// The whole text matches the grammar (an empty Grammar, from a failed compile, matches nothing).
inline bool grammar_matches(const grammar::Grammar& g, std::string_view text) {
  if (g.rule_alts.empty()) return false;
  grammar::ByteAutomaton a(g);
  const int32_t s = a.walk(a.start(), text);
  return s != grammar::ByteAutomaton::kDead && a.accepting(s);
}

// The text can be continued into a match.
inline bool grammar_viable(const grammar::Grammar& g, std::string_view text) {
  if (g.rule_alts.empty()) return false;
  grammar::ByteAutomaton a(g);
  return a.walk(a.start(), text) != grammar::ByteAutomaton::kDead;
}

}  // namespace duet::test
