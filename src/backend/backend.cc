#include "backend/backend.h"

#include "kernels/ref/ops.h"

namespace duet {

void Backend::attention_paged(const float* q, const PagedKvView& kv, const int32_t* positions,
                              int64_t n_tokens, const AttentionShape& s, float* out) {
  ref::attention_paged(q, kv.k, kv.v, kv.dtype, kv.block_size, kv.kv_width, kv.block_table,
                       positions, n_tokens, s.n_head, s.n_head_kv, s.head_dim, s.scale, out);
}

}  // namespace duet
