// Block layouts of the quantized GGUF formats, byte for byte as they sit in a file.
#pragma once

#include <cstdint>

namespace duet {

constexpr int kQK = 32;     // elements per Q4_0 / Q8_0 block
constexpr int kQK_K = 256;  // elements per K-quant super-block

#pragma pack(push, 1)
struct BlockQ4_0 {
  uint16_t d;           // fp16 scale
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high nibble
};
struct BlockQ8_0 {
  uint16_t d;      // fp16 scale
  int8_t qs[kQK];  // value = d * qs
};
struct BlockQ4_K {
  uint16_t d;             // fp16 super-scale for the 6-bit sub-block scales
  uint16_t dmin;          // fp16 super-scale for the 6-bit sub-block mins
  uint8_t scales[12];     // 8 (scale, min) pairs of 6 bits, packed
  uint8_t qs[kQK_K / 2];  // 4-bit quants, 64 elements per 32 bytes (low nibbles, then high)
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];  // fifth bit of each quant
  uint8_t qs[kQK_K / 2];  // low 4 bits
};
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // 8-bit sub-block scales
  uint16_t d;                 // fp16 super-scale
};
#pragma pack(pop)

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

}  // namespace duet
