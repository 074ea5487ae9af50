// Reference quantizers (float -> stored format), used by `duet forge` to write weights.
// They follow the GGUF reference rounding so the files decode as other readers expect.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "gguf/ggml_type.h"

namespace duet::ref {

// Appends the encoding of n floats (n a multiple of the block size) to `out`.
// Fails for types that have no quantizer here.
Status quantize_row(GgmlType type, const float* x, int64_t n, std::vector<uint8_t>& out);

}  // namespace duet::ref
