// Where one layer of a paged KV cache keeps its values, as the attention kernels read them.
//
// Position p of a sequence lives in block block_table[p / block_size], at offset
// o = p % block_size of that block. KV head h of that position starts at
//   base + block · block_stride + h · head_stride + o · pos_stride
// (base: the layer's K or V memory) and holds head_dim values of `dtype`: F32, F16, BF16,
// or Q8_0 — a head is whole blocks of its type (KvStorage::create checks head_dim), in
// either layout, so that every head can be decoded on its own.
//
// The cache stores its blocks head-major (head_major): one head's positions of a block are
// contiguous, so attention, which works one KV head at a time, streams them instead of
// picking a slice out of every row. A plain [positions × kv_width] array is the same thing
// with position-major strides and one block (position_major).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"

namespace duet {

struct PagedKvView {
  const uint8_t* k = nullptr;  // the layer's K blocks
  const uint8_t* v = nullptr;  // the layer's V blocks
  GgmlType dtype = GgmlType::F32;
  int64_t block_size = 16;
  const int32_t* block_table = nullptr;
  size_t block_stride = 0;  // bytes from one block to the next
  size_t head_stride = 0;   // bytes from one KV head to the next, same position
  size_t pos_stride = 0;    // bytes from one position to the next, same head and block

  // Byte offset of KV head `head` at sequence position `pos` (from k or v).
  size_t offset(int64_t head, int64_t pos) const {
    return static_cast<size_t>(block_table[pos / block_size]) * block_stride +
           static_cast<size_t>(head) * head_stride +
           static_cast<size_t>(pos % block_size) * pos_stride;
  }
  // Whether a head's positions inside a block follow each other without a gap (head-major).
  bool heads_contiguous(int64_t head_dim) const {
    return pos_stride == ggml_row_bytes(dtype, head_dim);
  }

  // Blocks of block_size positions, each [n_head_kv × block_size × head_dim].
  static PagedKvView head_major(const uint8_t* k, const uint8_t* v, GgmlType dtype,
                                int64_t block_size, int64_t n_head_kv, int64_t head_dim,
                                const int32_t* block_table) {
    const size_t head_bytes = ggml_row_bytes(dtype, head_dim);
    return {k,
            v,
            dtype,
            block_size,
            block_table,
            head_bytes * static_cast<size_t>(block_size * n_head_kv),
            head_bytes * static_cast<size_t>(block_size),
            head_bytes};
  }
  // Blocks of block_size rows of n_head_kv × head_dim values.
  static PagedKvView position_major(const uint8_t* k, const uint8_t* v, GgmlType dtype,
                                    int64_t block_size, int64_t n_head_kv, int64_t head_dim,
                                    const int32_t* block_table) {
    const size_t head_bytes = ggml_row_bytes(dtype, head_dim);
    const size_t row_bytes = head_bytes * static_cast<size_t>(n_head_kv);
    return {k,          v,           dtype,
            block_size, block_table, row_bytes * static_cast<size_t>(block_size),
            head_bytes, row_bytes};
  }
};

}  // namespace duet
