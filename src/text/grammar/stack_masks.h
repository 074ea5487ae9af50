// Stack masks: the part of a token mask that the top frames of one parse stack decide,
// computed once and shared by every configuration whose stacks end in those frames (the split
// XGrammar makes between context-independent and context-dependent tokens, for a stack's
// top K frames instead of its top position alone).
//
// A configuration is a set of stacks; a stack's top is a byte-set position and the frames
// below it are where to go on when the rules above end. From the top K frames alone, a token
// is
//   - accepted when its bytes can be read within those frames, or end exactly where they may
//     all end: whatever lies below, the stack survives the token;
//   - uncertain when its bytes can only be read by going below the K frames: the frames
//     further down decide;
//   - refused otherwise, in every context.
// A configuration's mask is the union of its stacks' accepted tokens, plus those of their
// uncertain tokens that the configuration itself accepts (a walk of a few bytes each). Each
// stack uses the smallest K whose uncertain tokens are few: K = 1 (the top position) decides
// most tokens inside a rule, but not for a rule that may end after one byte (one character of
// a string, one space), whose every longer token reads into the frames below.
//
// Frames repeat where configurations do not: every nesting depth of a recursive schema is
// another configuration with the same top frames, and the positions of several stacks
// combine into many configurations. CompiledGrammar::precompute_masks computes the masks of
// every position with the frames that can lie below it, as deep as each needs, in the
// background once per grammar; a step whose stacks they do not cover (yet) walks the
// vocabulary for its configuration instead.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "text/grammar/grammar.h"
#include "text/grammar/token_trie.h"

namespace duet::grammar {

using TokenMask = std::vector<uint64_t>;

struct StackMask {
  // The accepted tokens: as ids when few (most frames spell a literal), else as a mask.
  std::vector<int32_t> accepted_ids;
  TokenMask accepted_bits;  // empty when accepted_ids holds them
  std::vector<int32_t> uncertain;
  // More than kMaxUncertain tokens are uncertain: look at more frames (uncertain is empty).
  bool too_uncertain = false;
  // The frames' own parses exceeded the automaton's bound: the caller must check every token
  // against the whole configuration.
  bool overflowed = false;

  static constexpr size_t kMaxUncertain = 512;

  // Sets the accepted tokens' bits in `mask`.
  void add_accepted(TokenMask& mask) const;
  size_t stored_bytes() const;
};

// The mask of a stack's top frames `frames` (positions in g.elems, bottom first; the last is a
// byte-set element) under `trie`: one walk of the trie through the automaton of those frames.
StackMask compute_stack_mask(const Grammar& g, std::span<const int32_t> frames,
                             const TokenTrie& trie);

// Which frames a stack of the grammar can hold below which: what CompiledGrammar needs to
// precompute the stack masks that steps will ask for.
struct FrameGraph {
  // Per position (index into Grammar::elems): the rule whose alternative holds it.
  std::vector<int32_t> rule_of;
  // Per rule S: the byte-set positions of S's alternatives (where a stack's top can be).
  std::vector<std::vector<int32_t>> positions;
  // Per rule S: the continuations that can lie directly below a frame inside S: q + 1 for
  // every reference q that is not its alternative's last element (a tail call pushes nothing)
  // to a rule from which S is reached by tail calls alone.
  std::vector<std::vector<int32_t>> below;
};
FrameGraph frame_graph(const Grammar& g);

}  // namespace duet::grammar
