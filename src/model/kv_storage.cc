#include "model/kv_storage.h"

#include <sys/mman.h>



namespace duet {

Result<std::unique_ptr<KvStorage>> KvStorage::create(const Qwen3Config& cfg, int64_t n_blocks,
                                                     int64_t block_size, GgmlType dtype) {
  if (dtype != GgmlType::F32 && dtype != GgmlType::F16 && dtype != GgmlType::BF16 &&
      dtype != GgmlType::Q8_0)
    return Status::error(std::string("KV cache type must be f32, f16, bf16 or q8_0, not ") +
                         ggml_type_name(dtype));
  if (cfg.kv_width() % ggml_traits(dtype).block_elems != 0)
    return Status::error("KV rows of this model do not divide into q8_0 blocks");
  if (n_blocks < 1 || block_size < 1) return Status::error("KV cache needs at least one block");
  std::unique_ptr<KvStorage> s(new KvStorage());
  s->n_layer_ = cfg.n_layer;
  s->n_blocks_ = n_blocks;
  s->block_size_ = block_size;
  s->kv_width_ = cfg.kv_width();
  s->dtype_ = dtype;
  s->row_bytes_ = ggml_row_bytes(dtype, s->kv_width_);
  s->layer_bytes_ = s->row_bytes_ * static_cast<size_t>(block_size * n_blocks);
  s->bytes_ = s->layer_bytes_ * 2 * static_cast<size_t>(cfg.n_layer);
  void* p = mmap(nullptr, s->bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return Status::error("cannot reserve " + std::to_string(s->bytes_ >> 20) + " MiB for the KV cache");
  s->base_ = static_cast<uint8_t*>(p);
  return s;
}

int64_t KvStorage::blocks_for_budget(const Qwen3Config& cfg, size_t bytes, int64_t block_size,
                                     GgmlType dtype) {
  const size_t per_block = ggml_row_bytes(dtype, cfg.kv_width()) * static_cast<size_t>(block_size) * 2 *
                           static_cast<size_t>(cfg.n_layer);
  return static_cast<int64_t>(bytes / per_block);
}

KvStorage::~KvStorage() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

size_t KvStorage::bytes_per_block() const {
  return row_bytes_ * static_cast<size_t>(block_size_) * 2 * static_cast<size_t>(n_layer_);
}

uint8_t* KvStorage::layer_base(int64_t layer, int kv) const {
  return base_ + (static_cast<size_t>(layer) * 2 + static_cast<size_t>(kv)) * layer_bytes_;
}

uint8_t* KvStorage::row(int64_t layer, int kv, int64_t slot) const {
  return layer_base(layer, kv) + static_cast<size_t>(slot) * row_bytes_;
}

PagedKvView KvStorage::view(int64_t layer, const int32_t* block_table) const {
  PagedKvView v;
  v.k = layer_base(layer, 0);
  v.v = layer_base(layer, 1);
  v.dtype = dtype_;
  v.block_size = block_size_;
  v.kv_width = kv_width_;
  v.block_table = block_table;
  return v;
}

}  // namespace duet
