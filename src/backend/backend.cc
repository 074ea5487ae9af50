#include "backend/backend.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/ops.h"
#include "kernels/ref/quantize.h"

namespace duet {

void Backend::matmul_same_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n_tokens,
                                std::span<float* const> ys) {
  for (size_t i = 0; i < ws.size(); ++i) matmul(*ws[i], x, n_tokens, ys[i]);
}

void Backend::attention_paged(std::span<const PagedAttentionCall> calls, const AttentionShape& s) {
  for (const PagedAttentionCall& c : calls)
    ref::attention_paged(c.q, c.kv, c.positions, c.n_tokens, s.n_head, s.n_head_kv, s.head_dim,
                         s.scale, c.out);
}

void Backend::encode_rows(GgmlType dtype, std::span<const KvRowWrite> rows, int64_t n) {
  thread_local std::vector<uint8_t> buf;
  for (const KvRowWrite& r : rows) {
    buf.clear();
    // Every KV type has a quantizer (KvStorage::create checks the type), so this cannot fail.
    (void)ref::quantize_row(dtype, r.x, n, buf);
    std::copy(buf.begin(), buf.end(), r.out);
  }
}

}  // namespace duet
