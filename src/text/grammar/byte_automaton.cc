#include "text/grammar/byte_automaton.h"

#include <algorithm>
#include <cstring>

namespace duet::grammar {

ByteAutomaton::ByteAutomaton(const Grammar& g) : g_(g) {
  std::vector<Stack> stacks;
  size_t budget = kMaxConfigurationInts;
  for (int32_t alt : g_.rule_alts[g_.root]) expand(Stack{alt}, stacks, budget);
  overflowed_ = budget == 0;
  start_ = overflowed_ ? kDead : intern(std::move(stacks));
}

ByteAutomaton::ByteAutomaton(const Grammar& g, std::span<const int32_t> frames) : g_(g) {
  std::vector<Stack> stacks;
  size_t budget = kMaxConfigurationInts;
  expand(Stack(frames.begin(), frames.end()), stacks, budget);
  overflowed_ = budget == 0;
  start_ = overflowed_ ? kDead : intern(std::move(stacks));
}

void ByteAutomaton::expand(Stack s, std::vector<Stack>& out, size_t& budget) const {
  for (;;) {
    if (budget == 0) return;
    if (s.empty() || g_.elems[s.back()].kind == ElemKind::kBytes) {
      budget -= std::min(budget, s.size() + 1);
      out.push_back(std::move(s));
      return;
    }
    const int32_t p = s.back();
    const Elem& e = g_.elems[p];
    s.pop_back();
    if (e.kind == ElemKind::kEnd) continue;  // the rule ended: resume below
    // A rule: continue after it once it ends (unless nothing follows: a tail call), and try
    // each of its alternatives.
    if (g_.elems[p + 1].kind != ElemKind::kEnd) s.push_back(p + 1);
    const std::vector<int32_t>& alts = g_.rule_alts[e.value];
    for (size_t i = 0; i + 1 < alts.size(); ++i) {
      Stack t = s;
      t.push_back(alts[i]);
      expand(std::move(t), out, budget);
    }
    s.push_back(alts.back());
  }
}

int32_t ByteAutomaton::intern(std::vector<Stack> stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.empty()) return kDead;
  std::string key;
  for (const Stack& s : stacks) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key.append(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(int32_t));
  }
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  State st;
  for (const Stack& s : stacks) {
    (s.empty() ? st.accepting : st.continues) = true;
    if (s.empty()) continue;
    const ByteSet& set = g_.sets[g_.elems[s.back()].value];
    for (size_t w = 0; w < set.bits.size(); ++w) st.next_bytes.bits[w] |= set.bits[w];
  }
  st.stacks = std::move(stacks);
  st.key = key;
  st.next.fill(kUnknown);
  // The configuration is held three times: as stacks, as this key, and as the key in ids_.
  stored_bytes_ += sizeof(State) + 3 * key.size();
  const int32_t id = static_cast<int32_t>(states_.size());
  states_.push_back(std::move(st));
  ids_.emplace(std::move(key), id);
  return id;
}

int32_t ByteAutomaton::next(int32_t state, uint8_t byte) {
  int32_t cached = states_[state].next[byte];
  if (cached != kUnknown) return cached;
  std::vector<Stack> out;
  size_t budget = kMaxConfigurationInts;
  for (const Stack& s : states_[state].stacks) {
    if (s.empty()) continue;
    const Elem& e = g_.elems[s.back()];
    if (!g_.sets[e.value].has(byte)) continue;
    Stack t = s;
    t.back() += 1;
    expand(std::move(t), out, budget);
  }
  if (budget == 0) overflowed_ = true;
  const int32_t to = budget == 0 ? kDead : intern(std::move(out));  // may grow states_
  states_[state].next[byte] = to;
  return to;
}

int32_t ByteAutomaton::walk(int32_t state, std::string_view bytes) {
  for (char c : bytes) {
    if (state == kDead) return kDead;
    state = next(state, static_cast<uint8_t>(c));
  }
  return state;
}

int32_t ByteAutomaton::reset(int32_t keep) {
  if (start_ == kDead) return kDead;
  std::vector<Stack> kept = states_[keep].stacks;
  std::vector<Stack> start = states_[start_].stacks;
  states_.clear();
  ids_.clear();
  stored_bytes_ = 0;
  const int32_t id = intern(std::move(kept));
  start_ = intern(std::move(start));
  return id;
}

}  // namespace duet::grammar
