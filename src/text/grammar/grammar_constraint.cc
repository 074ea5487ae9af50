#include "text/grammar/grammar_constraint.h"

#include <bit>

namespace duet::grammar {

namespace {

// The length of the longest prefix of `s` that does not end inside a UTF-8 sequence: a lead
// byte at the end without all its continuation bytes is cut off, with what it has of them.
size_t utf8_whole_prefix(std::string_view s) {
  size_t lead = s.size();
  while (lead > 0 && (static_cast<uint8_t>(s[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead == 0) return s.size();
  const uint8_t b = static_cast<uint8_t>(s[lead - 1]);
  const size_t len = b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  return lead - 1 + len > s.size() ? lead - 1 : s.size();
}

}  // namespace

void CompiledGrammar::use_trie(const TokenTrie& trie) const {
  if (trie_ == &trie) return;
  masks_.clear();
  stack_masks_.clear();
  stack_mask_bytes_ = 0;
  precomputed_for_ = nullptr;
  trie_ = &trie;
}

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
  use_trie(trie);
  if (masks_.size() >= kMaxMasks) masks_.clear();
  masks_.emplace(key, std::move(mask));
}

size_t CompiledGrammar::cached_masks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return masks_.size();
}

namespace {

std::string frames_key(std::span<const int32_t> frames) {
  return std::string(reinterpret_cast<const char*>(frames.data()), frames.size_bytes());
}

}  // namespace

std::shared_ptr<const StackMask> CompiledGrammar::find_stack_mask(
    const TokenTrie& trie, std::span<const int32_t> frames) const {
  const std::string key = frames_key(frames);
  std::lock_guard<std::mutex> lock(mu_);
  if (trie_ != &trie) return nullptr;
  auto it = stack_masks_.find(key);
  return it == stack_masks_.end() ? nullptr : it->second;
}

std::shared_ptr<const StackMask> CompiledGrammar::add_stack_mask(
    const TokenTrie& trie, std::span<const int32_t> frames) const {
  if (auto kept = find_stack_mask(trie, frames)) return kept;
  auto computed = std::make_shared<const StackMask>(compute_stack_mask(grammar_, frames, trie));
  std::string key = frames_key(frames);
  std::lock_guard<std::mutex> lock(mu_);
  use_trie(trie);
  const size_t bytes = computed->stored_bytes() + key.size();
  if (stack_mask_bytes_ + bytes > kMaxStackMaskBytes) return computed;  // full: not kept
  auto [it, added] = stack_masks_.emplace(std::move(key), std::move(computed));
  if (added) stack_mask_bytes_ += bytes;
  return it->second;
}

size_t CompiledGrammar::cached_stack_masks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stack_masks_.size();
}

size_t CompiledGrammar::stack_mask_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stack_mask_bytes_;
}

bool CompiledGrammar::precomputed(const TokenTrie& trie) const {
  std::lock_guard<std::mutex> lock(mu_);
  return precomputed_for_ == &trie && trie_ == &trie;
}

size_t CompiledGrammar::precompute_masks(const TokenTrie& trie,
                                         const std::atomic<bool>* stop) const {
  if (precomputed(trie)) return 0;
  // From every position: its mask alone, then with each continuation that can lie below it,
  // and so on while the tokens that read past the frames are too many to check one by one.
  const FrameGraph fg = frame_graph(grammar_);
  size_t visited = 0, computed = 0;
  bool stopped = false;
  std::vector<int32_t> frames;  // bottom first, as stacks are
  auto visit = [&](auto& self, int32_t bottom_rule) -> void {
    // At the bound the grammar counts as done (a later run would stop at the same place);
    // stopped from outside, it does not.
    if (visited >= kMaxPrecomputedMasks) return;
    if (stop != nullptr && stop->load()) {
      stopped = true;
      return;
    }
    ++visited;
    const bool kept = find_stack_mask(trie, frames) != nullptr;
    const bool too_uncertain = add_stack_mask(trie, frames)->too_uncertain;
    if (!kept) ++computed;
    if (!too_uncertain) return;
    if (frames.size() >= kMaxPrecomputedFrames) return;
    for (int32_t c : fg.below[bottom_rule]) {
      frames.insert(frames.begin(), c);
      self(self, fg.rule_of[c]);
      frames.erase(frames.begin());
    }
  };
  for (int32_t r = 0; r < grammar_.n_rules(); ++r)
    for (int32_t p : fg.positions[r]) {
      frames.assign(1, p);
      visit(visit, r);
    }
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopped && trie_ == &trie) precomputed_for_ = &trie;
  return computed;
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                                     std::shared_ptr<const TokenTrie> trie)
    : grammar_(std::move(grammar)),
      trie_(std::move(trie)),
      automaton_(grammar_->grammar()),
      state_(automaton_.start()) {}

