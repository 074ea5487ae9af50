// libFuzzer target: GBNF text (llama.cpp's `grammar` field) through the parser and the byte
// automaton. Beyond "no crash, no sanitizer report, no hang", it traps when a grammar that
// parsed cannot be printed, or when the automaton disagrees with itself: walking a text byte
// by byte and all at once must reach the same state; or when a token mask assembled from the
// precomputed stack masks differs from the whole-trie walk, at any step along the text (over a
// vocabulary of every byte and the text's own 2- to 4-byte pieces); or when jump-forward
// moves the constraint where the forced bytes do not lead.
//
// Input: the grammar text, then (after a NUL byte, if any) bytes to walk through it.
//
//   build-fuzz/fuzz_gbnf -max_total_time=60 <corpus copy>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_constraint.h"

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Masks along `walk`: assembled (after precompute) and walked must agree at every step.
void check_masks(const duet::grammar::Grammar& g, std::string_view walk) {
  using namespace duet::grammar;
  std::vector<TokenTrie::Token> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back({b, std::string(1, static_cast<char>(b))});
  for (size_t i = 0; i < walk.size() && vocab.size() < 320; ++i)
    for (size_t len = 2; len <= 4 && i + len <= walk.size(); ++len)
      vocab.push_back({static_cast<int32_t>(vocab.size()), std::string(walk.substr(i, len))});
  const int32_t n_vocab = static_cast<int32_t>(vocab.size());
  auto trie = std::make_shared<const TokenTrie>(n_vocab, std::move(vocab));
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  compiled->precompute_masks(*trie);
  GrammarConstraint c(compiled, trie);
  GrammarConstraint jumping(compiled, trie);
  jumping.set_text_encoder([](std::string_view text) {
    std::vector<int32_t> ids;
    for (char ch : text) ids.push_back(static_cast<uint8_t>(ch));
    return ids;
  });
  for (char ch : walk) {
    const std::span<const uint64_t> mask = c.allowed();
    const TokenMask by_walk = c.compute_mask_by_walk();
    check(std::equal(mask.begin(), mask.end(), by_walk.begin(), by_walk.end()));
    if (!c.accept(static_cast<uint8_t>(ch))) break;
    check(jumping.accept(static_cast<uint8_t>(ch)));
  }
  // What a jump moves over is what the grammar allows next, and leads where those bytes lead.
  std::string forced;
  for (int32_t t : jumping.jump_forward(64)) forced += static_cast<char>(t);
  if (forced.empty()) return;
  // Each jumped byte was forced: the grammar could not end there, and of the single-byte
  // tokens (every byte is one) the mask allowed that byte alone.
  for (char ch : forced) {
    check(!c.can_end());
    const std::span<const uint64_t> m = c.allowed();
    int singles = 0;
    for (int b = 0; b < 256; ++b) singles += static_cast<int>((m[b >> 6] >> (b & 63)) & 1);
    check(singles == 1 && ((m[static_cast<uint8_t>(ch) >> 6] >> (ch & 63)) & 1));
    check(c.accept(static_cast<uint8_t>(ch)));
  }
  const std::span<const uint64_t> a = c.allowed();
  const std::span<const uint64_t> b = jumping.allowed();
  check(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view text = in.substr(0, nul);
  const std::string_view walk = nul == std::string_view::npos ? text : in.substr(nul + 1);
  duet::grammar::GbnfLimits limits;
  limits.max_rules = 2000;  // keeps one input's work small; the limits themselves are tested
  limits.max_elems = 20000;
  auto g = duet::grammar::parse_gbnf(text, "root", limits);
  if (!g) return 0;
  check(!duet::grammar::to_string(g.value()).empty());
  duet::grammar::ByteAutomaton a(g.value());
  int32_t step = a.start();
  for (char c : walk.substr(0, 256)) {
    if (step == duet::grammar::ByteAutomaton::kDead) break;
    step = a.next(step, static_cast<uint8_t>(c));
  }
  duet::grammar::ByteAutomaton b(g.value());
  const int32_t whole = b.walk(b.start(), walk.substr(0, 256));
  check((step == duet::grammar::ByteAutomaton::kDead) ==
        (whole == duet::grammar::ByteAutomaton::kDead));
  if (step != duet::grammar::ByteAutomaton::kDead) check(a.key(step) == b.key(whole));
  // The mask check costs a precompute per input: small grammars only, so inputs stay fast.
  if (g.value().elems.size() <= 400) check_masks(g.value(), walk.substr(0, 48));
  return 0;
}
