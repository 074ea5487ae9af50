// The memory of the paged KV cache: for every layer, K and V blocks of block_size
// positions × kv_width values, stored as F32, F16, BF16 or Q8_0 (a quarter of F32's size,
// for long contexts). A block is head-major — n_head_kv runs of block_size × head_dim — so
// that attention, one KV head at a time, reads contiguous memory (kernels/paged_kv_view.h).
// Which block belongs to whom is the engine's business (kv/block_manager.h); this class
// only says where values are.
//
// Each layer's K and V are a buffer of the backend that computes with them: device memory
// on a GPU; on a CPU, memory reserved and faulted in on first write, so that resident
// memory follows the blocks actually used, not the budget.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/ggml_type.h"
#include "kernels/paged_kv_view.h"
#include "kv/kv_shape.h"

namespace duet {

// A KvStorage must not outlive the backend that allocated it.
class KvStorage {
 public:
  static Result<std::unique_ptr<KvStorage>> create(Backend& backend, const KvShape& shape,
                                                   int64_t n_blocks, int64_t block_size,
                                                   GgmlType dtype);
  // Bytes one cached token takes: K and V of every layer.
  static size_t bytes_per_token(const KvShape& shape, GgmlType dtype);
  // How many blocks of this shape fit in `bytes`.
  static int64_t blocks_for_budget(const KvShape& shape, size_t bytes, int64_t block_size,
                                   GgmlType dtype);
  // The most blocks `backend` can hold: each layer's K (and V) is one of its buffers.
  static int64_t max_blocks(const Backend& backend, const KvShape& shape, int64_t block_size,
                            GgmlType dtype);
  KvStorage(const KvStorage&) = delete;
  KvStorage& operator=(const KvStorage&) = delete;

  int64_t n_blocks() const { return n_blocks_; }
  int64_t block_size() const { return block_size_; }
  GgmlType dtype() const { return dtype_; }
  size_t bytes() const { return bytes_; }
  size_t bytes_per_block() const;

  // The backend whose buffers hold the cache: only its operations may read or write them.
  const Backend& backend() const { return *backend_; }
  // Layer `layer`, as the backend's store_kv and attention take it.
  KvLayer layer(int64_t layer) const;
  // Layer `layer` through `block_table`, where the cache is in host memory (a CPU backend's).
  PagedKvView view(int64_t layer, const int32_t* block_table) const {
    return this->layer(layer).view(block_table);
  }

 private:
  KvStorage() = default;

  int64_t n_layer_ = 0, n_blocks_ = 0, block_size_ = 0, n_head_kv_ = 0, head_dim_ = 0;
  GgmlType dtype_ = GgmlType::F16;
  size_t head_bytes_ = 0;   // one head of one position
  size_t block_bytes_ = 0;  // one block of one of K or V of one layer
  size_t layer_bytes_ = 0;  // one of K or V of one layer
  size_t bytes_ = 0;
  const Backend* backend_ = nullptr;
  std::vector<std::unique_ptr<BackendBuffer>> k_, v_;  // per layer
};

}  // namespace duet
