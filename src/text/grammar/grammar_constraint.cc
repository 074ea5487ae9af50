#include "text/grammar/grammar_constraint.h"

namespace duet::grammar {

std::shared_ptr<const TokenMask> CompiledGrammar::find_mask(const TokenTrie& trie,
                                                            const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (trie_ != &trie) return nullptr;
  auto it = masks_.find(key);
  return it == masks_.end() ? nullptr : it->second;
}

void CompiledGrammar::store_mask(const TokenTrie& trie, const std::string& key,
                                 std::shared_ptr<const TokenMask> mask) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (trie_ != &trie || masks_.size() >= kMaxMasks) {
    masks_.clear();
    trie_ = &trie;
  }
  masks_.emplace(key, std::move(mask));
}

size_t CompiledGrammar::cached_masks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return masks_.size();
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                                     std::shared_ptr<const TokenTrie> trie)
    : grammar_(std::move(grammar)),
      trie_(std::move(trie)),
      automaton_(grammar_->grammar()),
      state_(automaton_.start()) {}

TokenMask GrammarConstraint::compute_mask() {
  const TokenTrie& t = *trie_;
  TokenMask mask(t.n_words(), 0);
  walk_.assign(t.max_depth() + 1, ByteAutomaton::kDead);
  walk_[0] = state_;
  for (size_t i = 1; i < t.n_nodes();) {
    const int32_t s = automaton_.next(walk_[t.depth(i) - 1], t.byte(i));
    if (s == ByteAutomaton::kDead) {
      i = t.subtree_end(i);  // no token below can match either
      continue;
    }
    walk_[t.depth(i)] = s;
    for (int32_t id : t.tokens_at(i))
      mask[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
    ++i;
  }
  return mask;
}

std::span<const uint64_t> GrammarConstraint::allowed() {
  if (!mask_) {
    const std::string& key = automaton_.key(state_);
    mask_ = grammar_->find_mask(*trie_, key);
    if (!mask_) {
      if (automaton_.n_states() > kMaxStates || automaton_.stored_bytes() > kMaxStoredBytes)
        state_ = automaton_.reset(state_);
      auto m = std::make_shared<const TokenMask>(compute_mask());
      grammar_->store_mask(*trie_, automaton_.key(state_), m);
      mask_ = std::move(m);
    }
  }
  return *mask_;
}

bool GrammarConstraint::accept(int32_t token) {
  const std::string_view bytes = trie_->bytes(token);
  if (bytes.empty()) return false;
  const int32_t next = automaton_.walk(state_, bytes);
  if (next == ByteAutomaton::kDead) return false;
  state_ = next;
  mask_.reset();
  return true;
}

std::string GrammarConstraint::why_stuck() const {
  if (!automaton_.overflowed()) return {};
  return "the grammar is too ambiguous to follow here: the next step would need more than " +
         std::to_string(ByteAutomaton::kMaxConfigurationInts) +
         " parse-stack entries (write it so that fewer parses stay open at once)";
}

bool GrammarConstraint::accepts_bytes(std::string_view bytes) {
  return automaton_.walk(state_, bytes) != ByteAutomaton::kDead;
}

}  // namespace duet::grammar
