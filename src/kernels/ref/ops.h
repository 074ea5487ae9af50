// Plain scalar versions of every operation in the Qwen3 forward pass. They are the
// oracle: simple enough to check by reading, and the baseline faster kernels must match.
// Shapes are given as [rows × cols], row-major, rows contiguous.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"
#include "kernels/paged_kv_view.h"

namespace duet::ref {

// y[t][r] = Σ_c W[r][c] · x[t][c]   W: [rows × cols] stored as `type`, row stride row_bytes
//                                   x: [n_tokens × cols], y: [n_tokens × rows]
void matmul(GgmlType type, const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes,
            const float* x, int64_t n_tokens, float* y);

// out[t] = decode(table row ids[t])   table: [n_rows × cols]
void get_rows(GgmlType type, const uint8_t* table, int64_t cols, size_t row_bytes,
              const int32_t* ids, int64_t n, float* out);

// y[r] = x[r] / sqrt(mean(x[r]²) + eps) * w   x, y: [rows × dim] (y may alias x), w: [dim]
void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps, float* y);

// NEOX rotary embedding in place: for each head, element i and i + head_dim/2 rotate by
// pos · inv_freq[i]; cos and sin are multiplied by `mscale` (YaRN's attention factor).
// x: [n_tokens × n_heads × head_dim], inv_freq: [head_dim / 2]
void rope_neox(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
               const int32_t* positions, const double* inv_freq, double mscale);

// Causal grouped-query attention for one sequence.
//   q: [n_tokens × n_head × head_dim]; token t sits at position positions[t] and sees
//   cache rows 0..positions[t].  k, v: [n_ctx × n_head_kv × head_dim] with row stride
//   kv_stride floats. out: [n_tokens × n_head × head_dim]. Query head h reads KV head
//   h / (n_head / n_head_kv).
void attention(const float* q, const float* k, const float* v, int64_t kv_stride,
               const int32_t* positions, int64_t n_tokens, int64_t n_head, int64_t n_head_kv,
               int64_t head_dim, float scale, float* out);

// The same attention over a paged cache (kernels/paged_kv_view.h): query head h reads KV
// head h / (n_head / n_head_kv), head_dim values of kv.dtype at kv.offset(head, position).
void attention_paged(const float* q, const PagedKvView& kv, const int32_t* positions,
                     int64_t n_tokens, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                     float scale, float* out);

// out[i] = silu(gate[i]) · up[i]
void swiglu(const float* gate, const float* up, int64_t n, float* out);

// x[i] += y[i]
void add_inplace(float* x, const float* y, int64_t n);

}  // namespace duet::ref
