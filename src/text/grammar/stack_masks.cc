#include "text/grammar/stack_masks.h"

#include <algorithm>

#include "text/grammar/byte_automaton.h"

namespace duet::grammar {

void StackMask::add_accepted(TokenMask& mask) const {
  if (!accepted_bits.empty()) {
    for (size_t w = 0; w < mask.size() && w < accepted_bits.size(); ++w)
      mask[w] |= accepted_bits[w];
    return;
  }
  for (int32_t id : accepted_ids) mask[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
}

size_t StackMask::stored_bytes() const {
  return sizeof(StackMask) + (accepted_ids.size() + uncertain.size()) * sizeof(int32_t) +
         accepted_bits.size() * sizeof(uint64_t);
}

StackMask compute_stack_mask(const Grammar& g, std::span<const int32_t> frames,
                             const TokenTrie& t) {
  StackMask out;
  ByteAutomaton a(g, frames);
  if (a.start() == ByteAutomaton::kDead) {
    out.overflowed = true;
    return out;
  }
  // Along the trie path: the automaton's state after each depth, and whether the frames may
  // all have ended at some byte boundary on the way (from there on the frames below read).
  std::vector<int32_t> walk(t.max_depth() + 1, ByteAutomaton::kDead);
  std::vector<uint8_t> ended(t.max_depth() + 1, 0);
  walk[0] = a.start();
  ended[0] = a.accepting(a.start()) ? 1 : 0;
  std::vector<int32_t> accepted;
  for (size_t i = 1; i < t.n_nodes();) {
    const size_t d = t.depth(i);
    const int32_t s = a.next(walk[d - 1], t.byte(i));
    if (s == ByteAutomaton::kDead) {
      // No parse within the frames reads this byte: the subtree's tokens depend on the frames
      // below when the frames could have ended before it, and are refused everywhere otherwise.
      if (ended[d - 1])
        for (size_t j = i; j < t.subtree_end(i); ++j)
          for (int32_t id : t.tokens_at(j)) {
            out.uncertain.push_back(id);
            if (out.uncertain.size() > StackMask::kMaxUncertain) {
              // The caller looks at more frames: what these accept does not matter.
              StackMask deeper;
              deeper.too_uncertain = true;
              return deeper;
            }
          }
      i = t.subtree_end(i);
      continue;
    }
    walk[d] = s;
    ended[d] = ended[d - 1] | (a.accepting(s) ? 1 : 0);
    for (int32_t id : t.tokens_at(i)) accepted.push_back(id);
    ++i;
  }
  if (a.overflowed()) {
    out = StackMask{};
    out.overflowed = true;
    return out;
  }
  // Ids when they take less room than a mask.
  out.uncertain.shrink_to_fit();  // stored_bytes() counts sizes: no spare capacity
  if (accepted.size() * sizeof(int32_t) < t.n_words() * sizeof(uint64_t)) {
    accepted.shrink_to_fit();
    out.accepted_ids = std::move(accepted);
  } else {
    out.accepted_bits.assign(t.n_words(), 0);
    for (int32_t id : accepted)
      out.accepted_bits[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
  }
  return out;
}

FrameGraph frame_graph(const Grammar& g) {
  const int32_t n_rules = g.n_rules();
  FrameGraph fg;
  fg.rule_of.assign(g.elems.size(), -1);
  fg.positions.resize(static_cast<size_t>(n_rules));
  fg.below.resize(static_cast<size_t>(n_rules));
  // Per rule: the rules its alternatives end in by a reference (tail calls).
  std::vector<std::vector<int32_t>> tails(static_cast<size_t>(n_rules));
  for (int32_t r = 0; r < n_rules; ++r)
    for (int32_t alt : g.rule_alts[r])
      for (int32_t p = alt; g.elems[p].kind != ElemKind::kEnd; ++p) {
        fg.rule_of[p] = r;
        if (g.elems[p].kind == ElemKind::kBytes) fg.positions[r].push_back(p);
        if (g.elems[p].kind == ElemKind::kRule && g.elems[p + 1].kind == ElemKind::kEnd)
          tails[r].push_back(g.elems[p].value);
      }
  // Each non-tail reference q to T: q + 1 lies below every rule T reaches by tail calls.
  std::vector<int32_t> seen(static_cast<size_t>(n_rules), -1), todo;
  for (size_t q = 0; q < g.elems.size(); ++q) {
    if (g.elems[q].kind != ElemKind::kRule || g.elems[q + 1].kind == ElemKind::kEnd) continue;
    const int32_t mark = static_cast<int32_t>(q);
    todo.assign(1, g.elems[q].value);
    seen[g.elems[q].value] = mark;
    while (!todo.empty()) {
      const int32_t s = todo.back();
      todo.pop_back();
      fg.below[s].push_back(static_cast<int32_t>(q + 1));
      for (int32_t t : tails[s])
        if (seen[t] != mark) {
          seen[t] = mark;
          todo.push_back(t);
        }
    }
  }
  return fg;
}

}  // namespace duet::grammar
