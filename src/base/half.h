// IEEE binary16 and bfloat16 conversions, exact in both directions where the
// value is representable (round-to-nearest-even when narrowing).
#pragma once

#include <cstdint>
#include <cstring>

namespace duet {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return bits_to_float(sign | 0x7F800000u | (mant << 13));  // inf / nan
  if (exp == 0) {
    if (mant == 0) return bits_to_float(sign);
    // Subnormal: value = mant * 2^-24.
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_fp16(float f) {
  uint32_t x = float_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7FFFFFFFu;
  if (x >= 0x7F800000u)
    return static_cast<uint16_t>(sign | 0x7C00u | (x > 0x7F800000u ? 0x200u : 0));
  if (x >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (x < 0x38800000u) {
    // Result is subnormal or zero: round mant * 2^-24 to the nearest integer.
    if (x < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = x >> 23;
    const uint32_t m = (x & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // value / 2^-24 = m * 2^(e - 126)
    uint32_t v = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1u))) v++;
    return static_cast<uint16_t>(sign | v);
  }
  uint32_t v = ((x >> 13) - (112u << 10));
  const uint32_t rem = x & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) v++;
  return static_cast<uint16_t>(sign | v);
}

inline float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t x = float_to_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace duet
