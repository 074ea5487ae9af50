// The seam between the model and the hardware. The Qwen3 forward pass is written once
// against this interface; a backend supplies the arithmetic. `ref` is the scalar oracle;
// the SIMD CPU backend and the Vulkan one implement the same calls and are tested against
// it. This header is the interface only: each backend's factory is in its own header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend_buffer.h"
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

// The rotation of a step's tokens: NEOX RoPE of token t at positions[t], with head_dim / 2
// frequencies inv_freq and cos/sin scaled by mscale (YaRN's attention factor; 1 without).
struct RopeAngles {
  const int32_t* positions = nullptr;
  const double* inv_freq = nullptr;
  double mscale = 1.0;
};

// Qwen3's query/key preparation of a step: each head's vector of q [n_tokens × n_head ×
// head_dim] and k [n_tokens × n_head_kv × head_dim] RMS-normed with q_norm / k_norm (over
// head_dim, eps), then rotated by `rope`, in place.
struct QkNormRope {
  Floats q, k;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  int64_t n_tokens = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  float eps = 1e-6f;
  RopeAngles rope;
};

// One layer of a paged KV cache, its K and V blocks in buffers of the backend that
// computes with it (kv/kv_storage.h allocates them and says how blocks are laid out:
// head-major, PagedKvView::head_major).
struct KvLayer {
  BackendBuffer* k = nullptr;
  BackendBuffer* v = nullptr;
  GgmlType dtype = GgmlType::F16;
  int64_t block_size = 16;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  // The layer through `block_table`, for host memory (k and v have host()).
  PagedKvView view(const int32_t* block_table) const {
    return PagedKvView::head_major(k->host(), v->host(), dtype, block_size, n_head_kv, head_dim,
                                   block_table);
  }
};

// One sequence's tokens in a step: tokens [first, first + n_tokens) of the batch, whose
// block table is tables[table_start, table_start + table_len) of the StepLayout.
struct StepChunk {
  int64_t first = 0;
  int64_t n_tokens = 0;
  int64_t table_start = 0;
  int64_t table_len = 0;
};

// Where a step's tokens sit, computed by the model once per step and handed to the
// operations that touch the KV cache.
struct StepLayout {
  std::span<const int32_t> positions;  // per token: its position in its sequence
  std::span<const int32_t> slots;      // per token: block * block_size + offset, its KV row
  std::span<const int32_t> tables;     // every chunk's block table, one after the other
  std::span<const StepChunk> chunks;
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
  // The largest buffer allocate() can give (a GPU binds at most so many bytes at once:
  // 128 MiB on lavapipe, a few GiB on desktop GPUs).
  virtual size_t max_buffer_bytes() const { return SIZE_MAX; }
  // Memory for a step's activations or a KV cache layer: host memory by default, device
  // memory on a GPU. Every Floats / ConstFloats an operation takes is either one of these
  // (whole) or host memory at a pointer.
  virtual Result<std::unique_ptr<BackendBuffer>> allocate(size_t bytes) {
    return allocate_host_buffer(bytes);
  }
  // Bytes allocate() can still give, for sizing the KV cache: the host's available memory
  // (/proc/meminfo MemAvailable) by default, the device's free memory on a GPU; nullopt when
  // unknown. `buffers_in_host_memory` says which of the two it is.
  virtual std::optional<size_t> free_memory_bytes() const;
  virtual bool buffers_in_host_memory() const { return true; }

  // Called once at load for each norm weight vector rmsnorm will be given (`w`, which stays
  // valid and unchanged): a device backend keeps a copy instead of uploading it per call.
  virtual void prepare_vector(std::span<const float> w) { (void)w; }

  // Ends a forward pass: everything asked so far has been computed when it returns (a
  // device backend that defers work runs it now). The model calls it once per pass, so a
  // pass that wants no logits (a prefill chunk) still takes its time inside the pass.
  virtual void finish() {}

