#include "backend/backend.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/ops.h"
#include "kernels/ref/quantize.h"

namespace duet {

void Backend::matmul_same_input(std::span<const WeightMatrix* const> ws, const float* x,
                                int64_t n_tokens, std::span<float* const> ys) {
  for (size_t i = 0; i < ws.size(); ++i) matmul(*ws[i], x, n_tokens, ys[i]);
}

void Backend::feed_forward(const WeightMatrix& gate, const WeightMatrix& up,
                           const WeightMatrix& down, const float* x, int64_t n_tokens, float* out,
                           float* gate_scratch, float* up_scratch) {
  const WeightMatrix* ws[] = {&gate, &up};
  float* const ys[] = {gate_scratch, up_scratch};
  matmul_same_input(ws, x, n_tokens, ys);
  swiglu(gate_scratch, up_scratch, n_tokens * gate.rows, gate_scratch);
  matmul(down, gate_scratch, n_tokens, out);
}

void Backend::qk_norm_rope(float* q, float* k, const float* q_norm, const float* k_norm,
                           int64_t n_tokens, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                           float eps, const int32_t* positions, const double* inv_freq,
                           double mscale) {
  rmsnorm(q, q_norm, n_tokens * n_head, head_dim, eps, q);
  rmsnorm(k, k_norm, n_tokens * n_head_kv, head_dim, eps, k);
  rope_neox(q, n_tokens, n_head, head_dim, positions, inv_freq, mscale);
  rope_neox(k, n_tokens, n_head_kv, head_dim, positions, inv_freq, mscale);
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
