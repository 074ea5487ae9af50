#include "text/grammar/number_range.h"

#include <algorithm>
#include <vector>

#include "text/grammar/gbnf.h"

namespace duet::grammar {

namespace {

std::string digit_literal(char d) { return std::string("\"") + d + "\""; }

int digits(uint64_t v) { return static_cast<int>(std::to_string(v).size()); }

uint64_t pow10(int n) {
  uint64_t v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Digit strings of equal length from lo to hi (lo <= hi), the classic split by leading digit.
std::string same_length(const std::string& lo, const std::string& hi) {
  const size_t n = lo.size();
  if (lo == hi) return "\"" + lo + "\"";
  if (n == 1) return std::string("[") + lo[0] + "-" + hi[0] + "]";
  if (lo[0] == hi[0]) return digit_literal(lo[0]) + " " + same_length(lo.substr(1), hi.substr(1));
  const bool lo_rest_zero = lo.find_first_not_of('0', 1) == std::string::npos;
  const bool hi_rest_nine = hi.find_first_not_of('9', 1) == std::string::npos;
  const std::string any_rest = "[0-9]{" + std::to_string(n - 1) + "}";
  std::vector<std::string> alts;
  if (!lo_rest_zero)
    alts.push_back(digit_literal(lo[0]) + " " + same_length(lo.substr(1), std::string(n - 1, '9')));
  const char mid_lo = lo_rest_zero ? lo[0] : static_cast<char>(lo[0] + 1);
  const char mid_hi = hi_rest_nine ? hi[0] : static_cast<char>(hi[0] - 1);
  if (mid_lo <= mid_hi) alts.push_back(std::string("[") + mid_lo + "-" + mid_hi + "] " + any_rest);
  if (!hi_rest_nine)
    alts.push_back(digit_literal(hi[0]) + " " + same_length(std::string(n - 1, '0'), hi.substr(1)));
  return gbnf_alternation(alts);
}

// Unsigned integers without leading zeros in [lo, hi]; no hi: up to kMaxNumberDigits digits.
std::string unsigned_range(uint64_t lo, std::optional<uint64_t> hi) {
  std::vector<std::string> alts;
  if (hi && lo > *hi) return "";
  if (lo == 0) {
    alts.push_back("\"0\"");
    if (hi && *hi == 0) return gbnf_alternation(alts);
    lo = 1;
  }
  const int d_lo = digits(lo);
  const int d_hi = hi ? digits(*hi) : std::max(kMaxNumberDigits, d_lo);
  for (int d = d_lo; d <= d_hi; ++d) {
    const uint64_t a = std::max(lo, pow10(d - 1));
    const uint64_t b = hi && digits(*hi) == d ? *hi : pow10(d) - 1;
    if (a <= b) alts.push_back(same_length(std::to_string(a), std::to_string(b)));
  }
  return gbnf_alternation(alts);
}

// Digit strings r after a decimal point, read as the fraction 0.r: `nonempty` is a GBNF
// expression for those of 1..len digits ("" when there are none), `empty_ok` says whether the
// absent fraction (0) is in range too.
struct FractionSet {
  std::string nonempty;
  bool empty_ok = false;
};

// Fractions with lo ≤ 0.r (lo < 0.r when lo_excl) and 0.r ≤ hi (<). lo and hi are digit
// strings without trailing zeros ("" is 0); nothing means unbounded on that side. Digit by
// digit: a first digit strictly inside (lo[0], hi[0]) frees the rest, one equal to a bound's
// digit keeps that bound on the rest, so the expression stays linear in len.
FractionSet fraction_range(std::optional<std::string> lo, bool lo_excl,
                           std::optional<std::string> hi, bool hi_excl, int len) {
  if (lo && lo->empty() && !lo_excl) lo.reset();  // 0.r ≥ 0 holds for every r
  FractionSet out;
  out.empty_ok = !lo && (!hi || !hi_excl || !hi->empty());
  if (len == 0) return out;
  if (!lo && !hi) {
    out.nonempty = "[0-9]{1," + std::to_string(len) + "}";
    return out;
  }
  auto head = [](const std::optional<std::string>& b) { return b->empty() ? '0' : (*b)[0]; };
  auto tail = [](const std::optional<std::string>& b) {
    return std::optional<std::string>(b->empty() ? std::string() : b->substr(1));
  };
  std::vector<std::string> alts;
  auto branch = [&](char digit, const FractionSet& rest) {
    std::string a = digit_literal(digit);
    if (!rest.nonempty.empty()) a += " (" + rest.nonempty + ")" + (rest.empty_ok ? "?" : "");
    if (!rest.nonempty.empty() || rest.empty_ok) alts.push_back(a);
  };
  const char lo0 = lo ? head(lo) : '0', hi0 = hi ? head(hi) : '9';
  if (lo0 > hi0) return out;
  if (lo && hi && lo0 == hi0) {
    branch(lo0, fraction_range(tail(lo), lo_excl, tail(hi), hi_excl, len - 1));
  } else {
    if (lo) branch(lo0, fraction_range(tail(lo), lo_excl, std::nullopt, false, len - 1));
    if (hi) branch(hi0, fraction_range(std::nullopt, false, tail(hi), hi_excl, len - 1));
    const char mid_lo = lo ? static_cast<char>(lo0 + 1) : '0';
    const char mid_hi = hi ? static_cast<char>(hi0 - 1) : '9';
    if (mid_lo <= mid_hi) {
      std::string a = std::string("[") + mid_lo + "-" + mid_hi + "]";
      if (len > 1) a += " [0-9]{0," + std::to_string(len - 1) + "}";
      alts.push_back(a);
    }
  }
  out.nonempty = gbnf_alternation(alts);
  return out;
}

// "." and the digits of a fraction set, optional when 0 is in it; nothing when the set is empty.
std::optional<std::string> fraction_gbnf(const FractionSet& f) {
  if (f.nonempty.empty()) return f.empty_ok ? std::optional<std::string>("") : std::nullopt;
  return "(\".\" " + f.nonempty + ")" + (f.empty_ok ? "?" : "");
}

// Magnitudes m (unsigned decimals) with a ≤ m (a < m when exclusive) and m ≤ b (<); the
// bounds' signs are not read.
std::string magnitude_range(const Bound& a, const std::optional<Bound>& b) {
  std::vector<std::string> alts;
  auto add = [&](uint64_t whole, const FractionSet& f) {
    if (auto frac = fraction_gbnf(f))
      alts.push_back("\"" + std::to_string(whole) + "\"" + (frac->empty() ? "" : " " + *frac));
  };
  constexpr int kLen = kMaxNumberDigits;
  if (b && b->whole < a.whole) return "";
  if (b && b->whole == a.whole) {
    add(a.whole, fraction_range(a.fraction, a.exclusive, b->fraction, b->exclusive, kLen));
    return gbnf_alternation(alts);
  }
  // Whole part a.whole: only its fractions above a's, unless every fraction is.
  uint64_t any_lo = a.whole;
  if (!a.fraction.empty() || a.exclusive) {
    add(a.whole, fraction_range(a.fraction, a.exclusive, std::nullopt, false, kLen));
    any_lo = a.whole + 1;
  }
  // Whole parts strictly between: any fraction.
  const std::optional<uint64_t> any_hi = b ? std::optional<uint64_t>(b->whole - 1) : std::nullopt;
  const std::string ints = unsigned_range(any_lo, any_hi);
  if (!ints.empty()) alts.push_back(ints + " (\".\" [0-9]{1," + std::to_string(kLen) + "})?");
  // Whole part b.whole: only its fractions below b's.
  if (b) add(b->whole, fraction_range(std::nullopt, false, b->fraction, b->exclusive, kLen));
  return gbnf_alternation(alts);
}

Bound magnitude_of(const Bound& b) {
  Bound m = b;
  m.negative = false;
  return m;
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alts;
  if (!hi || *hi >= 0) {
    const std::string pos =
        unsigned_range(static_cast<uint64_t>(lo ? std::max<int64_t>(*lo, 0) : 0),
                       hi ? std::optional<uint64_t>(static_cast<uint64_t>(*hi)) : std::nullopt);
    if (!pos.empty()) alts.push_back(pos);
  }
  if (!lo || *lo < 0) {
    const uint64_t m_lo =
        static_cast<uint64_t>(hi ? std::max<int64_t>(1, -std::min<int64_t>(*hi, -1)) : 1);
    const std::optional<uint64_t> m_hi =
        lo ? std::optional<uint64_t>(static_cast<uint64_t>(-*lo)) : std::nullopt;
    const std::string neg = unsigned_range(m_lo, m_hi);
    if (!neg.empty()) alts.push_back("\"-\" " + neg);
  }
  return gbnf_alternation(alts);
}

std::string decimal_range_gbnf(std::optional<Bound> lo, std::optional<Bound> hi) {
  auto negative = [](const std::optional<Bound>& b) { return b && b->negative && !b->is_zero(); };
  std::vector<std::string> alts;
  // x = +m, m ≥ 0; out of reach when hi < 0, or hi = 0 excluded.
  if (!negative(hi) && !(hi && hi->is_zero() && hi->exclusive)) {
    Bound a;  // 0, included
    if (lo && !negative(lo)) a = magnitude_of(*lo);
    std::optional<Bound> b;
    if (hi) b = magnitude_of(*hi);
    const std::string pos = magnitude_range(a, b);
    if (!pos.empty()) alts.push_back(pos);
  }
  // x = −m, m > 0: x ≤ hi means m ≥ −hi, x ≥ lo means m ≤ −lo.
  if (!lo || negative(lo)) {
    Bound a;
    a.exclusive = true;  // m > 0: no "-0"
    if (negative(hi)) a = magnitude_of(*hi);
    std::optional<Bound> b;
    if (lo) b = magnitude_of(*lo);
    const std::string neg = magnitude_range(a, b);
    if (!neg.empty()) alts.push_back("\"-\" " + neg);
  }
  return gbnf_alternation(alts);
}

std::optional<Bound> bound_from_decimal_text(std::string_view text, bool exclusive) {
  Bound b;
  b.exclusive = exclusive;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    b.negative = true;
    ++i;
  }
  std::string digits;  // every significant digit, the point at `point`
  long point = 0;
  bool seen_digit = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++point) {
    digits += text[i];
    seen_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      digits += text[i];
      seen_digit = true;
    }
  }
  if (!seen_digit) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool minus = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) minus = text[i++] == '-';
    long exp = 0;
    if (i >= text.size()) return std::nullopt;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
      exp = std::min(exp * 10 + (text[i] - '0'), 1000L);
    point += minus ? -exp : exp;
  }
  if (i != text.size()) return std::nullopt;
  // Move the point into range of the digits, padding with zeros.
  if (point < 0) {
    if (-point > kMaxBoundFractionDigits) return std::nullopt;
    digits.insert(0, static_cast<size_t>(-point), '0');
    point = 0;
  }
  if (point > static_cast<long>(digits.size())) {
    if (point > 32) return std::nullopt;
    digits.append(static_cast<size_t>(point) - digits.size(), '0');
  }
  std::string whole = digits.substr(0, static_cast<size_t>(point));
  b.fraction = digits.substr(static_cast<size_t>(point));
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  b.fraction.erase(b.fraction.find_last_not_of('0') + 1);
  if (whole.size() > 16 || b.fraction.size() > kMaxBoundFractionDigits) return std::nullopt;
  b.whole = whole.empty() ? 0 : std::stoull(whole);
  if (b.whole > static_cast<uint64_t>(kMaxBoundMagnitude)) return std::nullopt;
  return b;
}

}  // namespace duet::grammar
