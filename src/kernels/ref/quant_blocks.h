// Block layouts of the quantized GGUF formats, byte for byte as they sit in a file.
#pragma once

#include <cstdint>
#include <cstring>

namespace duet {

constexpr int kQK = 32;     // elements per Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 / IQ4_NL block
constexpr int kQK_K = 256;  // elements per K-quant super-block

#pragma pack(push, 1)
struct BlockQ4_0 {
  uint16_t d;           // fp16 scale
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high nibble
};
struct BlockQ4_1 {
  uint16_t d;           // fp16 scale
  uint16_t m;           // fp16 offset: value = d * q + m
  uint8_t qs[kQK / 2];  // as Q4_0
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];        // bit j of this little-endian word: the fifth bit of element j
  uint8_t qs[kQK / 2];  // low 4 bits, as Q4_0; value = d * (q - 16)
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;  // value = d * q + m
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
  uint16_t d;      // fp16 scale
  int8_t qs[kQK];  // value = d * qs
};
// IQ4_NL and IQ4_XS store 4-bit indices into kIq4nlValues (a non-uniform grid).
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high one
};
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // per 16 elements: 4-bit scale (low nibble), 4-bit min (high)
  uint8_t qs[kQK_K / 4];       // 2-bit quants: element 128h + 32j + l from bits 2j of qs[32h + l]
  uint16_t d;                  // fp16 super-scale of the scales
  uint16_t dmin;               // fp16 super-scale of the mins
};
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];  // third bit: element 128h + 32j + l in bit 4h + j of hmask[l]
  uint8_t qs[kQK_K / 4];     // low 2 bits, laid out as Q2_K's
  uint8_t scales[12];        // sixteen 6-bit scales (biased by 32), packed
  uint16_t d;                // fp16 super-scale
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
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;             // bits 2k..2k+1: the top two bits of sub-block k's scale
  uint8_t scales_l[kQK_K / 64];  // the low four bits, two sub-blocks per byte
  uint8_t qs[kQK_K / 2];         // per 32-element sub-block: 16 bytes laid out as IQ4_NL's
};
#pragma pack(pop)

// The values an IQ4_NL / IQ4_XS index stands for (before the scale).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockIQ4_XS) == 136);

// The sixteen 6-bit scales of a Q3_K super-block (one per 16 elements), unbiased to −32..31.
// Scale k keeps its low four bits in byte k % 8 (low nibble for k < 8, high for k ≥ 8) and
// its top two bits in bits 2·(k / 4) of byte 8 + k % 4. `static`: see kernels/cpu/act_format.h.
static inline void unpack_q3_k_scales(const uint8_t packed[12], int8_t out[16]) {
  for (int k = 0; k < 16; ++k) {
    const int low = (packed[k % 8] >> (4 * (k / 8))) & 0x0F;
    const int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
    out[k] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// The 4-bit code of element j (0..31) of a 32-element block: the low nibble of qs[j] for
// j < 16, the high nibble of qs[j − 16] after. `static`: see kernels/cpu/act_format.h.
static inline int block32_nibble(const uint8_t* qs, int j) {
  return j < kQK / 2 ? (qs[j] & 0x0F) : (qs[j - kQK / 2] >> 4);
}

// The 5-bit code of element j of a Q5_0 / Q5_1 block: its nibble, plus 16 when bit j of
// the block's qh word is set.
template <typename Block>
static inline int q5_code(const Block& b, int j) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  return block32_nibble(b.qs, j) | static_cast<int>(((qh >> j) & 1u) << 4);
}

// The eight 6-bit scales of an IQ4_XS super-block (one per 32 elements), unbiased to −32..31.
static inline void unpack_iq4_xs_scales(const BlockIQ4_XS& b, int8_t out[8]) {
  for (int k = 0; k < 8; ++k) {
    const int low = (b.scales_l[k / 2] >> (4 * (k % 2))) & 0x0F;
    const int high = (b.scales_h >> (2 * k)) & 3;
    out[k] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

}  // namespace duet
