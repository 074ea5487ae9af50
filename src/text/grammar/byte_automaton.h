// ByteAutomaton: matches bytes against a Grammar, as a pushdown automaton whose configurations
// are turned into DFA states on demand.
//
// A configuration is a set of stacks. A stack holds positions in Grammar::elems, bottom first;
// its top is the byte set the next byte must be in, and the positions below are where to go
// on when the rule above ends. An empty stack means the whole grammar has matched. Reading a
// byte moves every stack whose top accepts it one element on, then expands rule references
// and ends of rules until every top is a byte set again. A rule reference that is the last
// element of its alternative pushes no continuation (a tail call), so right-recursive loops —
// every repetition the builder makes — keep the stack depth constant.
//
// Each distinct configuration gets a state id and a 256-entry transition row filled in as bytes
// are tried, so walking the token trie for a mask costs one array read per trie node once the
// states it meets exist. A state's key (its configuration serialised) is the same in every
// automaton of the grammar, so masks computed for one request serve every other.
//
// An ambiguous grammar can make the stacks multiply with every byte (root ::= item{0,5},
// item ::= [a-z]+ root: each letter may end an item and start another), so a configuration
// is bounded: one that would hold more than kMaxConfigurationInts positions refuses the byte
// instead, and overflowed() tells why.
//
// Not thread-safe: one automaton per request, used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/grammar/grammar.h"

namespace duet::grammar {

class ByteAutomaton {
 public:
  static constexpr int32_t kDead = -1;
  static constexpr size_t kMaxConfigurationInts = size_t{1} << 15;

  explicit ByteAutomaton(const Grammar& g);
  // The automaton of what may follow the top frames of a stack (positions in Grammar::elems,
  // bottom first, the last a byte set): the start is the stack holding those frames alone, so
  // an empty stack (accepting()) means they all ended and what comes next depends on the
  // frames below them (text/grammar/stack_masks.h).
  ByteAutomaton(const Grammar& g, std::span<const int32_t> frames);

  int32_t start() const { return start_; }
  // The state after `byte`, or kDead when no stack accepts it.
  int32_t next(int32_t state, uint8_t byte);
  // The state after every byte of `bytes` (kDead as soon as one is refused).
  int32_t walk(int32_t state, std::string_view bytes);

  // The grammar may end here (a stack is empty).
  bool accepting(int32_t state) const { return states_[state].accepting; }
  // Some byte may still follow.
  bool can_continue(int32_t state) const { return states_[state].continues; }
  // The state's stacks (bottom first), sorted; an empty one where the grammar may end.
  const std::vector<std::vector<int32_t>>& stacks(int32_t state) const {
    return states_[state].stacks;
  }
  // The bytes that may come next (the union of the tops' sets).
  const ByteSet& next_bytes(int32_t state) const { return states_[state].next_bytes; }
  // The configuration serialised: equal keys mean equal futures, in any automaton of the grammar.
  const std::string& key(int32_t state) const { return states_[state].key; }

  size_t n_states() const { return states_.size(); }
  // Bytes the states hold (their stacks and keys): what reset() bounds.
  size_t stored_bytes() const { return stored_bytes_; }
  // A byte was refused because the configuration after it would have exceeded the bound.
  bool overflowed() const { return overflowed_; }
  // Forgets every state but `keep` (which becomes state 0) and the start state; returns keep's
  // new id. Bounds memory for a grammar with very many configurations.
  int32_t reset(int32_t keep);

 private:
  using Stack = std::vector<int32_t>;
  struct State {
    std::vector<Stack> stacks;
    ByteSet next_bytes;
    std::string key;
    bool accepting = false;
    bool continues = false;
    std::array<int32_t, 256> next;  // kUnknown until tried
  };
  static constexpr int32_t kUnknown = -2;

  // Expands rule references and rule ends at the top of `s` until the top is a byte set.
  // `budget` counts down the positions `out` may still take; at zero, expansion stops.
  void expand(Stack s, std::vector<Stack>& out, size_t& budget) const;
  int32_t intern(std::vector<Stack> stacks);

  const Grammar& g_;
  std::vector<State> states_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t start_ = kDead;
  size_t stored_bytes_ = 0;
  bool overflowed_ = false;
};

}  // namespace duet::grammar
