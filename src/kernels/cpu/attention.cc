#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/ref/dequantize.h"

namespace duet::cpu {
namespace {

// Query rows (token × head of a KV group) per task: enough to amortize converting each
// chunk of keys and values (every task converts the chunks it reads), few enough that a
// prompt still makes many tasks.
constexpr int64_t kRowsPerTask = kAttnPrefillRows;

int64_t group_of(const PagedAttentionArgs& a) { return a.n_head / a.n_head_kv; }

int64_t tokens_per_task(const PagedAttentionArgs& a) {
  return std::max<int64_t>(1, kRowsPerTask / group_of(a));
}

// Decodes `n` values of the cache's type at src into float.
void decode(const CpuKernels& k, GgmlType dtype, const uint8_t* src, int64_t n, float* out) {
  switch (dtype) {
    case GgmlType::F32: {
      const float* f = reinterpret_cast<const float*>(src);
      std::copy(f, f + n, out);
      break;
    }
    case GgmlType::F16:
      k.f16_to_f32(reinterpret_cast<const uint16_t*>(src), n, out);
      break;
    case GgmlType::BF16:
      k.bf16_to_f32(reinterpret_cast<const uint16_t*>(src), n, out);
      break;
    default:  // Q8_0: a head is whole blocks (PagedKvView)
      ref::dequantize_row(dtype, src, out, n);
      break;
  }
}

// One KV head's keys or values at positions p0..p0+n−1 as float rows (n × head_dim). A
// head-major cache keeps a block's positions of one head together: one decode per block.
void load_heads(const CpuKernels& k, const PagedAttentionArgs& a, const uint8_t* base, int64_t head,
                int64_t p0, int64_t n, float* out) {
  const int64_t dim = a.head_dim;
  const PagedKvView& kv = a.kv;
  const bool runs = kv.heads_contiguous(dim);
  for (int64_t j = 0; j < n;) {
    const int64_t p = p0 + j;
    const int64_t run = runs ? std::min(n - j, kv.block_size - p % kv.block_size) : 1;
    decode(k, kv.dtype, base + kv.offset(head, p), run * dim, out + j * dim);
    j += run;
  }
}

// Asks for one KV head's keys and values at positions p0..p0+n−1 ahead of use. The blocks of
// a sequence lie wherever the block manager put them, so the hardware cannot guess the next
// one; asking while the current chunk is converted keeps two chunks' misses in flight.
void prefetch_heads(const PagedAttentionArgs& a, int64_t head, int64_t p0, int64_t n) {
  const PagedKvView& kv = a.kv;
  if (!kv.heads_contiguous(a.head_dim)) return;
  const size_t head_bytes = ggml_row_bytes(kv.dtype, a.head_dim);
  for (int64_t j = 0; j < n;) {
    const int64_t p = p0 + j, run = std::min(n - j, kv.block_size - p % kv.block_size);
    const size_t at = kv.offset(head, p), bytes = static_cast<size_t>(run) * head_bytes;
    for (size_t off = 0; off < bytes; off += 64) {
      __builtin_prefetch(kv.k + at + off, 0, 2);
      __builtin_prefetch(kv.v + at + off, 0, 2);
    }
    j += run;
  }
}

// The general task: chunks of keys and values decoded into float rows, then scores, the
// online softmax and the accumulation as separate pieces; leaves the normalized output rows
// in s.acc (rows × dim). Row r (query s.q) sees positions 0..s.last[r]; first_pos and
// last_pos are the least and greatest of those.
void chunked_attention(const CpuKernels& k, const PagedAttentionArgs& a, int64_t kv_head,
                       int64_t rows, int32_t first_pos, int32_t last_pos, AttentionScratch& s) {
  const int64_t dim = a.head_dim;
  s.acc.assign(static_cast<size_t>(rows * dim), 0.0f);
  s.s.resize(static_cast<size_t>(rows * kAttnKeys));
  s.m.assign(static_cast<size_t>(rows), -INFINITY);
  s.l.assign(static_cast<size_t>(rows), 0.0f);
  s.corr.resize(static_cast<size_t>(rows));
  s.k.resize(static_cast<size_t>(kAttnKeys * dim));
  s.v.resize(static_cast<size_t>(kAttnKeys * dim));
  const int64_t n_pos = last_pos + 1;
  for (int64_t p0 = 0; p0 < n_pos; p0 += kAttnKeys) {
    const int64_t n = std::min<int64_t>(kAttnKeys, n_pos - p0);
    // Keys and values (chunk × dim each), zero past the context (only the last, partial
    // chunk has such positions).
    if (n < kAttnKeys) {
      std::fill(s.k.begin() + n * dim, s.k.end(), 0.0f);
      std::fill(s.v.begin() + n * dim, s.v.end(), 0.0f);
    }
    if (p0 + kAttnKeys < n_pos)
      prefetch_heads(a, kv_head, p0 + kAttnKeys,
                     std::min<int64_t>(kAttnKeys, n_pos - p0 - kAttnKeys));
    load_heads(k, a, a.kv.k, kv_head, p0, n, s.k.data());
    load_heads(k, a, a.kv.v, kv_head, p0, n, s.v.data());
    k.attn_scores(s.q.data(), rows, s.k.data(), dim, s.s.data());

    const bool masking = p0 + kAttnKeys - 1 > first_pos;  // some row cannot see all of it
    for (int64_t r = 0; r < rows; ++r) {
      float* sr = s.s.data() + r * kAttnKeys;
      const int64_t visible = masking ? std::clamp<int64_t>(s.last[r] + 1 - p0, 0, n) : n;
      for (int64_t j = visible; j < kAttnKeys; ++j) sr[j] = -INFINITY;
      if (visible == 0) {  // nothing new for this row: leave its state as it is
        s.corr[r] = 1.0f;
        std::fill(sr, sr + kAttnKeys, 0.0f);
        continue;
      }
      float m = s.m[r];
      for (int64_t j = 0; j < visible; ++j) m = std::max(m, sr[j]);
      s.corr[r] = std::exp(s.m[r] - m);  // 0 on the first chunk (m was −∞)
      s.l[r] = s.l[r] * s.corr[r] + k.attn_exp_sum(sr, m);
      s.m[r] = m;
    }
    k.attn_accumulate(s.s.data(), rows, s.v.data(), dim, s.corr.data(), s.acc.data());
  }

  for (int64_t r = 0; r < rows; ++r) {
    const float inv = 1.0f / s.l[r];  // ≥ 1: the row's maximum contributes exp(0)
    for (int64_t d = 0; d < dim; ++d) s.acc[r * dim + d] *= inv;
  }
}

}  // namespace

bool paged_attention_supported(const PagedAttentionArgs& a) {
  if (a.n_head_kv <= 0 || a.n_head % a.n_head_kv != 0 || a.head_dim <= 0) return false;
  switch (a.kv.dtype) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:  // heads of whole blocks, as every PagedKvView has
      return true;
    default:
      return false;
  }
}

