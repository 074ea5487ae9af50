// The seam between the model and the hardware. The Qwen3 forward pass is written once
// against this interface; a backend supplies the arithmetic. `ref` is the scalar oracle;
// the SIMD CPU backend and the Vulkan one implement the same calls and are tested against
// it. This header is the interface only: each backend's factory is in its own header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "gguf/ggml_type.h"
#include "kernels/paged_kv_view.h"

namespace duet {

// A weight matrix as stored in the model file: `rows` rows of `cols` elements each,
// row r at data + r * row_bytes. (GGUF's ne[0] = cols, ne[1] = rows.)
struct WeightMatrix {
  std::string name;
  GgmlType type = GgmlType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  const uint8_t* data = nullptr;
};

// Dimensions of one attention call.
struct AttentionShape {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;  // applied to q·k before the softmax
};

// One row of a step's KV cache writes: n floats at x, stored at out.
struct KvRowWrite {
  const float* x = nullptr;
  uint8_t* out = nullptr;
};

// One sequence's part of a step's attention: its queries [n_tokens × n_head × head_dim] at
// `positions` (query t sees cache positions 0..positions[t]), over its cache; `out` has the
// shape of q.
struct PagedAttentionCall {
  const float* q = nullptr;
  PagedKvView kv;
  const int32_t* positions = nullptr;
  int64_t n_tokens = 0;
  float* out = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Whether everything asked of the backend so far could be done: a device backend may be
  // unable to hold a matrix (prepare_weights, at load). Checked after the load.
  virtual Status status() const { return Status::ok(); }

  // Called once for each matrix the model will multiply with, at load, before any matmul
  // with it: a backend may keep its own copy in a faster layout (the CPU backend packs
  // rows for its kernels). Returns true when it did, so matmul no longer reads `w.data`
  // (which must still stay valid).
  virtual bool prepare_weights(const WeightMatrix& w) {
    (void)w;
    return false;
  }
  // Called once at load for the embedding table that get_rows reads: a device backend
  // copies it to the device; true when it did, so that the file's pages of it may go.
  virtual bool prepare_table(const WeightMatrix& table) {
    (void)table;
    return false;
  }
  // y: [n_tokens × w.rows] = x: [n_tokens × w.cols] · wᵀ
  virtual void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) = 0;
  // ys[i] = x · ws[i]ᵀ for matrices that read the same input (Q, K and V; gate and up), as
  // separate matmul calls would give; a backend may convert x once and run them together.
  virtual void matmul_same_input(std::span<const WeightMatrix* const> ws, const float* x,
                                 int64_t n_tokens, std::span<float* const> ys);
  // The feed-forward's products: out = (silu(x · gateᵀ) ⊙ (x · upᵀ)) · downᵀ, [n_tokens ×
  // down.rows], for up shaped like gate and down.cols == gate.rows. out may be x but neither
  // scratch buffer. The default is matmul_same_input of gate and up into gate_scratch and
  // up_scratch (n_tokens × gate.rows floats each), swiglu, then matmul with down; a backend
  // may leave up_scratch untouched, and both hold nothing useful afterwards. One call so
  // that a backend may apply SwiGLU to each piece of the products where it computed them
  // and hand the result on in the same split.
  virtual void feed_forward(const WeightMatrix& gate, const WeightMatrix& up,
                            const WeightMatrix& down, const float* x, int64_t n_tokens, float* out,
                            float* gate_scratch, float* up_scratch);
  // out: [n × table.cols], row t = decoded table row ids[t] (ids checked by the caller)
  virtual void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, float* out) = 0;
  // y = rmsnorm(x) * w over rows of `dim`; y may alias x
  virtual void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps,
                       float* y) = 0;
  // NEOX RoPE in place over [n_tokens × n_heads × head_dim]
  virtual void rope_neox(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                         const int32_t* positions, const double* inv_freq, double mscale) = 0;
  // Qwen3's query/key preparation: each head's vector of q [n_tokens × n_head × head_dim]
  // and k [n_tokens × n_head_kv × head_dim] RMS-normed (q_norm, k_norm over head_dim), then
  // NEOX-rotated at its token's position, in place. The same values as rmsnorm, then
  // rope_neox, on each; one call so that a backend may do it in one pass. That is the
  // default.
  virtual void qk_norm_rope(float* q, float* k, const float* q_norm, const float* k_norm,
                            int64_t n_tokens, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                            float eps, const int32_t* positions, const double* inv_freq,
                            double mscale);
  // Causal attention of a step's sequences, each over its own paged KV cache, in one call
  // so that a backend spreads all of them over its threads at once. The default is the
  // reference kernel; backends override it with faster ones.
  virtual void attention_paged(std::span<const PagedAttentionCall> calls,
                               const AttentionShape& shape);
  // Stores each row's n floats as `dtype` (a KV cache type: F32, F16, BF16 or Q8_0) at its
  // out, the bytes ref::quantize_row gives: a step's KV cache writes, in one call so that a
  // backend may spread them over its threads. The default is that reference, row by row.
  virtual void encode_rows(GgmlType dtype, std::span<const KvRowWrite> rows, int64_t n);
  virtual void swiglu(const float* gate, const float* up, int64_t n, float* out) = 0;
  virtual void add_inplace(float* x, const float* y, int64_t n) = 0;
};

}  // namespace duet
