// UTF-8 decoding, the character classes and NFC. NFC is checked against utf8proc's own
// whole-string NFC (the reference); duet's fast path must never disagree with it.
#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "text/tokenizer/unicode.h"

namespace duet {
namespace {

std::string reference_nfc(const std::string& s) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  EXPECT_GE(n, 0);
  std::string r(reinterpret_cast<const char*>(out), n < 0 ? 0 : static_cast<size_t>(n));
  std::free(out);
  return r;
}

std::string nfc(const std::string& s) {
  std::string storage;
  return std::string(to_nfc(s, &storage));
}

std::string utf8(uint32_t cp) {
  std::string s;
  append_utf8(&s, cp);
  return s;
}

TEST(Utf8, DecodesWellFormedSequences) {
  const std::string s = "a\u00e9\u4e2d\U0001F600";
  std::vector<uint32_t> cps;
  for (size_t pos = 0; pos < s.size();) {
    const Utf8Unit u = decode_utf8(s, pos);
    ASSERT_EQ(u.status, Utf8Status::kValid);
    cps.push_back(u.cp);
    pos += u.len;
  }
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x61, 0xE9, 0x4E2D, 0x1F600}));
}

// The example of Unicode 15, §3.9 ("U+FFFD Substitution of Maximal Subparts"), Table 3-8:
// 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
TEST(Utf8, ReplacesMaximalSubpartsAsTheStandardShows) {
  std::string out;
  append_utf8_lossy(&out, "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64");
  EXPECT_EQ(out, "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd");
}

TEST(Utf8, RejectsOverlongsSurrogatesAndOutOfRange) {
  for (const char* bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xF5\x80\x80\x80", "\xFF"}) {
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
    EXPECT_EQ(decode_utf8(bad, 0).status, Utf8Status::kInvalid);
  }
  EXPECT_EQ(decode_utf8("\xF0\x9F\x98", 0).status, Utf8Status::kTruncated);
  EXPECT_EQ(decode_utf8("\xF0\x9F\x98", 0).len, 3u);
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
}

TEST(CharClasses, FollowUnicodeCategoriesAndWhiteSpace) {
  for (uint32_t cp : {U'a', U'Z', U'é', U'ß', U'中', U'ア', U'ك', U'ж', U'ǅ', U'ʰ'})
    EXPECT_TRUE(is_letter(cp)) << cp;
  for (uint32_t cp : {U'1', U'٣', U'Ⅻ', U'½', U'²', U'①'}) EXPECT_TRUE(is_number(cp)) << cp;
  for (uint32_t cp : {U'_', U'-', U'\u0301', U'😀', U'\u200d', U'\ufeff', U'，'}) {
    EXPECT_FALSE(is_letter(cp)) << cp;
    EXPECT_FALSE(is_number(cp)) << cp;
  }
  // White_Space, exactly: 25 code points.
  std::vector<uint32_t> spaces;
  for (uint32_t cp = 0; cp < 0x110000; ++cp)
    if (is_whitespace(cp)) spaces.push_back(cp);
  EXPECT_EQ(spaces, (std::vector<uint32_t>{0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,
                                           0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                           0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                           0x2029, 0x202F, 0x205F, 0x3000}));
}

TEST(Nfc, ComposesAndReorders) {
  EXPECT_EQ(nfc("e\u0301"), "\u00e9");
  EXPECT_EQ(nfc("\u212b"), "\u00c5");                // ANGSTROM SIGN, a singleton
  EXPECT_EQ(nfc("a\u0323\u0302"), "\u1ead");         // canonical reordering, then composition
  EXPECT_EQ(nfc("\u1100\u1161\u11a8"), "\uac01");    // Hangul L V T
  EXPECT_EQ(nfc("\u0bc6\u0bbe"), "\u0bca");          // a second half with combining class 0
  EXPECT_EQ(nfc("q\u0307\u0323"), "q\u0323\u0307");  // reorders, nothing to compose
}

TEST(Nfc, ReturnsTheInputWhenAlreadyNormalized) {
  std::string storage = "untouched";
  const std::string s = "plain text, 中文, é, 😀";
  const std::string_view r = to_nfc(s, &storage);
  EXPECT_EQ(r.data(), s.data());
  EXPECT_EQ(storage, "untouched");
}

TEST(Nfc, KeepsIllFormedBytesInPlace) {
  EXPECT_EQ(nfc("\xff"
                "e\u0301\x80"),
            "\xff\u00e9\x80");
  EXPECT_EQ(nfc("e\xff\u0301"), "e\xff\u0301");  // a bad byte separates the base from the mark
}

TEST(Nfc, AgreesWithUtf8procOnEveryCodePoint) {
  // Each code point alone, after a base letter, and before a combining mark.
  for (uint32_t cp = 1; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = "a" + utf8(cp) + "\u0301x";
    ASSERT_EQ(nfc(s), reference_nfc(s)) << std::hex << cp;
  }
}

TEST(Nfc, AgreesWithUtf8procOnRandomMixtures) {
  // Characters chosen to interact: bases, marks of several classes, Hangul jamo and
  // syllables, Indic vowel signs that compose with class 0, singletons, excluded composites.
  const std::vector<uint32_t> pool = {
      'a',    'e',    'o',    'u',    'A',    ' ',    0xE9,   0xC5,   0x212B,  0x0300, 0x0301,
      0x0302, 0x0308, 0x0323, 0x0327, 0x0344, 0x0340, 0x0958, 0x0915, 0x093C,  0x1100, 0x1161,
      0x11A8, 0xAC00, 0xAC01, 0x0BC6, 0x0BBE, 0x0BD7, 0x0B47, 0x0B3E, 0x0B57,  0x0DD9, 0x0DCF,
      0x0DDF, 0x1025, 0x102E, 0x3099, 0x304B, 0x30AB, 0x4E2D, 0xF900, 0x1F600, 0x05D0, 0x05B7,
      0xFB2E, 0x0F71, 0x0F72, 0x0F73, 0x1B05, 0x1B35, 0x0CBF, 0x0CD5, 0x0CC6,  0x0CC2};
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < len; ++k) append_utf8(&s, pool[rng() % pool.size()]);
    ASSERT_EQ(nfc(s), reference_nfc(s)) << s;
  }
}

}  // namespace
}  // namespace duet