  // y: [n_tokens × w.rows] = x: [n_tokens × w.cols] · wᵀ
  virtual void matmul(const WeightMatrix& w, ConstFloats x, int64_t n_tokens, Floats y) = 0;
  // ys[i] = x · ws[i]ᵀ for matrices that read the same input (Q, K and V; gate and up), as
  // separate matmul calls would give; a backend may convert x once and run them together.
  virtual void matmul_same_input(std::span<const WeightMatrix* const> ws, ConstFloats x,
                                 int64_t n_tokens, std::span<const Floats> ys);
  // The feed-forward's products: out = (silu(x · gateᵀ) ⊙ (x · upᵀ)) · downᵀ, [n_tokens ×
  // down.rows], for up shaped like gate and down.cols == gate.rows. out may be x but neither
  // scratch buffer. The default is matmul_same_input of gate and up into gate_scratch and
  // up_scratch (n_tokens × gate.rows floats each), swiglu, then matmul with down; a backend
  // may leave up_scratch untouched, and both hold nothing useful afterwards. One call so
  // that a backend may apply SwiGLU to each piece of the products where it computed them
  // and hand the result on in the same split.
  virtual void feed_forward(const WeightMatrix& gate, const WeightMatrix& up,
                            const WeightMatrix& down, ConstFloats x, int64_t n_tokens, Floats out,
                            Floats gate_scratch, Floats up_scratch);
  // out: [n × table.cols], row t = decoded table row ids[t] (ids checked by the caller)
  virtual void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, Floats out) = 0;
  // dst row i = src row rows[i], rows of `width` floats (the rows whose logits are wanted).
  virtual void gather_rows(ConstFloats src, std::span<const int64_t> rows, int64_t width,
                           Floats dst);
  // y = rmsnorm(x) * w over rows of `dim`; y may alias x. w is a model's norm weights, on
  // the host.
  virtual void rmsnorm(ConstFloats x, const float* w, int64_t rows, int64_t dim, float eps,
                       Floats y) = 0;
  // NEOX RoPE in place over [n_tokens × n_heads × head_dim]
  virtual void rope_neox(Floats x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                         const RopeAngles& rope) = 0;
  // The same values as rmsnorm, then rope_neox, on q and on k; one call so that a backend
  // may do it in one pass. That is the default.
  virtual void qk_norm_rope(const QkNormRope& a);
  // A step's keys and values (k, v: [n_tokens × n_head_kv × head_dim]) into layer `kv` of
  // the cache, token t at row step.slots[t]. The default encodes them on the host
  // (encode_rows); a device backend writes its own buffers.
  virtual void store_kv(const KvLayer& kv, const StepLayout& step, ConstFloats k, ConstFloats v);
  // Causal attention of a step's sequences over layer `kv` of the cache: chunk c's queries
  // (rows of q: [n_tokens × n_head × head_dim]) see its positions 0..positions[t] through
  // its block table; out has q's shape. The default runs attention_paged on the host.
  virtual void attention(const KvLayer& kv, const StepLayout& step, ConstFloats q, Floats out,
                         const AttentionShape& shape);

  // Causal attention of a step's sequences, each over its own paged KV cache in host
  // memory, in one call so that a backend spreads all of them over its threads at once.
  // The default is the reference kernel; backends override it with faster ones.
  virtual void attention_paged(std::span<const PagedAttentionCall> calls,
                               const AttentionShape& shape);
  // Stores each row's n floats as `dtype` (a KV cache type: F32, F16, BF16 or Q8_0) at its
  // out, the bytes ref::quantize_row gives: a step's KV cache writes, in one call so that a
  // backend may spread them over its threads. The default is that reference, row by row.
  virtual void encode_rows(GgmlType dtype, std::span<const KvRowWrite> rows, int64_t n);
  virtual void swiglu(ConstFloats gate, ConstFloats up, int64_t n, Floats out) = 0;
  virtual void add_inplace(Floats x, ConstFloats y, int64_t n) = 0;

 private:
  // The default store_kv's and attention's lists, kept between steps.
  std::vector<KvRowWrite> kv_writes_;
  std::vector<PagedAttentionCall> attention_calls_;
};

}  // namespace duet
