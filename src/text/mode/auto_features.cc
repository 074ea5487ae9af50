#include "text/mode/auto_features.h"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace duet {
namespace {

constexpr size_t kHeadBytes = 4096;
constexpr size_t kTailBytes = 2048;

// FNV-1a over the bytes, seeded by the feature's kind, so that the n-gram "a" and the word "a"
// land in different buckets.
uint32_t hash_feature(char kind, std::string_view bytes) {
  uint32_t h = 2166136261u ^ static_cast<uint8_t>(kind);
  h *= 16777619u;
  for (const char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h % kAutoFeatureBuckets;
}

void append_utf8(std::string& out, int32_t cp) {
  uint8_t buf[4];
  const auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

bool is_operator(int32_t cp) {
  return cp == '=' || cp == '+' || cp == '*' || cp == '/' || cp == '^' || cp == '<' || cp == '>' ||
         cp == 0x00D7 || cp == 0x00F7 || cp == 0x2212 || cp == 0x221A;
}

// Buckets 0, 1, 2-3, 4-7, ... of a count, as a small integer.
int log2_bucket(int n) {
  int b = 0;
  while (n > 0) ++b, n >>= 1;
  return b;
}

// A passage in quotes given to work on ("summarise this: «…»", "translate \"…\"") says what
// the request is about by being there, not by its words: each passage of 24 or more characters
// becomes one marker, so that a long text to translate reads like a short request to translate
// rather than like a long request. Returns the number of characters replaced.
int mask_quotes(std::vector<int32_t>& cps) {
  constexpr int32_t kQuoteMarker = 0xE000;  // a private-use character, never in the text
  constexpr size_t kMinPassage = 24;
  const auto closing_of = [](int32_t open) -> int32_t {
    switch (open) {
      case '"':
        return '"';
      case 0x201C:
        return 0x201D;  // “ ”
      case 0x201E:
        return 0x201C;  // „ “ (German)
      case 0x00AB:
        return 0x00BB;  // « »
      case 0x300C:
        return 0x300D;  // 「 」
      case 0x300E:
        return 0x300F;  // 『 』
      default:
        return 0;
    }
  };
  std::vector<int32_t> out;
  out.reserve(cps.size());
  int masked = 0;
  // A quote with no closing after it: any later one of its kind has none either (so a text
  // full of unmatched quotes costs one scan per kind, not one per quote).
  std::vector<int32_t> unclosed;
  for (size_t i = 0; i < cps.size(); ++i) {
    const int32_t close = closing_of(cps[i]);
    if (close == 0 || std::find(unclosed.begin(), unclosed.end(), close) != unclosed.end()) {
      out.push_back(cps[i]);
      continue;
    }
    size_t end = i + 1;
    while (end < cps.size() && cps[end] != close && !(close == 0x201C && cps[end] == 0x201D)) ++end;
    if (end == cps.size()) {
      unclosed.push_back(close);
      out.push_back(cps[i]);
      continue;
    }
    if (end - i - 1 >= kMinPassage) {
      out.push_back(' ');
      out.push_back(kQuoteMarker);
      out.push_back(' ');
      masked += static_cast<int>(end - i - 1);
    } else {  // a short quote is read as it is, closing quote included
      out.insert(out.end(), cps.begin() + static_cast<std::ptrdiff_t>(i),
                 cps.begin() + static_cast<std::ptrdiff_t>(end) + 1);
    }
    i = end;
  }
  cps = std::move(out);
  return masked;
}

}  // namespace

size_t utf8_floor(std::string_view s, size_t pos) {
  for (int k = 0;
       k < 3 && pos > 0 && pos < s.size() && (static_cast<uint8_t>(s[pos]) & 0xC0) == 0x80; ++k)
    --pos;
  return pos;
}

std::string_view bounded_head(std::string_view text) {
  if (text.size() <= kHeadBytes + kTailBytes) return text;
  return text.substr(0, utf8_floor(text, kHeadBytes));
}

std::string_view bounded_tail(std::string_view text) {
  if (text.size() <= kHeadBytes + kTailBytes) return {};
  return text.substr(utf8_floor(text, text.size() - kTailBytes));
}

std::vector<AutoFeature> extract_auto_features(std::string_view raw) {
  // Normalise into code points: folded case, digits as 0, one space for any whitespace run.
  std::vector<int32_t> cps{' '};
  int digits = 0, operators = 0, questions = 0, lines = 0;
  for (std::string_view part : {bounded_head(raw), bounded_tail(raw)}) {
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(part.data());
    utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(part.size());
    while (left > 0) {
      int32_t cp = 0;
      utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
      if (n <= 0) {  // an invalid byte: skipped
        n = 1;
        cp = -1;
      }
      p += n;
      left -= n;
      if (cp < 0) continue;
      const utf8proc_category_t cat = utf8proc_category(cp);
      if (cp == '\n') ++lines;
      if (cp == '?' || cp == 0xFF1F || cp == 0x061F || cp == 0x037E) ++questions;
      if (is_operator(cp)) ++operators;
      if (cat == UTF8PROC_CATEGORY_ZS || cp == '\n' || cp == '\t' || cp == '\r') {
        if (cps.back() != ' ') cps.push_back(' ');
        continue;
      }
      if (cat == UTF8PROC_CATEGORY_ND) {
        ++digits;
        cp = '0';
      }
      if (cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF) continue;
      cps.push_back(utf8proc_tolower(cp));
    }
    if (cps.back() != ' ') cps.push_back(' ');
  }

  const int quoted = mask_quotes(cps);

  // Which features are present (each counts once): a bitmap over the buckets, so that finding
  // the distinct ones costs one test per feature rather than a hash map or a sort.
  thread_local std::vector<uint64_t> seen(kAutoFeatureBuckets / 64);
  std::fill(seen.begin(), seen.end(), 0);
  std::vector<AutoFeature> out;
  const auto add = [&](uint32_t index) {
    uint64_t& word = seen[index / 64];
    const uint64_t bit = uint64_t{1} << (index % 64);
    if (word & bit) return;
    word |= bit;
    out.push_back({index, 1.0f});
  };
  std::string gram;
  for (size_t i = 0; i < cps.size(); ++i) {
    gram.clear();
    for (size_t n = 1; n <= 4 && i + n <= cps.size(); ++n) {
      append_utf8(gram, cps[i + n - 1]);
      if (n == 1 && cps[i] == ' ') continue;  // a lone space says nothing
      add(hash_feature(static_cast<char>('0' + n), gram));
    }
  }
  // The ends again, apart: the request itself sits at the start (or, in verb-final languages,
  // at the end) and says more than the material around it.
  constexpr size_t kEnd = 32;
  for (const bool head : {true, false}) {
    const size_t from = head ? 0 : (cps.size() > kEnd ? cps.size() - kEnd : 0);
    const size_t to = head ? std::min(cps.size(), kEnd) : cps.size();
    for (size_t i = from; i < to; ++i) {
      gram.clear();
      for (size_t n = 1; n <= 3 && i + n <= to; ++n) {
        append_utf8(gram, cps[i + n - 1]);
        if (n == 1 && cps[i] == ' ') continue;
        add(hash_feature(static_cast<char>((head ? 'a' : 'A') + n), gram));
      }
    }
  }
  // Words: runs of letters, marks and digits.
  std::string word;
  const auto end_word = [&] {
    if (!word.empty()) add(hash_feature('w', word));
    word.clear();
  };
  for (const int32_t cp : cps) {
    const utf8proc_category_t cat = utf8proc_category(cp);
    const bool letter = (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_MC) ||
                        cat == UTF8PROC_CATEGORY_ND || cp == '0';
    if (letter)
      append_utf8(word, cp);
    else
      end_word();
  }
  end_word();
  // Shape.
  const auto shape = [&](const char* name, int value) {
    add(hash_feature('s', std::string(name) + std::to_string(value)));
  };
  const int length = static_cast<int>(cps.size());
  shape("len", log2_bucket(length));
  shape("digits", log2_bucket(digits));
  shape("ops", log2_bucket(operators));
  shape("questions", std::min(questions, 3));
  shape("lines", log2_bucket(lines));
  shape("quoted", log2_bucket(quoted));
  shape("bias", 0);

  const float value = out.empty() ? 0.0f : static_cast<float>(1.0 / std::sqrt(out.size()));
  for (AutoFeature& f : out) f.value = value;
  return out;
}

}  // namespace duet
