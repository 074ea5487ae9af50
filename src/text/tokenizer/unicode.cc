#include "text/tokenizer/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

namespace duet {
namespace {

bool in(uint8_t b, uint8_t lo, uint8_t hi) { return b >= lo && b <= hi; }

// The range the second byte of a sequence must fall in, given its lead byte (Unicode
// Table 3-7); the later continuation bytes are always 80..BF.
void second_byte_range(uint8_t lead, uint8_t* lo, uint8_t* hi) {
  *lo = 0x80, *hi = 0xBF;
  if (lead == 0xE0) *lo = 0xA0;  // no overlong 3-byte forms
  if (lead == 0xED) *hi = 0x9F;  // no surrogates
  if (lead == 0xF0) *lo = 0x90;  // no overlong 4-byte forms
  if (lead == 0xF4) *hi = 0x8F;  // nothing above U+10FFFF
}

// Hangul vowels and trailing consonants compose algorithmically with a preceding syllable
// or leading consonant, so utf8proc's decomposition data does not list them.
bool is_hangul_vowel_or_trailing(uint32_t cp) {
  return (cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2);
}

std::string nfc_of(std::string_view s) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
      &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  // Only well-formed UTF-8 reaches here, so utf8proc cannot fail; keep the text if it does.
  if (n < 0) return std::string(s);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

// Code points with canonical combining class 0 that NFC may still change or merge into a
// preceding character: the second halves of canonical compositions (e.g. U+0BBE, which
// follows U+0BC6 to make U+0BCA) and composites that NFC replaces (singletons such as
// U+212B, composition exclusions). Derived once from utf8proc's own data.
const std::vector<uint32_t>& ccc0_nfc_unstable() {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t;
    utf8proc_int32_t buf[8];
    for (utf8proc_int32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const utf8proc_property_t* p = utf8proc_get_property(cp);
      if (p->decomp_seqindex == UINT16_MAX || p->decomp_type != 0)
        continue;  // no canonical decomposition
      int last_boundclass = 0;
      const utf8proc_ssize_t n =
          utf8proc_decompose_char(cp, buf, 8, UTF8PROC_DECOMPOSE, &last_boundclass);
      for (utf8proc_ssize_t i = 1; i < n && i < 8; ++i)
        if (utf8proc_get_property(buf[i])->combining_class == 0)
          t.push_back(static_cast<uint32_t>(buf[i]));
      std::string one;
      append_utf8(&one, static_cast<uint32_t>(cp));
      if (nfc_of(one) != one) t.push_back(static_cast<uint32_t>(cp));
    }
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    return t;
  }();
  return table;
}

// True when NFC leaves `cp` alone whatever surrounds it, and nothing before it can combine
// with it. It may still be the base that following combining marks compose onto.
bool nfc_inert(uint32_t cp) {
  if (cp < 0x300) return true;  // Latin-1 and friends: starters, never a second half, stable
  if (utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class != 0) return false;
  if (is_hangul_vowel_or_trailing(cp)) return false;
  const auto& unstable = ccc0_nfc_unstable();
  return !std::binary_search(unstable.begin(), unstable.end(), cp);
}

}  // namespace

Utf8Unit decode_utf8(std::string_view text, size_t pos) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  const uint8_t b0 = s[pos];
  if (b0 < 0x80) return {b0, 1, Utf8Status::kValid};
  uint32_t need;  // continuation bytes
  uint32_t cp;
  if (in(b0, 0xC2, 0xDF)) {
    need = 1, cp = b0 & 0x1Fu;
  } else if (in(b0, 0xE0, 0xEF)) {
    need = 2, cp = b0 & 0x0Fu;
  } else if (in(b0, 0xF0, 0xF4)) {
    need = 3, cp = b0 & 0x07u;
  } else {
    return {0, 1, Utf8Status::kInvalid};
  }
  uint8_t lo, hi;
  second_byte_range(b0, &lo, &hi);
  for (uint32_t i = 1; i <= need; ++i) {
    if (pos + i >= n) return {0, i, Utf8Status::kTruncated};
    const uint8_t b = s[pos + i];
    if (!in(b, lo, hi)) return {0, i, Utf8Status::kInvalid};
    cp = (cp << 6) | (b & 0x3Fu);
    lo = 0x80, hi = 0xBF;
  }
  return {cp, need + 1, Utf8Status::kValid};
}

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Unit u = decode_utf8(text, pos);
    if (u.status != Utf8Status::kValid) return false;
    pos += u.len;
  }
  return true;
}

void append_utf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void append_utf8_lossy(std::string* out, std::string_view bytes) {
  size_t copied = 0;  // bytes[copied, pos) are well-formed and not yet appended
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Unit u = decode_utf8(bytes, pos);
    if (u.status == Utf8Status::kValid) {
      pos += u.len;
      continue;
    }
    out->append(bytes.substr(copied, pos - copied));
    out->append("\xEF\xBF\xBD");
    pos += u.len;
    copied = pos;
  }
  out->append(bytes.substr(copied));
}

bool is_letter(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool is_number(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

bool is_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string_view to_nfc(std::string_view text, std::string* storage) {
  // Walk the text; wherever a unit that NFC might touch appears, normalize the smallest
  // window around it that NFC cannot see past: from the inert character before it (a base
  // that marks may compose onto) up to the next inert character or ill-formed byte.
  const size_t n = text.size();
  size_t copied = 0;  // text[0, copied) is already in *storage
  bool changed = false;
  size_t last_inert = std::string_view::npos;  // start of the preceding unit, when inert
  size_t pos = 0;
  while (pos < n) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      last_inert = pos++;
      continue;
    }
    const Utf8Unit u = decode_utf8(text, pos);
    if (u.status != Utf8Status::kValid) {
      last_inert = std::string_view::npos;
      pos += 1;
      continue;
    }
    if (nfc_inert(u.cp)) {
      last_inert = pos;
      pos += u.len;
      continue;
    }
    const size_t start = last_inert != std::string_view::npos ? last_inert : pos;
    size_t end = pos + u.len;
    while (end < n) {
      if (static_cast<uint8_t>(text[end]) < 0x80) break;
      const Utf8Unit v = decode_utf8(text, end);
      if (v.status != Utf8Status::kValid || nfc_inert(v.cp)) break;
      end += v.len;
    }
    const std::string_view window = text.substr(start, end - start);
    std::string normalized = nfc_of(window);
    if (normalized != window) {
      if (!changed) storage->clear();
      changed = true;
      storage->append(text.substr(copied, start - copied));
      storage->append(normalized);
      copied = end;
    }
    last_inert = std::string_view::npos;
    pos = end;
  }
  if (!changed) return text;
  storage->append(text.substr(copied));
  return *storage;
}

}  // namespace duet
