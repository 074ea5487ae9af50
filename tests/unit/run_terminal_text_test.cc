// duet run's terminal escaping (cli/run/terminal_text.h): exact escapes for each kind of control,
// the same output however the text is cut into pieces, and on random bytes an output that a
// terminal cannot act on (no control byte but \n and \t, no C1 control, valid UTF-8).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "cli/run/terminal_text.h"
#include "unit/stream_splits.h"

namespace duet::cli {
namespace {

std::string escape_in_pieces(const test::Pieces& pieces) {
  TerminalEscaper e;
  std::string out;
  for (std::string_view p : pieces) out += e.feed(p);
  return out + e.flush();
}

// What a terminal may receive: printable UTF-8, \n and \t.
bool terminal_safe(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
      ++i;
      continue;
    }
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = c & (0x7f >> n);
    for (int k = 1; k < n; ++k) {
      const unsigned char t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3f);
    }
    const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    if (cp <= 0x9f) return false;  // C1
    i += n;
  }
  return true;
}

TEST(TerminalText, EscapesEachKindOfControl) {
  EXPECT_EQ(escape_for_terminal("plain text, ünïcödé, 中文, 🙂\n\tend"),
            "plain text, ünïcödé, 中文, 🙂\n\tend");
  // A title change, a screen clear and a bell: all visible, none obeyed.
  EXPECT_EQ(escape_for_terminal("\x1b]0;pwned\x07\x1b[2J"), "^[]0;pwned^G^[[2J");
  EXPECT_EQ(escape_for_terminal(std::string("a\0b", 3)), "a^@b");
  EXPECT_EQ(escape_for_terminal("\x7f"), "^?");
  EXPECT_EQ(escape_for_terminal("line\r\nnext\rover"), "line\nnext^Mover");
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"
                                "31m"),
            "\\u009b31m");                                 // the 8-bit CSI
  EXPECT_EQ(escape_for_terminal("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is printable
  // Bytes that are not UTF-8: a lone continuation, a raw 8-bit CSI, an overlong form, a
  // surrogate, a code point past U+10FFFF, a truncated sequence at the end.
  EXPECT_EQ(escape_for_terminal("\x80"), "\\x80");
  EXPECT_EQ(escape_for_terminal("\x9b"
                                "2J"),
            "\\x9b2J");
  EXPECT_EQ(escape_for_terminal("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escape_for_terminal("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
  EXPECT_EQ(escape_for_terminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(escape_for_terminal("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(escape_for_terminal("ok\xe4\xb8"), "ok\\xe4\\xb8");
  EXPECT_EQ(escape_for_terminal("\r"), "^M");
}

TEST(TerminalText, SameOutputHoweverTheTextIsCut) {
  const std::string text =
      "a\x1b[31mred\x1b[0m\r\n中文🙂\xc2\x9b\x80z\r\rq\xe4\xb8\xadx\xf0\x9f\x99";
  const std::string whole = escape_for_terminal(text);
  EXPECT_TRUE(terminal_safe(whole)) << whole;
  for (const test::Pieces& pieces : test::all_splits(text))
    EXPECT_EQ(escape_in_pieces(pieces), whole);
}

TEST(TerminalText, RandomBytesComeOutSafe) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(std::uniform_int_distribution<int>(0, 40)(rng), '\0');
    for (char& c : text) {
      // Mostly bytes near the interesting ranges: controls, UTF-8 leads and continuations.
      const int kind = std::uniform_int_distribution<int>(0, 3)(rng);
      c = static_cast<char>(kind == 0   ? std::uniform_int_distribution<int>(0, 0x20)(rng)
                            : kind == 1 ? std::uniform_int_distribution<int>(0x7f, 0xa0)(rng)
                            : kind == 2 ? std::uniform_int_distribution<int>(0xc0, 0xff)(rng)
                                        : std::uniform_int_distribution<int>(0, 0xff)(rng));
    }
    const std::string out = escape_for_terminal(text);
    ASSERT_TRUE(terminal_safe(out)) << "input round " << round;
    // Cut once at random: the same output.
    const size_t cut = std::uniform_int_distribution<size_t>(0, text.size())(rng);
    ASSERT_EQ(escape_in_pieces(
                  {std::string_view(text).substr(0, cut), std::string_view(text).substr(cut)}),
              out);
  }
}

}  // namespace
}  // namespace duet::cli