TokenMask GrammarConstraint::compute_mask() {
  const TokenTrie& t = *trie_;
  // Each stack's mask from its fewest top frames that leave few tokens uncertain (below its
  // bottom, the grammar has ended: those tokens are uncertain too, and the check refuses
  // them), then those uncertain tokens checked against the whole configuration. The stacks are
  // copied: checking walks the automaton, which may add states (and move the vector they live in).
  const std::vector<std::vector<int32_t>> stacks = automaton_.stacks(state_);
  if (stacks.size() > kMaxAssembledStacks) return compute_mask_by_walk();
  // Near the automaton's bound on a configuration's size a token the top frames accept may be
  // refused for the size alone (ByteAutomaton::overflowed): the walk decides those exactly.
  size_t ints = 0;
  for (const std::vector<int32_t>& s : stacks) ints += s.size() + 1;
  if (ints > ByteAutomaton::kMaxConfigurationInts / 4) return compute_mask_by_walk();
  std::vector<std::shared_ptr<const StackMask>> parts;
  parts.reserve(stacks.size());
  for (const std::vector<int32_t>& s : stacks) {
    if (s.empty()) continue;  // the grammar may end here: the engine allows the end tokens
    std::shared_ptr<const StackMask> part;
    for (size_t k = 1; k <= s.size() && part == nullptr; ++k) {
      auto m = grammar_->find_stack_mask(t, std::span<const int32_t>(s).last(k));
      if (m == nullptr || m->overflowed) return compute_mask_by_walk();  // not covered
      if (!m->too_uncertain) part = std::move(m);
    }
    if (part == nullptr) return compute_mask_by_walk();
    parts.push_back(std::move(part));
  }
  TokenMask mask(t.n_words(), 0);
  for (const auto& part : parts) part->add_accepted(mask);
  for (const auto& part : parts)
    for (int32_t id : part->uncertain) {
      uint64_t& word = mask[static_cast<size_t>(id) >> 6];
      const uint64_t bit = uint64_t{1} << (id & 63);
      if ((word & bit) == 0 && automaton_.walk(state_, t.bytes(id)) != ByteAutomaton::kDead)
        word |= bit;
    }
  return mask;
}

TokenMask GrammarConstraint::compute_mask_by_walk() {
  ++walked_masks_;
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

std::vector<int32_t> GrammarConstraint::jump_forward(int64_t max_tokens) {
  if (!encode_ || max_tokens <= 0) return {};
  // The bytes the grammar forces: while nothing may end here and exactly one byte may follow.
  std::string forced;
  int32_t s = state_;
  while (forced.size() < kMaxForcedBytes && !automaton_.accepting(s)) {
    const ByteSet& next = automaton_.next_bytes(s);
    int count = 0, byte = -1;
    for (size_t w = 0; w < next.bits.size() && count < 2; ++w)
      if (next.bits[w] != 0) {
        count += std::popcount(next.bits[w]);
        byte = static_cast<int>(w * 64) + std::countr_zero(next.bits[w]);
      }
    if (count != 1) break;
    const int32_t after = automaton_.next(s, static_cast<uint8_t>(byte));
    if (after == ByteAutomaton::kDead) break;  // the configuration bound refused it
    forced.push_back(static_cast<char>(byte));
    s = after;
  }
  // Whole characters only, as the encoder reads text: a character the grammar forces only in
  // part (the first byte that two choices share) is left to the model.
  const size_t whole = utf8_whole_prefix(forced);
  const bool ends_here = whole == forced.size() && !automaton_.can_continue(s);
  forced.resize(whole);
  if (forced.empty()) return {};
  std::vector<int32_t> tokens = encode_(forced);
  // Where the output goes on after the forced text, its last token could have merged with
  // what the model writes next (a quote with the word after it): that one is left to the
  // model, so the text keeps the tokens the model would have seen it as.
  if (!ends_here && !tokens.empty()) tokens.pop_back();
  if (static_cast<int64_t>(tokens.size()) > max_tokens)
    tokens.resize(static_cast<size_t>(max_tokens));
  // Each must be a token the mask would allow: stop at one that is not (a control token the
  // encoder matched, bytes outside the trie).
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!accept(tokens[i])) {
      tokens.resize(i);
      break;
    }
  return tokens;
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
