#include "text/grammar/number_range.h"

#include <algorithm>
#include <vector>

namespace duet::grammar {

namespace {

std::string join_alts(const std::vector<std::string>& alts) {
  if (alts.empty()) return "";
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

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
  return join_alts(alts);
}

// Unsigned integers without leading zeros in [lo, hi]; no hi: up to kMaxNumberDigits digits.
std::string unsigned_range(uint64_t lo, std::optional<uint64_t> hi) {
  std::vector<std::string> alts;
  if (hi && lo > *hi) return "";
  if (lo == 0) {
    alts.push_back("\"0\"");
    if (hi && *hi == 0) return join_alts(alts);
    lo = 1;
  }
  const int d_lo = digits(lo);
  const int d_hi = hi ? digits(*hi) : std::max(kMaxNumberDigits, d_lo);
  for (int d = d_lo; d <= d_hi; ++d) {
    const uint64_t a = std::max(lo, pow10(d - 1));
    const uint64_t b = hi && digits(*hi) == d ? *hi : pow10(d) - 1;
    if (a <= b) alts.push_back(same_length(std::to_string(a), std::to_string(b)));
  }
  return join_alts(alts);
}

const char* kAnyFraction = "(\".\" [0-9]{1,16})?";
const char* kZeroFraction = "(\".\" \"0\"{1,16})?";
const char* kNonzeroFraction = "\".\" \"0\"{0,15} [1-9] [0-9]{0,15}";

// Magnitudes m (unsigned decimals) with a ≤ m (or a < m) and m ≤ b (or m < b).
std::string magnitude_range(Bound a, std::optional<Bound> b) {
  std::vector<std::string> alts;
  const uint64_t any_lo = static_cast<uint64_t>(a.exclusive ? a.value + 1 : a.value);
  // Integer part p with any fraction: p.f < p + 1 ≤ b.
  std::optional<uint64_t> any_hi;
  bool any_ok = true;
  if (b) {
    if (b->value < 1)
      any_ok = false;
    else
      any_hi = static_cast<uint64_t>(b->value - 1);
  }
  if (any_ok) {
    const std::string ints = unsigned_range(any_lo, any_hi);
    if (!ints.empty()) alts.push_back(ints + " " + kAnyFraction);
  }
  // p = b exactly, when b itself is allowed.
  if (b && !b->exclusive && (a.exclusive ? b->value > a.value : b->value >= a.value))
    alts.push_back("\"" + std::to_string(b->value) + "\" " + kZeroFraction);
  // p = a with a nonzero fraction, when a itself is excluded.
  if (a.exclusive && (!b || b->value >= a.value + 1))
    alts.push_back("\"" + std::to_string(a.value) + "\" " + kNonzeroFraction);
  return join_alts(alts);
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
  return join_alts(alts);
}

std::string decimal_range_gbnf(std::optional<Bound> lo, std::optional<Bound> hi) {
  std::vector<std::string> alts;
  // x = +m, m ≥ 0.
  if (!hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive)) {
    Bound a{0, false};
    if (lo && (lo->value > 0 || (lo->value == 0 && lo->exclusive))) a = *lo;
    const std::string pos = magnitude_range(a, hi);
    if (!pos.empty()) alts.push_back(pos);
  }
  // x = -m, m > 0: x ≤ hi means m ≥ -hi, x ≥ lo means m ≤ -lo.
  if (!lo || lo->value < 0) {
    Bound a{0, true};
    if (hi && hi->value < 0) a = {-hi->value, hi->exclusive};
    std::optional<Bound> b;
    if (lo) b = Bound{-lo->value, lo->exclusive};
    const std::string neg = magnitude_range(a, b);
    if (!neg.empty()) alts.push_back("\"-\" " + neg);
  }
  return join_alts(alts);
}

}  // namespace duet::grammar
