#include "kv/kv_storage.h"

#include <sys/mman.h>

namespace duet {

Result<std::unique_ptr<KvStorage>> KvStorage::create(const KvShape& cfg, int64_t n_blocks,
                                                     int64_t block_size, GgmlType dtype) {
  if (dtype != GgmlType::F32 && dtype != GgmlType::F16 && dtype != GgmlType::BF16 &&
      dtype != GgmlType::Q8_0)
    return Status::error(std::string("KV cache type must be f32, f16, bf16 or q8_0, not ") +
                         ggml_type_name(dtype));
  if (cfg.head_dim % ggml_traits(dtype).block_elems != 0)
    return Status::error("a " + std::string(ggml_type_name(dtype)) +
                         " KV cache needs head_dim to be a multiple of " +
                         std::to_string(ggml_traits(dtype).block_elems) + "; this cache's is " +
                         std::to_string(cfg.head_dim));
  if (n_blocks < 1 || block_size < 1) return Status::error("KV cache needs at least one block");
  std::unique_ptr<KvStorage> s(new KvStorage());
  s->n_layer_ = cfg.n_layer;
  s->n_blocks_ = n_blocks;
  s->block_size_ = block_size;
  s->n_head_kv_ = cfg.n_head_kv;
  s->head_dim_ = cfg.head_dim;
  s->dtype_ = dtype;
  s->head_bytes_ = ggml_row_bytes(dtype, cfg.head_dim);
  s->block_bytes_ = s->head_bytes_ * static_cast<size_t>(block_size * cfg.n_head_kv);
  s->layer_bytes_ = s->block_bytes_ * static_cast<size_t>(n_blocks);
  s->bytes_ = s->layer_bytes_ * 2 * static_cast<size_t>(cfg.n_layer);
  void* p = mmap(nullptr, s->bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return Status::error("cannot reserve " + std::to_string(s->bytes_ >> 20) +
                         " MiB for the KV cache");
  s->base_ = static_cast<uint8_t*>(p);
  return s;
}

int64_t KvStorage::blocks_for_budget(const KvShape& cfg, size_t bytes, int64_t block_size,
                                     GgmlType dtype) {
  const size_t per_block = ggml_row_bytes(dtype, cfg.width()) * static_cast<size_t>(block_size) *
                           2 * static_cast<size_t>(cfg.n_layer);
  return static_cast<int64_t>(bytes / per_block);
}

KvStorage::~KvStorage() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

size_t KvStorage::bytes_per_block() const {
  return block_bytes_ * 2 * static_cast<size_t>(n_layer_);
}

uint8_t* KvStorage::layer_base(int64_t layer, int kv) const {
  return base_ + (static_cast<size_t>(layer) * 2 + static_cast<size_t>(kv)) * layer_bytes_;
}

uint8_t* KvStorage::head(int64_t layer, int kv, int64_t slot, int64_t head) const {
  const size_t block = static_cast<size_t>(slot / block_size_),
               offset = static_cast<size_t>(slot % block_size_);
  return layer_base(layer, kv) + block * block_bytes_ +
         (static_cast<size_t>(head) * static_cast<size_t>(block_size_) + offset) * head_bytes_;
}

PagedKvView KvStorage::view(int64_t layer, const int32_t* block_table) const {
  return PagedKvView::head_major(layer_base(layer, 0), layer_base(layer, 1), dtype_, block_size_,
                                 n_head_kv_, head_dim_, block_table);
}

}  // namespace duet
