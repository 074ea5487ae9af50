// The layout weights take on the device. A GGUF block is 34 bytes (Q8_0), 18 (Q4_0, IQ4_NL),
// 22 (Q5_0), 110 (Q3_K) or 210 (Q6_K), and an F16 or BF16 row of odd length is 2 bytes short of a
// word, so in the file's layout a block's quants start anywhere in a 32-bit word and every read
// stitches two words. On the device every block (and every row) starts on a 4-byte boundary and its
// quants on one too, so that the shaders (src/kernels/vulkan/weights.glsl, W_DEVICE_LAYOUT) read
// whole, aligned words:
//   Q8_0  36 bytes: d (f16), 2 bytes of padding, qs[32]
//   Q4_0, IQ4_NL  20 bytes: d (f16), 2 bytes of padding, qs[16]
//   Q5_0  24 bytes: d (f16), 2 bytes of padding, qh[4], qs[16]
//   Q3_K  112 bytes, Q6_K  212 bytes: the block as in the file, 2 bytes of padding
//   F16, BF16: rows padded to a multiple of 4 bytes
//   F32, Q4_1, Q5_1, Q2_K, Q4_K, Q5_K, IQ4_XS: as in the file (their blocks are whole
//   words already)
// The padding is zero. The values are the file's, bit for bit; only their places move.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"

namespace duet::vk {

// Bytes of one row of `cols` elements in the device layout (a multiple of 4).
size_t device_row_bytes(GgmlType type, int64_t cols);

// True when the device layout of `type` differs from the file's (the rows must be repacked).
bool device_layout_differs(GgmlType type, int64_t cols);

// `rows` rows of `cols` elements from the file's layout at `src` into the device layout at
// `dst` (rows * device_row_bytes bytes).
void to_device_layout(GgmlType type, int64_t cols, const uint8_t* src, int64_t rows, uint8_t* dst);

}  // namespace duet::vk
