#include "kv/kv_storage.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace duet {

Result<std::unique_ptr<KvStorage>> KvStorage::create(Backend& backend, const KvShape& cfg,
                                                     int64_t n_blocks, int64_t block_size,
                                                     GgmlType dtype) {
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
  if (n_blocks > max_blocks(backend, cfg, block_size, dtype))
    return Status::error(std::to_string(n_blocks) + " KV blocks exceed what " + backend.name() +
                         " holds in one buffer per layer: at most " +
                         std::to_string(max_blocks(backend, cfg, block_size, dtype)));
  std::unique_ptr<KvStorage> s(new KvStorage());
  s->backend_ = &backend;
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
  for (int64_t l = 0; l < cfg.n_layer; ++l)
    for (auto* side : {&s->k_, &s->v_}) {
      auto b = backend.allocate(s->layer_bytes_);
      if (!b)
        return Status::error("the KV cache (" + std::to_string(s->bytes_ >> 20) +
                             " MiB): " + b.message());
      side->push_back(std::move(b.value()));
    }
  return s;
}

int64_t KvStorage::max_blocks(const Backend& backend, const KvShape& cfg, int64_t block_size,
                              GgmlType dtype) {
  const size_t per_block = ggml_row_bytes(dtype, cfg.width()) * static_cast<size_t>(block_size);
  return static_cast<int64_t>(
      std::min<size_t>(backend.max_buffer_bytes() / per_block, size_t{INT32_MAX} / block_size));
}

size_t KvStorage::bytes_per_token(const KvShape& shape, GgmlType dtype) {
  return ggml_row_bytes(dtype, shape.width()) * 2 * static_cast<size_t>(shape.n_layer);
}

int64_t KvStorage::blocks_for_budget(const KvShape& cfg, size_t bytes, int64_t block_size,
                                     GgmlType dtype) {
  return static_cast<int64_t>(bytes /
                              (bytes_per_token(cfg, dtype) * static_cast<size_t>(block_size)));
}

size_t KvStorage::bytes_per_block() const {
  return block_bytes_ * 2 * static_cast<size_t>(n_layer_);
}

KvLayer KvStorage::layer(int64_t layer) const {
  return {k_[static_cast<size_t>(layer)].get(),
          v_[static_cast<size_t>(layer)].get(),
          dtype_,
          block_size_,
          n_head_kv_,
          head_dim_};
}

}  // namespace duet
