// Decoding helpers for K-quant super-blocks shared by every ISA's kernels. `static` so each
// translation unit keeps its own copy compiled with its own flags (see act_format.h).
#pragma once

#include <cstdint>
#include <cstring>

namespace duet::cpu {

// The 12 packed bytes of a Q4_K / Q5_K super-block hold eight 6-bit scales and eight 6-bit
// mins. Pairs 0..3 sit in the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); pairs
// 4..7 take their low 4 bits from the nibbles of bytes 8..11 and their top 2 bits from the
// spare top bits of bytes 0..7. Working on 32-bit words unpacks four at a time.
static inline void unpack_k4_scales(const uint8_t* packed, uint8_t sc[8], uint8_t mn[8]) {
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  const uint32_t low6 = 0x3f3f3f3fu, low4 = 0x0f0f0f0fu, low2 = 0x03030303u;
  const uint32_t out[4] = {
      w[0] & low6,                                         // scales 0..3
      (w[2] & low4) | (((w[0] >> 6) & low2) << 4),         // scales 4..7
      w[1] & low6,                                         // mins 0..3
      ((w[2] >> 4) & low4) | (((w[1] >> 6) & low2) << 4),  // mins 4..7
  };
  std::memcpy(sc, out, 8);
  std::memcpy(mn, out + 2, 8);
}

}  // namespace duet::cpu
