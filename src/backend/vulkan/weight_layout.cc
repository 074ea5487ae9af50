#include "backend/vulkan/weight_layout.h"

#include <cstring>

namespace duet::vk {
namespace {

// Where a block's quants move to: file block bytes, device block bytes, and the offset at which
// the rest of the block (after its 2-byte scale) lands. 0 for types whose blocks stay.
struct BlockMove {
  size_t file_bytes = 0, device_bytes = 0;
  size_t scale_bytes = 0;  // bytes copied first, in place
  size_t rest_at = 0;      // where the remaining file bytes go
};

BlockMove block_move(GgmlType type) {
  switch (type) {
    case GgmlType::Q8_0:
      return {34, 36, 2, 4};
    case GgmlType::Q4_0:
      return {18, 20, 2, 4};
    case GgmlType::Q5_0:
      return {22, 24, 2, 4};
    case GgmlType::IQ4_NL:
      return {18, 20, 2, 4};
    case GgmlType::Q6_K:
      return {210, 212, 210, 210};
    case GgmlType::Q3_K:
      return {110, 112, 110, 110};
    default:
      return {};
  }
}

size_t round_up4(size_t n) { return (n + 3) / 4 * 4; }

}  // namespace

size_t device_row_bytes(GgmlType type, int64_t cols) {
  const BlockMove m = block_move(type);
  if (m.file_bytes != 0) {
    const GgmlTypeTraits& t = ggml_traits(type);
    return static_cast<size_t>(cols / t.block_elems) * m.device_bytes;
  }
  return round_up4(ggml_row_bytes(type, cols));
}

bool device_layout_differs(GgmlType type, int64_t cols) {
  return device_row_bytes(type, cols) != ggml_row_bytes(type, cols);
}

void to_device_layout(GgmlType type, int64_t cols, const uint8_t* src, int64_t rows, uint8_t* dst) {
  const size_t file_row = ggml_row_bytes(type, cols);
  const size_t device_row = device_row_bytes(type, cols);
  const BlockMove m = block_move(type);
  std::memset(dst, 0, device_row * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* s = src + static_cast<size_t>(r) * file_row;
    uint8_t* d = dst + static_cast<size_t>(r) * device_row;
    if (m.file_bytes == 0) {
      std::memcpy(d, s, file_row);
      continue;
    }
    const size_t blocks = file_row / m.file_bytes;
    for (size_t b = 0; b < blocks; ++b) {
      const uint8_t* sb = s + b * m.file_bytes;
      uint8_t* db = d + b * m.device_bytes;
      std::memcpy(db, sb, m.scale_bytes);
      std::memcpy(db + m.rest_at, sb + m.scale_bytes, m.file_bytes - m.scale_bytes);
    }
  }
}

}  // namespace duet::vk
