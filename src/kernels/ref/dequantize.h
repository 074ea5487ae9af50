// Plain scalar decoders for every weight format duet computes with: the oracle that
// faster kernels are tested against.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"

namespace duet::ref {

// Decodes n elements (a whole number of blocks) starting at `src`.
// Precondition: ggml_traits(type).can_compute and n % block_elems == 0.
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

// Dot product of one stored row (n elements) with float x, accumulated in double.
float dot_row(GgmlType type, const void* row, const float* x, int64_t n);

}  // namespace duet::ref
