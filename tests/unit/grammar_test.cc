// The grammar core: GBNF parsing, the byte automaton, and token masks against a brute-force
// check of every token.
#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>

#include "support/grammar_match.h"
#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_constraint.h"
#include "text/grammar/json_schema.h"
#include "text/grammar/token_trie.h"

namespace duet::grammar {
namespace {

Grammar parse_ok(std::string_view text) {
  auto g = parse_gbnf(text);
  EXPECT_TRUE(g.is_ok()) << g.status().message() << "\n" << text;
  return g.is_ok() ? std::move(g.value()) : Grammar{};
}

std::string parse_error(std::string_view text) {
  auto g = parse_gbnf(text);
  return g.is_ok() ? std::string("(parsed)") : g.status().message();
}

using test::grammar_matches;
using test::grammar_viable;

TEST(Gbnf, LiteralsAlternativesAndGroups) {
  const Grammar g = parse_ok(R"(root ::= "a" ("b" | "cd")* "e"  # comment
)");
  EXPECT_TRUE(grammar_matches(g, "ae"));
  EXPECT_TRUE(grammar_matches(g, "abcdbe"));
  EXPECT_FALSE(grammar_matches(g, "abc"));
  EXPECT_TRUE(grammar_viable(g, "abc"));
  EXPECT_FALSE(grammar_viable(g, "ac e"));
  EXPECT_FALSE(grammar_matches(g, ""));
}

TEST(Gbnf, RulesAcrossLinesAndForwardReferences) {
  const Grammar g = parse_ok(
      "root ::= item (\",\" item)*\n"
      "item ::=\n"
      "  num |\n"
      "  \"x\"\n"
      "num ::= [0-9]+\n");
  EXPECT_TRUE(grammar_matches(g, "1,x,23"));
  EXPECT_FALSE(grammar_matches(g, "1,"));
  EXPECT_FALSE(grammar_matches(g, "y"));
}

TEST(Gbnf, RepetitionBounds) {
  const Grammar g = parse_ok(R"(root ::= "a"{2,4} "b"{3} "c"{,1} "d"{1,})");
  EXPECT_TRUE(grammar_matches(g, "aabbbd"));
  EXPECT_TRUE(grammar_matches(g, "aaaabbbcddd"));
  EXPECT_FALSE(grammar_matches(g, "abbbd"));
  EXPECT_FALSE(grammar_matches(g, "aaaaabbbd"));
  EXPECT_FALSE(grammar_matches(g, "aabbd"));
  EXPECT_FALSE(grammar_matches(g, "aabbbccd"));
  EXPECT_FALSE(grammar_matches(g, "aabbb"));
}

TEST(Gbnf, CharacterClassesAreUtf8) {
  const Grammar g = parse_ok(R"(root ::= "\"" [^"\\\x00-\x1f]* "\"")");
  EXPECT_TRUE(grammar_matches(g, "\"plain\""));
  EXPECT_TRUE(grammar_matches(g, "\"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80\""));
  EXPECT_FALSE(grammar_matches(g, "\"a\"b\""));
  EXPECT_FALSE(grammar_matches(g, "\"tab\there\""));
  EXPECT_FALSE(grammar_viable(g,
                              "\"\xC3"
                              "a"));                      // a lead byte without its continuation
  EXPECT_FALSE(grammar_viable(g, "\"\xED\xA0\x80"));      // a UTF-16 surrogate, not a character
  EXPECT_FALSE(grammar_viable(g, "\"\xC0\xAF"));          // an overlong encoding
  EXPECT_FALSE(grammar_viable(g, "\"\xF4\x90\x80\x80"));  // above U+10FFFF
  const Grammar ranges = parse_ok(R"(root ::= [a-c\u00e9-\u00ea\U0001F600] .)");
  EXPECT_TRUE(grammar_matches(ranges, "b!"));
  EXPECT_TRUE(grammar_matches(ranges, "\xC3\xAA\xE4\xB8\xAD"));
  EXPECT_TRUE(grammar_matches(ranges, "\xF0\x9F\x98\x80z"));
  EXPECT_FALSE(grammar_matches(ranges, "d!"));
  EXPECT_FALSE(grammar_matches(ranges, "\xC3\xAB!"));
}

TEST(Gbnf, EscapesInLiterals) {
  const Grammar g = parse_ok(R"(root ::= "\n\t\\\"\x41\u00e9\U0001F600")");
  EXPECT_TRUE(grammar_matches(g, "\n\t\\\"A\xC3\xA9\xF0\x9F\x98\x80"));
}

TEST(Gbnf, ErrorsSayWhereAndWhat) {
  EXPECT_NE(parse_error("root ::= foo").find("foo is used but never defined"), std::string::npos);
  EXPECT_NE(parse_error("item ::= \"a\"").find("no rule named root"), std::string::npos);
  EXPECT_NE(parse_error("root ::= root \"a\" | \"b\"").find("without consuming input"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= (\"a\"?)*").find("without consuming input"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"abc").find("line 1"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{5,2}").find("below its minimum"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{99999}").find("above"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("root ::= [z-a]").find("backwards"), std::string::npos);
  EXPECT_NE(parse_error("root ::= <[1234]>").find("token references"), std::string::npos);
  EXPECT_NE(parse_error("root ::= *").find("nothing before"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"\\uD800\"").find("scalar"), std::string::npos);
  GbnfLimits small;
  small.max_rules = 50;
  auto big = parse_gbnf(R"(root ::= "a"{0,100})", "root", small);
  ASSERT_FALSE(big.is_ok());
  EXPECT_NE(big.status().message().find("too large"), std::string::npos);
}

TEST(ByteAutomaton, LongRepetitionsKeepTheStateCountSmall) {
  // A right-recursive loop is a tail call: reading many items revisits the same states.
  const Grammar g = parse_ok(R"(root ::= "[" [a-z]* "]")");
  ByteAutomaton a(g);
  int32_t s = a.walk(a.start(), "[");
  for (int i = 0; i < 1000; ++i) s = a.next(s, 'q');
  ASSERT_NE(s, ByteAutomaton::kDead);
  EXPECT_LT(a.n_states(), 5u);
  s = a.next(s, ']');
  EXPECT_TRUE(a.accepting(s));
  EXPECT_FALSE(a.can_continue(s));
}

TEST(ByteAutomaton, AnAmbiguousGrammarIsBoundedNotExhausted) {
  // Every letter may end an item and open another, so the parses multiply with each byte (a
  // fuzz_gbnf input that took 2 GB). The configuration is bounded: past the bound the byte
  // is refused and the automaton says why, in memory a request can afford.
  const Grammar g = parse_ok("root ::= item{0,5}\nitem ::= [a-z]+ root\n");
  ByteAutomaton a(g);
  int32_t s = a.start();
  int read = 0;
  for (; read < 256 && s != ByteAutomaton::kDead; ++read) s = a.next(s, 'q');
  EXPECT_EQ(s, ByteAutomaton::kDead);
  EXPECT_TRUE(a.overflowed());
  EXPECT_GT(read, 5);  // the first letters are read as the grammar says
  EXPECT_LT(a.stored_bytes(), size_t{64} << 20);
  // A grammar that keeps few parses open reads the same bytes without overflowing.
  const Grammar few = parse_ok("root ::= [a-z]+");
  ByteAutomaton plain(few);
  EXPECT_NE(plain.walk(plain.start(), std::string(256, 'q')), ByteAutomaton::kDead);
  EXPECT_FALSE(plain.overflowed());
}

TEST(ByteAutomaton, ResetKeepsTheCurrentConfiguration) {
  const Grammar g = parse_ok(R"(root ::= "ab" [0-9]{0,50} "c")");
  ByteAutomaton a(g);
  int32_t s = a.walk(a.start(), "ab123");
  const std::string key = a.key(s);
  s = a.reset(s);
  EXPECT_EQ(a.key(s), key);
  EXPECT_TRUE(a.accepting(a.walk(s, "4c")));
  EXPECT_TRUE(a.accepting(a.walk(a.start(), "abc")));
}

// Tokens of a made-up vocabulary: every byte alone, then random short strings over a small
// alphabet (so that many share prefixes), a few with bytes of multi-byte characters.
std::vector<TokenTrie::Token> test_vocabulary(int32_t n_random, uint32_t seed) {
  std::vector<TokenTrie::Token> v;
  for (int b = 0; b < 256; ++b) v.push_back({b, std::string(1, static_cast<char>(b))});
  std::mt19937 rng(seed);
  const std::string alphabet = "ab{}\":, 0123\\\xC3\xA9";
  for (int32_t i = 0; i < n_random; ++i) {
    std::string s;
    const int len = 2 + static_cast<int>(rng() % 6);
    for (int k = 0; k < len; ++k) s += alphabet[rng() % alphabet.size()];
    v.push_back({256 + i, s});
  }
  v.push_back({256 + n_random, "ab"});  // the same bytes as another token: both must be set
  return v;
}

TEST(GrammarConstraint, MaskEqualsCheckingEveryToken) {
  const Grammar g = parse_ok(
      "root ::= \"{\" ws (pair (ws \",\" ws pair)*)? ws \"}\"\n"
      "pair ::= str ws \":\" ws num\n"
      "str ::= \"\\\"\" [^\"\\\\]{0,6} \"\\\"\"\n"
      "num ::= [0-9]{1,3}\n"
      "ws ::= [ ]{0,2}\n");
  auto vocab = test_vocabulary(4000, 7);
  const int32_t n_vocab = static_cast<int32_t>(vocab.size()) + 3;  // ids past the trie: specials
  auto trie = std::make_shared<const TokenTrie>(n_vocab, vocab);
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  GrammarConstraint c(compiled, trie);
  std::mt19937 rng(11);
  int steps = 0;
  for (; steps < 40 && !c.must_end(); ++steps) {
    const std::span<const uint64_t> mask = c.allowed();
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < n_vocab; ++id) {
      const bool bit = (mask[id >> 6] >> (id & 63)) & 1;
      const std::string_view bytes = trie->bytes(id);
      const bool brute = !bytes.empty() && c.accepts_bytes(bytes);
      ASSERT_EQ(bit, brute) << "token " << id << " '" << bytes << "' at step " << steps;
      if (bit) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    ASSERT_TRUE(c.accept(allowed[rng() % allowed.size()]));
  }
  EXPECT_GT(steps, 3);
  EXPECT_GT(compiled->cached_masks(), 0u);
  EXPECT_FALSE(c.accept(n_vocab - 1));  // a token outside the trie is never accepted
}

// The mask assembled from stack masks equals the whole-trie walk and a check of every
// token, at every step of random replies, on grammars whose configurations stack up (nested
// values), whose rules end after any byte (strings, numbers), and that hold every JSON value.
struct MaskCase {
  const char* name;
  std::string gbnf;
};

class GrammarMasks : public ::testing::TestWithParam<MaskCase> {};

TEST_P(GrammarMasks, AssembledMaskEqualsTheWalkAndEveryToken) {
  const Grammar g = parse_ok(GetParam().gbnf);
  auto vocab = test_vocabulary(3000, 5);
  const int32_t n_vocab = static_cast<int32_t>(vocab.size()) + 3;
  auto trie = std::make_shared<const TokenTrie>(n_vocab, vocab);
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  EXPECT_GT(compiled->precompute_masks(*trie), 0u);
  EXPECT_TRUE(compiled->precomputed(*trie));
  EXPECT_EQ(compiled->precompute_masks(*trie), 0u);  // once
  int checked = 0;
  size_t walked = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    GrammarConstraint c(compiled, trie);
    std::mt19937 rng(seed);
    for (int step = 0; step < 50 && !c.must_end(); ++step) {
      const size_t walked_before = c.walked_masks();
      const std::span<const uint64_t> mask = c.allowed();
      walked += c.walked_masks() - walked_before;
      const TokenMask by_walk = c.compute_mask_by_walk();
      ASSERT_EQ(std::vector<uint64_t>(mask.begin(), mask.end()), by_walk)
          << GetParam().name << ", seed " << seed << ", step " << step;
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < n_vocab; ++id) {
        const bool bit = (mask[id >> 6] >> (id & 63)) & 1;
        const std::string_view bytes = trie->bytes(id);
        ASSERT_EQ(bit, !bytes.empty() && c.accepts_bytes(bytes))
            << GetParam().name << ": token " << id << " '" << bytes << "' at step " << step;
        if (bit) allowed.push_back(id);
      }
      ++checked;
      if (allowed.empty()) break;
      // Openers first half the time, so configurations nest deeper than a uniform draw goes.
      std::vector<int32_t> openers;
      for (int32_t id : allowed)
        if (trie->bytes(id).find_first_of("{[") != std::string_view::npos) openers.push_back(id);
      const bool open = !openers.empty() && rng() % 2 == 0;
      ASSERT_TRUE(
          c.accept(open ? openers[rng() % openers.size()] : allowed[rng() % allowed.size()]));
    }
  }
  EXPECT_GT(checked, 30);
  // The precomputed masks covered the configurations: almost none needed a walk.
  EXPECT_LE(walked * 10, static_cast<size_t>(checked)) << walked << " of " << checked;
}

INSTANTIATE_TEST_SUITE_P(
    Grammars, GrammarMasks,
    ::testing::Values(MaskCase{"flat object",
                               "root ::= \"{\" ws (pair (ws \",\" ws pair)*)? ws \"}\"\n"
                               "pair ::= str ws \":\" ws num\n"
                               "str ::= \"\\\"\" [^\"\\\\]{0,6} \"\\\"\"\n"
                               "num ::= [0-9]{1,3}\n"
                               "ws ::= [ ]{0,2}\n"},
                      MaskCase{"nested values",
                               "root ::= value\n"
                               "value ::= obj | arr | str | num\n"
                               "obj ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\n"
                               "pair ::= str ws \":\" ws value\n"
                               "arr ::= \"[\" ws (value (\",\" ws value)*)? \"]\"\n"
                               "str ::= \"\\\"\" [^\"\\\\]* \"\\\"\"\n"
                               "num ::= \"-\"? [0-9]+\n"
                               "ws ::= [ ]?\n"},
                      MaskCase{"any JSON value", json_value_gbnf()},
                      MaskCase{"rules that end after any byte",
                               "root ::= (word \" \")* word\nword ::= [a-z\\\"]+\n"}),
    [](const ::testing::TestParamInfo<MaskCase>& info) {
      std::string n;
      for (char ch : std::string(info.param.name)) n += std::isalnum(ch) ? ch : '_';
      return n;
    });

// A configuration no request has met, one nesting level deeper, is assembled from stack masks
// already computed: the top frames are the same at every depth. And the precomputed masks of a
// grammar are computed once, whatever the depth requests reach.
TEST(GrammarConstraint, DeeperNestingIsAssembledNotWalked) {
  const Grammar g = parse_ok("root ::= arr\narr ::= \"[\" (arr | [0-9] \" \"?) \"]\"\n");
  std::vector<TokenTrie::Token> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back({b, std::string(1, static_cast<char>(b))});
  vocab.push_back({256, "[["});
  vocab.push_back({257, "]]"});
  vocab.push_back({258, "1]"});
  vocab.push_back({259, "1 ]]"});
  auto trie = std::make_shared<const TokenTrie>(260, vocab);
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  ASSERT_GT(compiled->precompute_masks(*trie), 0u);
  const size_t stack_masks = compiled->cached_stack_masks();
  GrammarConstraint c(compiled, trie);
  for (int depth = 1; depth <= 12; ++depth) {
    (void)c.allowed();
    EXPECT_EQ(compiled->cached_masks(), static_cast<size_t>(depth));  // a new configuration
    ASSERT_TRUE(c.accept('['));
  }
  EXPECT_EQ(c.walked_masks(), 0u);
  EXPECT_EQ(compiled->cached_stack_masks(), stack_masks);
  ASSERT_TRUE(c.accept('7'));
  const std::span<const uint64_t> mask = c.allowed();
  EXPECT_EQ(std::vector<uint64_t>(mask.begin(), mask.end()), c.compute_mask_by_walk());
  EXPECT_EQ(c.walked_masks(), 1u);  // the line above
  auto allowed = [&](int32_t id) { return ((mask[id >> 6] >> (id & 63)) & 1) != 0; };
  EXPECT_TRUE(allowed(257));  // "]]": it closes two of the twelve
  EXPECT_TRUE(allowed(' '));
  EXPECT_FALSE(allowed('1'));  // a second digit
}

// An encoder for the tests' vocabularies: the longest token that spells a prefix, repeatedly
// (what matters is that the tokens spell the text).
TextEncoder longest_match_encoder(std::shared_ptr<const TokenTrie> trie) {
  return [trie](std::string_view text) {
    std::vector<int32_t> out;
    while (!text.empty()) {
      int32_t best = -1;
      size_t best_len = 0;
      for (int32_t id = 0; id < trie->n_vocab(); ++id) {
        const std::string_view b = trie->bytes(id);
        if (!b.empty() && b.size() > best_len && text.starts_with(b))
          best = id, best_len = b.size();
      }
      if (best < 0) break;
      out.push_back(best);
      text.remove_prefix(best_len);
    }
    return out;
  };
}

std::string spelled(const TokenTrie& trie, const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) s += trie.bytes(t);
  return s;
}

TEST(GrammarConstraint, JumpForwardSpellsTheForcedTextButItsLastToken) {
  const Grammar g = parse_ok(R"(root ::= "{\"name\": " [a-z]+ "}")");
  std::vector<TokenTrie::Token> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back({b, std::string(1, static_cast<char>(b))});
  vocab.push_back({256, "\"name"});
  vocab.push_back({257, "\": "});
  auto trie = std::make_shared<const TokenTrie>(260, vocab);
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  {
    GrammarConstraint off(compiled, trie);  // no encoder: no jump
    ASSERT_TRUE(off.accept('{'));
    EXPECT_TRUE(off.jump_forward(100).empty());
  }
  GrammarConstraint c(compiled, trie);
  c.set_text_encoder(longest_match_encoder(trie));
  // Forced from the start: {"name": (9 bytes) -> { + "name + ": ; the last token is left to
  // the model.
  EXPECT_EQ(c.jump_forward(100), (std::vector<int32_t>{'{', 256}));
  EXPECT_TRUE(c.accepts_bytes("\": x}"));
  EXPECT_FALSE(c.accepts_bytes("x"));
  EXPECT_TRUE(c.jump_forward(100).empty()) << "what is left of the forced text is one token";
  ASSERT_TRUE(c.accept(257));
  EXPECT_TRUE(c.jump_forward(100).empty()) << "a letter is a choice";
}

TEST(GrammarConstraint, JumpForwardToTheEndKeepsEveryTokenAndIsBounded) {
  const Grammar g = parse_ok(R"(root ::= "yes" | "no" | "x" ("é" | "è"))");
  auto trie = std::make_shared<const TokenTrie>(300, test_vocabulary(0, 1));
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  GrammarConstraint yes(compiled, trie);
  yes.set_text_encoder(longest_match_encoder(trie));
  ASSERT_TRUE(yes.accept('y'));
  EXPECT_EQ(spelled(*trie, yes.jump_forward(100)), "es");  // nothing can follow: all of it
  EXPECT_TRUE(yes.must_end());

  GrammarConstraint no(compiled, trie);
  no.set_text_encoder(longest_match_encoder(trie));
  ASSERT_TRUE(no.accept('n'));
  EXPECT_TRUE(no.jump_forward(0).empty());
  EXPECT_FALSE(no.must_end());
  EXPECT_EQ(no.jump_forward(1), std::vector<int32_t>{'o'});
  EXPECT_TRUE(no.must_end());

  // "é" and "è" share their first byte: half a character is never forced.
  GrammarConstraint accent(compiled, trie);
  accent.set_text_encoder(longest_match_encoder(trie));
  ASSERT_TRUE(accent.accept('x'));
  EXPECT_TRUE(accent.jump_forward(100).empty());
  EXPECT_TRUE(accent.accepts_bytes("\xC3\xA9"));
}

TEST(GrammarConstraint, JumpForwardStopsAtATokenTheGrammarRefuses) {
  const Grammar g = parse_ok(R"(root ::= "abc" [0-9])");
  auto trie = std::make_shared<const TokenTrie>(300, test_vocabulary(0, 1));
  GrammarConstraint c(std::make_shared<const CompiledGrammar>(g), trie);
  // An encoder that answers with a token outside the trie (a control token, say) after "b".
  c.set_text_encoder([](std::string_view) { return std::vector<int32_t>{'b', 299, 'c', 'd'}; });
  ASSERT_TRUE(c.accept('a'));
  EXPECT_EQ(c.jump_forward(100), std::vector<int32_t>{'b'});
  EXPECT_TRUE(c.accepts_bytes("c1"));
}

TEST(GrammarConstraint, SaysWhenTheGrammarIsTooAmbiguous) {
  const Grammar g = parse_ok("root ::= item{0,5}\nitem ::= [a-z]+ root\n");
  auto trie = std::make_shared<const TokenTrie>(300, test_vocabulary(20, 3));
  GrammarConstraint c(std::make_shared<const CompiledGrammar>(g), trie);
  EXPECT_EQ(c.why_stuck(), "");
  int accepted = 0;
  while (accepted < 256 && c.accept('q')) ++accepted;
  EXPECT_LT(accepted, 256);
  EXPECT_NE(c.why_stuck().find("too ambiguous"), std::string::npos) << c.why_stuck();
}

TEST(GrammarConstraint, SecondRequestReusesTheMasks) {
  const Grammar g = parse_ok(R"(root ::= "yes" | "no")");
  auto trie = std::make_shared<const TokenTrie>(300, test_vocabulary(20, 3));
  auto compiled = std::make_shared<const CompiledGrammar>(g);
  GrammarConstraint first(compiled, trie);
  (void)first.allowed();
  const size_t after_first = compiled->cached_masks();
  GrammarConstraint second(compiled, trie);
  (void)second.allowed();
  EXPECT_EQ(compiled->cached_masks(), after_first);
  ASSERT_TRUE(second.accept('y'));
  ASSERT_TRUE(second.accept('e'));
  EXPECT_FALSE(second.can_end());
  ASSERT_TRUE(second.accept('s'));
  EXPECT_TRUE(second.can_end());
  EXPECT_TRUE(second.must_end());
}

}  // namespace
}  // namespace duet::grammar
