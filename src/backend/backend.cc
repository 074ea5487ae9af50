#include "backend/backend.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/ops.h"
#include "kernels/ref/quantize.h"

namespace duet {

void Backend::attention_paged(const float* q, const PagedKvView& kv, const int32_t* positions,
                              int64_t n_tokens, const AttentionShape& s, float* out) {
  ref::attention_paged(q, kv.k, kv.v, kv.dtype, kv.block_size, kv.kv_width, kv.block_table,
                       positions, n_tokens, s.n_head, s.n_head_kv, s.head_dim, s.scale, out);
}

void Backend::encode_row(GgmlType dtype, const float* x, int64_t n, uint8_t* out) {
  thread_local std::vector<uint8_t> buf;
  buf.clear();
  // Every KV type has a quantizer (KvStorage::create checks the type), so this cannot fail.
  (void)ref::quantize_row(dtype, x, n, buf);
  std::copy(buf.begin(), buf.end(), out);
}

}  // namespace duet
