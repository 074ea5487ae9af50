// A compiled grammar as the engine's TokenConstraint.
//
// CompiledGrammar is what a request's output format compiles to (cached by the API layer, so
// the same schema compiles once) and what every request using it shares: the grammar, the
// stack masks computed so far (stack_masks.h) and the token masks, keyed by automaton
// configuration. A request's GrammarConstraint keeps its own ByteAutomaton (no locks on the
// hot path) and asks the shared cache for the mask of each configuration it reaches. A
// configuration no request has reached before is assembled from its stacks' masks
// (microseconds), once the grammar's stack masks are precomputed; until then, or for stacks
// they do not cover, a configuration no request has reached costs a walk of the vocabulary
// trie (about a millisecond over Qwen3's 151,936 tokens). That walk, compute_mask_by_walk(),
// is also the reference the assembled masks are tested against.
//
// Jump-forward: where the grammar allows exactly one byte string next (a property name after
// its opening quote), jump_forward() moves past the tokens that spell it, so the engine
// appends them without sampling and computes them in one chunk.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/token_constraint.h"
#include "text/grammar/byte_automaton.h"
#include "text/grammar/grammar.h"
#include "text/grammar/stack_masks.h"
#include "text/grammar/token_trie.h"

namespace duet::grammar {

class CompiledGrammar {
 public:
  explicit CompiledGrammar(Grammar g) : grammar_(std::move(g)) {}
  const Grammar& grammar() const { return grammar_; }

  // The cached mask for a configuration key under `trie`, or null.
  std::shared_ptr<const TokenMask> find_mask(const TokenTrie& trie, const std::string& key) const;
  void store_mask(const TokenTrie& trie, const std::string& key,
                  std::shared_ptr<const TokenMask> mask) const;
  size_t cached_masks() const;

  // The mask of a stack's top `frames` under `trie`, when precompute_masks() has computed it
  // (null otherwise: steps never compute one, they walk their configuration instead).
  std::shared_ptr<const StackMask> find_stack_mask(const TokenTrie& trie,
                                                   std::span<const int32_t> frames) const;
  size_t cached_stack_masks() const;
  size_t stack_mask_bytes() const;
  // Computes the stack masks steps will ask for: every byte-set position alone, and with each
  // continuation that can lie below it, deeper while too many tokens stay uncertain. Run once
  // per grammar, off the engine's thread (host/mask_precompute.h), and stopped early when
  // `stop` becomes true. Returns how many it computed: none when an earlier call finished it
  // for this trie (a quick check).
  size_t precompute_masks(const TokenTrie& trie, const std::atomic<bool>* stop = nullptr) const;
  bool precomputed(const TokenTrie& trie) const;

  // How many masks one grammar keeps (~19 KB each for Qwen3); the cache is emptied when full.
  static constexpr size_t kMaxMasks = 512;
  // The bytes of stack masks one grammar keeps; masks beyond them are not kept (their stacks
  // are walked).
  static constexpr size_t kMaxStackMaskBytes = size_t{32} << 20;
  // precompute_masks() goes this many frames deep and computes at most this many masks.
  static constexpr size_t kMaxPrecomputedFrames = 4;
  static constexpr size_t kMaxPrecomputedMasks = 20000;

 private:
  // Empties the caches when they were computed for another vocabulary. Under mu_.
  void use_trie(const TokenTrie& trie) const;
  // Computes and keeps the mask of `frames` (a no-op when kept already).
  std::shared_ptr<const StackMask> add_stack_mask(const TokenTrie& trie,
                                                  std::span<const int32_t> frames) const;

  Grammar grammar_;
  mutable std::mutex mu_;
  mutable const TokenTrie* trie_ = nullptr;  // the vocabulary the masks were computed for
  mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> masks_;
  // Keyed by the frames, serialised.
  mutable std::unordered_map<std::string, std::shared_ptr<const StackMask>> stack_masks_;
  mutable size_t stack_mask_bytes_ = 0;
  mutable const TokenTrie* precomputed_for_ = nullptr;  // precompute_masks() finished for it
};

// Encodes forced text into tokens the way the tokenizer would (for jump-forward).
using TextEncoder = std::function<std::vector<int32_t>(std::string_view)>;

class GrammarConstraint final : public TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const CompiledGrammar> grammar,
                    std::shared_ptr<const TokenTrie> trie);

  std::span<const uint64_t> allowed() override;
  bool can_end() const override { return automaton_.accepting(state_); }
  bool must_end() const override { return !automaton_.can_continue(state_); }
  bool accept(int32_t token) override;
  std::vector<int32_t> jump_forward(int64_t max_tokens) override;
  std::string why_stuck() const override;

  // Turns jump-forward on: forced text is encoded with `encode` (null: off, the default).
  void set_text_encoder(TextEncoder encode) { encode_ = std::move(encode); }

  // Whether `bytes` could come next (for tests).
  bool accepts_bytes(std::string_view bytes);
  // The mask of the current configuration by walking the whole trie through the automaton:
  // the reference for allowed(), and its fallback where stack masks do not apply.
  TokenMask compute_mask_by_walk();
  // How many of this request's masks were walked rather than assembled from stack masks.
  size_t walked_masks() const { return walked_masks_; }

  // Forced bytes followed at most, per jump.
  static constexpr size_t kMaxForcedBytes = 256;
  // A configuration of more stacks than this (an ambiguous grammar) is walked whole.
  static constexpr size_t kMaxAssembledStacks = 64;

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
  TextEncoder encode_;
  size_t walked_masks_ = 0;
};

}  // namespace duet::grammar
