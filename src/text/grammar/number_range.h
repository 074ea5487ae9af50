// Decimal numbers between bounds, as GBNF expressions: what JSON Schema's minimum, maximum and
// exclusive bounds compile to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet::grammar {

// Magnitudes of bounds the grammars handle (integers beyond 2^53 lose precision in most JSON
// parsers anyway).
constexpr int64_t kMaxBoundMagnitude = 1'000'000'000'000'000;  // 10^15
// Digits a number may have before (and after) its point when nothing bounds it.
constexpr int kMaxNumberDigits = 16;

// A bound of a decimal range, exact as written in the schema: sign, whole part and the digits
// after the point (no trailing zeros), so that 0.1 means one tenth and not the nearest double.
struct Bound {
  bool negative = false;
  uint64_t whole = 0;
  std::string fraction;
  bool exclusive = false;

  bool is_zero() const { return whole == 0 && fraction.empty(); }
};

// Digits after the point a bound may have.
constexpr int kMaxBoundFractionDigits = 32;

// A bound read from a JSON number's text ("-12.5", "1e-05", "3E2"). Nothing when the text is
// not a number, its magnitude is above kMaxBoundMagnitude, or it has more than
// kMaxBoundFractionDigits digits after the point.
std::optional<Bound> bound_from_decimal_text(std::string_view text, bool exclusive);

// Integers in [lo, hi] (either may be absent), written without leading zeros or "-0". Empty
// when no integer is in range (the caller reports that the schema cannot be satisfied).
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

// Decimal numbers (an optional fraction of up to kMaxNumberDigits digits, no exponent, no
// "-0") between the bounds. Empty when none is in range.
std::string decimal_range_gbnf(std::optional<Bound> lo, std::optional<Bound> hi);

}  // namespace duet::grammar
