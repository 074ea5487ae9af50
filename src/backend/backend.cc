#include "backend/backend.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/ref/ops.h"
#include "kernels/ref/quantize.h"

namespace duet {

std::optional<size_t> Backend::free_memory_bytes() const {
  // MemAvailable: free memory plus what the kernel can reclaim (page cache) without swapping.
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) << 10;
  return std::nullopt;
}

void Backend::matmul_same_input(std::span<const WeightMatrix* const> ws, ConstFloats x,
                                int64_t n_tokens, std::span<const Floats> ys) {
  for (size_t i = 0; i < ws.size(); ++i) matmul(*ws[i], x, n_tokens, ys[i]);
}

void Backend::feed_forward(const WeightMatrix& gate, const WeightMatrix& up,
                           const WeightMatrix& down, ConstFloats x, int64_t n_tokens, Floats out,
                           Floats gate_scratch, Floats up_scratch) {
  const WeightMatrix* ws[] = {&gate, &up};
  const Floats ys[] = {gate_scratch, up_scratch};
  matmul_same_input(ws, x, n_tokens, ys);
  swiglu(gate_scratch, up_scratch, n_tokens * gate.rows, gate_scratch);
  matmul(down, gate_scratch, n_tokens, out);
}

void Backend::gather_rows(ConstFloats src, std::span<const int64_t> rows, int64_t width,
                          Floats dst) {
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy_n(src.host() + rows[i] * width, width, dst.host() + static_cast<int64_t>(i) * width);
}

void Backend::qk_norm_rope(const QkNormRope& a) {
  rmsnorm(a.q, a.q_norm, a.n_tokens * a.n_head, a.head_dim, a.eps, a.q);
  rmsnorm(a.k, a.k_norm, a.n_tokens * a.n_head_kv, a.head_dim, a.eps, a.k);
  rope_neox(a.q, a.n_tokens, a.n_head, a.head_dim, a.rope);
  rope_neox(a.k, a.n_tokens, a.n_head_kv, a.head_dim, a.rope);
}

void Backend::store_kv(const KvLayer& kv, const StepLayout& step, ConstFloats k, ConstFloats v) {
  const int64_t width = kv.n_head_kv * kv.head_dim;
  // Row `slot` of head h is where a one-block table {slot's block} puts position slot % bs.
  kv_writes_.clear();
  for (size_t t = 0; t < step.slots.size(); ++t) {
    const int32_t slot = step.slots[t];
    const int32_t block = slot / static_cast<int32_t>(kv.block_size);
    const PagedKvView at = kv.view(&block);
    for (int64_t h = 0; h < kv.n_head_kv; ++h) {
      const size_t offset = at.offset(h, slot % kv.block_size);
      const int64_t row = static_cast<int64_t>(t) * width + h * kv.head_dim;
      kv_writes_.push_back({k.host() + row, kv.k->host() + offset});
      kv_writes_.push_back({v.host() + row, kv.v->host() + offset});
    }
  }
  encode_rows(kv.dtype, kv_writes_, kv.head_dim);
}

void Backend::attention(const KvLayer& kv, const StepLayout& step, ConstFloats q, Floats out,
                        const AttentionShape& shape) {
  const int64_t width = shape.n_head * shape.head_dim;
  attention_calls_.clear();
  for (const StepChunk& c : step.chunks)
    attention_calls_.push_back(
        {q.host() + c.first * width, kv.view(step.tables.data() + c.table_start),
         step.positions.data() + c.first, c.n_tokens, out.host() + c.first * width});
  attention_paged(attention_calls_, shape);
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
