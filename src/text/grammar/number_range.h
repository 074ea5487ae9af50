// Decimal numbers between bounds, as GBNF expressions: what JSON Schema's minimum, maximum and
// exclusive bounds compile to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace duet::grammar {

// Magnitudes of bounds the grammars handle (integers beyond 2^53 lose precision in most JSON
// parsers anyway).
constexpr int64_t kMaxBoundMagnitude = 1'000'000'000'000'000;  // 10^15
// Digits a number may have before (and after) its point when nothing bounds it.
constexpr int kMaxNumberDigits = 16;

struct Bound {
  int64_t value = 0;
  bool exclusive = false;
};

// Integers in [lo, hi] (either may be absent), written without leading zeros or "-0". Empty
// when no integer is in range (the caller reports that the schema cannot be satisfied).
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

// Decimal numbers (an optional fraction, no exponent) between whole-number bounds.
std::string decimal_range_gbnf(std::optional<Bound> lo, std::optional<Bound> hi);

}  // namespace duet::grammar
