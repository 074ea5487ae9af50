// A compiled grammar as the engine's TokenConstraint.
//
// CompiledGrammar is what a request's output format compiles to (cached by the API layer, so
// the same schema compiles once) and what every request using it shares: the grammar and the
// token masks computed so far, keyed by automaton configuration. A request's GrammarConstraint
// keeps its own ByteAutomaton (no locks on the hot path) and asks the shared cache for the mask
// of each configuration it reaches; only a configuration no request has reached before costs
// a trie walk (about a millisecond over Qwen3's 151,936 tokens), and that walk is itself cheap
// because the automaton's transitions are cached per state.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/token_constraint.h"
#include "text/grammar/byte_automaton.h"
#include "text/grammar/grammar.h"
#include "text/grammar/token_trie.h"

namespace duet::grammar {

using TokenMask = std::vector<uint64_t>;

class CompiledGrammar {
 public:
  explicit CompiledGrammar(Grammar g) : grammar_(std::move(g)) {}
  const Grammar& grammar() const { return grammar_; }

  // The cached mask for a configuration key under `trie`, or null.
  std::shared_ptr<const TokenMask> find_mask(const TokenTrie& trie, const std::string& key) const;
  void store_mask(const TokenTrie& trie, const std::string& key,
                  std::shared_ptr<const TokenMask> mask) const;
  size_t cached_masks() const;

  // How many masks one grammar keeps (~19 KB each for Qwen3); the cache is emptied when full.
  static constexpr size_t kMaxMasks = 512;

 private:
  Grammar grammar_;
  mutable std::mutex mu_;
  mutable const TokenTrie* trie_ = nullptr;  // the vocabulary the masks were computed for
  mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> masks_;
};

class GrammarConstraint final : public TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                    std::shared_ptr<const TokenTrie> trie);

  std::span<const uint64_t> allowed() override;
  bool can_end() const override { return automaton_.accepting(state_); }
  bool must_end() const override { return !automaton_.can_continue(state_); }
  bool accept(int32_t token) override;
  std::string why_stuck() const override;

  // Whether `bytes` could come next (for tests).
  bool accepts_bytes(std::string_view bytes);

 private:
  TokenMask compute_mask();

  // States beyond this are forgotten (a grammar with very many configurations).
  static constexpr size_t kMaxStates = 20000;
  static constexpr size_t kMaxStoredBytes = size_t{64} << 20;

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  ByteAutomaton automaton_;
  int32_t state_;
  std::shared_ptr<const TokenMask> mask_;  // for state_, once asked
  std::vector<int32_t> walk_;              // automaton state per trie depth
};

}  // namespace duet::grammar
