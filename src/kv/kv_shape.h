// What a KV cache holds per position: n_layer layers of K and V, each n_head_kv heads of
// head_dim values. Enough to size and address the cache without knowing the model.
#pragma once

#include <cstdint>

namespace duet {

struct KvShape {
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t width() const { return n_head_kv * head_dim; }  // values of K (or V) per layer
};

}  // namespace duet
