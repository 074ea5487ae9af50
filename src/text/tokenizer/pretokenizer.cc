#include "text/tokenizer/pretokenizer.h"

#include <array>
#include <cstdint>

#include "text/tokenizer/unicode.h"

namespace duet {
namespace {

// What the regex distinguishes about a character. CR and LF are apart from other
// whitespace because `[\r\n]` names them; everything else outside \p{L}, \p{N} and \s
// (punctuation, symbols, marks, emoji, ill-formed bytes) is kOther.
enum class Cls : uint8_t { kLetter, kNumber, kNewline, kSpace, kOther };

constexpr uint32_t kNotAChar = 0xFFFFFFFF;  // the code point of an ill-formed byte

struct Unit {
  uint32_t cp;
  uint32_t len;
  Cls cls;
};

constexpr std::array<Cls, 128> make_ascii_classes() {
  std::array<Cls, 128> t{};
  for (int c = 0; c < 128; ++c) {
    Cls k = Cls::kOther;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) k = Cls::kLetter;
    if (c >= '0' && c <= '9') k = Cls::kNumber;
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') k = Cls::kSpace;
    if (c == '\r' || c == '\n') k = Cls::kNewline;
    t[c] = k;
  }
  return t;
}
constexpr std::array<Cls, 128> kAsciiClasses = make_ascii_classes();

Unit unit_at(std::string_view text, size_t pos) {
  const auto b = static_cast<uint8_t>(text[pos]);
  if (b < 0x80) return {b, 1, kAsciiClasses[b]};
  const Utf8Unit u = decode_utf8(text, pos);
  if (u.status != Utf8Status::kValid) return {kNotAChar, 1, Cls::kOther};  // one unit per bad byte
  Cls k = Cls::kOther;
  if (is_letter(u.cp)) {
    k = Cls::kLetter;
  } else if (is_number(u.cp)) {
    k = Cls::kNumber;
  } else if (is_whitespace(u.cp)) {
    k = Cls::kSpace;  // U+0085, U+2028 etc. are \s but not [\r\n]
  }
  return {u.cp, u.len, k};
}

// Simple case folding, as far as the contraction letters need it.
uint32_t fold(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + ('a' - 'A');
  if (cp == 0x017F) return 's';  // LATIN SMALL LETTER LONG S
  return cp;
}

// End of the run of units of class `k` (or of either class) starting at pos.
size_t run_end(std::string_view text, size_t pos, Cls k, Cls k2) {
  while (pos < text.size()) {
    const Unit u = unit_at(text, pos);
    if (u.cls != k && u.cls != k2) break;
    pos += u.len;
  }
  return pos;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos (where an apostrophe is); 0 when it does not match.
size_t contraction_end(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const size_t p1 = pos + 1;
  if (p1 >= n) return 0;
  const Unit u1 = unit_at(text, p1);
  const uint32_t c1 = fold(u1.cp);
  const size_t p2 = p1 + u1.len;
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return p2;
  if ((c1 == 'r' || c1 == 'v' || c1 == 'l') && p2 < n) {
    const Unit u2 = unit_at(text, p2);
    const uint32_t c2 = fold(u2.cp);
    if ((c1 == 'l' && c2 == 'l') || (c1 != 'l' && c2 == 'e')) return p2 + u2.len;
  }
  return 0;
}

}  // namespace

size_t pretoken_end(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const Unit u0 = unit_at(text, pos);
  const size_t p1 = pos + u0.len;

  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (u0.cp == '\'') {
    if (const size_t end = contraction_end(text, pos)) return end;
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+ : a letter run, with one optional leading character that is
  // neither a letter, a number nor CR/LF (a space, a tab, punctuation...).
  if (u0.cls == Cls::kLetter) return run_end(text, p1, Cls::kLetter, Cls::kLetter);
  if ((u0.cls == Cls::kSpace || u0.cls == Cls::kOther) && p1 < n) {
    const Unit u1 = unit_at(text, p1);
    if (u1.cls == Cls::kLetter) return run_end(text, p1 + u1.len, Cls::kLetter, Cls::kLetter);
  }
  // \p{N} : one number character at a time.
  if (u0.cls == Cls::kNumber) return p1;
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*` : an optional U+0020, a run of "other", trailing CR/LF.
  size_t other_start = std::string_view::npos;
  if (u0.cls == Cls::kOther) {
    other_start = pos;
  } else if (u0.cp == ' ' && p1 < n && unit_at(text, p1).cls == Cls::kOther) {
    other_start = p1;
  }
  if (other_start != std::string_view::npos) {
    const size_t end = run_end(text, other_start, Cls::kOther, Cls::kOther);
    return run_end(text, end, Cls::kNewline, Cls::kNewline);
  }
  // u0 is whitespace. Scan its run once and decide among the three remaining alternatives.
  size_t end = pos;
  size_t last_start = pos;
  size_t after_last_newline = std::string_view::npos;
  size_t count = 0;
  while (end < n) {
    const Unit u = unit_at(text, end);
    if (u.cls != Cls::kSpace && u.cls != Cls::kNewline) break;
    last_start = end;
    end += u.len;
    ++count;
    if (u.cls == Cls::kNewline) after_last_newline = end;
  }
  // \s*[\r\n]+ : greedy \s* backs off to the last CR/LF of the run.
  if (after_last_newline != std::string_view::npos) return after_last_newline;
  // \s+(?!\S) : the whole run at the end of the text; otherwise all but its last character.
  if (end == n) return end;
  if (count >= 2) return last_start;
  // \s+ : a single whitespace character before a non-space.
  return end;
}

std::vector<std::string_view> split_pretokens(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = pretoken_end(text, pos);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

}  // namespace duet