int64_t paged_attention_tasks(const PagedAttentionArgs& a) {
  const int64_t per = tokens_per_task(a);
  return a.n_head_kv * ((a.n_tokens + per - 1) / per);
}

AttnChunkRef paged_attention_first_chunk(const PagedAttentionArgs& a, int64_t task) {
  const PagedKvView& kv = a.kv;
  if ((kv.dtype != GgmlType::F16 && kv.dtype != GgmlType::BF16 && kv.dtype != GgmlType::Q8_0) ||
      !kv.heads_contiguous(a.head_dim) || kv.block_size % kAttnKeys != 0)
    return {};
  const size_t at = kv.offset(task % a.n_head_kv, 0);
  return {kv.k + at, kv.v + at};
}

void paged_attention_task(const CpuKernels& k, const PagedAttentionArgs& a, int64_t task,
                          AttentionScratch& s, const AttnChunkRef& next) {
  const int64_t G = group_of(a), dim = a.head_dim, per = tokens_per_task(a);
  const int64_t kv_head = task % a.n_head_kv;
  const int64_t t0 = (task / a.n_head_kv) * per, t1 = std::min(a.n_tokens, t0 + per);
  const int64_t rows = (t1 - t0) * G;  // row r: token t0 + r / G, head kv_head·G + r % G

  s.q.resize(static_cast<size_t>(rows * dim));
  s.acc.resize(static_cast<size_t>(rows * dim));

  // Queries scaled once, so scores need no multiply.
  int32_t first_pos = a.positions[t0], last_pos = a.positions[t0];
  s.last.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = t0 + r / G, h = kv_head * G + r % G;
    const float* src = a.q + (t * a.n_head + h) * dim;
    for (int64_t d = 0; d < dim; ++d) s.q[r * dim + d] = src[d] * a.scale;
    s.last[r] = a.positions[t];
    first_pos = std::min(first_pos, a.positions[t]);
    last_pos = std::max(last_pos, a.positions[t]);
  }

  // One fused pass where the path has it: a decoding sequence's few rows, or a prompt's.
  // The prompt kernel also takes the few rows the decode kernel declines (an F32 cache), so
  // that every task over such a cache is computed alike and a prompt gives the same bits
  // however it was cut into steps.
  const int n_rows = static_cast<int>(rows);
  bool fused =
      rows <= kAttnDecodeRows && k.attn_decode != nullptr &&
      k.attn_decode(s.q.data(), n_rows, a.kv, kv_head, dim, s.last.data(), next, s.acc.data());
  if (!fused && k.attn_prefill != nullptr)
    fused = k.attn_prefill(s.q.data(), n_rows, a.kv, kv_head, dim, s.last.data(), s.acc.data());
  if (!fused) chunked_attention(k, a, kv_head, rows, first_pos, last_pos, s);

  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = t0 + r / G, h = kv_head * G + r % G;
    std::copy_n(s.acc.data() + r * dim, dim, a.out + (t * a.n_head + h) * dim);
  }
}

}  // namespace duet::cpu
