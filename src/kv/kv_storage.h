// The memory of the paged KV cache: for every layer, K and V blocks of block_size
// positions × kv_width values, stored as F32, F16, BF16 or Q8_0 (a quarter of F32's size,
// for long contexts). A block is head-major — n_head_kv runs of block_size × head_dim — so
// that attention, one KV head at a time, reads contiguous memory (kernels/paged_kv_view.h).
// Which block belongs to whom is the engine's business (kv/block_manager.h); this class
// only says where values are.
//
// The buffer is reserved with mmap and faulted in on first write, so resident memory
// follows the blocks actually used, not the budget.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "gguf/ggml_type.h"
#include "kernels/paged_kv_view.h"
#include "kv/kv_shape.h"

namespace duet {

class KvStorage {
 public:
  static Result<std::unique_ptr<KvStorage>> create(const KvShape& shape, int64_t n_blocks,
                                                   int64_t block_size, GgmlType dtype);
  // How many blocks of this shape fit in `bytes`.
  static int64_t blocks_for_budget(const KvShape& shape, size_t bytes, int64_t block_size,
                                   GgmlType dtype);
  ~KvStorage();
  KvStorage(const KvStorage&) = delete;
  KvStorage& operator=(const KvStorage&) = delete;

  int64_t n_blocks() const { return n_blocks_; }
  int64_t block_size() const { return block_size_; }
  GgmlType dtype() const { return dtype_; }
  size_t bytes() const { return bytes_; }
  size_t bytes_per_block() const;

  // Where KV head `head` of the K (kv = 0) or V (kv = 1) row of layer `layer` at `slot`
  // (= block * block_size + offset) is stored: head_dim values of dtype(). The model writes
  // them through Backend::encode_rows.
  uint8_t* head(int64_t layer, int kv, int64_t slot, int64_t head) const;
  PagedKvView view(int64_t layer, const int32_t* block_table) const;

 private:
  KvStorage() = default;
  uint8_t* layer_base(int64_t layer, int kv) const;  // kv: 0 = K, 1 = V

  int64_t n_layer_ = 0, n_blocks_ = 0, block_size_ = 0, n_head_kv_ = 0, head_dim_ = 0;
  GgmlType dtype_ = GgmlType::F16;
  size_t head_bytes_ = 0;   // one head of one position
  size_t block_bytes_ = 0;  // one block of one of K or V of one layer
  size_t layer_bytes_ = 0;  // one of K or V of one layer
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace duet
