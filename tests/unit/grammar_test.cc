// The grammar core: GBNF parsing, the byte automaton, and token masks against a brute-force
// check of every token.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "support/grammar_match.h"
#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_constraint.h"
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
