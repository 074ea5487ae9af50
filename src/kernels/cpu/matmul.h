// The fast CPU matmul: y[T × rows] = x[T × cols] · Wᵀ for W stored as F32, F16, BF16, Q8_0,
// Q4_0, Q4_K, Q5_K or Q6_K.
//
// The activations are converted once per call into the format the weight type's kernel
// reads (8-bit blocks for quantized weights, bf16 for BF16 on AVX512_BF16, floats
// otherwise). The output is then cut into tasks of (rows × tokens) for the thread pool:
// whole row ranges when T is small (decode reads each weight once, so the split only has
// to balance memory traffic), row × token tiles when T is large (prefill: each weight
// block loaded into registers serves up to four tokens, and a task's weights stay in cache
// while it walks its tokens). Packed weights (packed_weights.h) are cut into tasks of
// whole 16-row groups, each tile taking up to eight tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "base/thread_pool.h"
#include "gguf/ggml_type.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/packed_weights.h"

namespace duet::cpu {

struct MatmulArgs {
  GgmlType type = GgmlType::F32;
  const uint8_t* w = nullptr;  // rows × cols in `type`, row r at w + r · row_bytes
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  const float* x = nullptr;  // n_tokens × cols
  int64_t n_tokens = 0;
  float* y = nullptr;  // n_tokens × rows
  // The same matrix packed for this path (pack_for_kernels), or nullptr: then the stored
  // rows are read directly.
  const PackedWeights* packed = nullptr;
  // x was written by a decode-sized job split by columns in per-thread ranges (the output
  // of matmul_swiglu): a call of 2..kPackedTileTokens tokens then converts x in 256-column
  // chunks, also in per-thread ranges, so that each thread mostly converts columns it wrote
  // and the others read converted rows (a quarter of the bytes for 8-bit codes) instead of
  // floats. The two splits meet where the thread count divides cols / 256 (two threads and
  // Qwen3's widths; measured only with two), apart from the groups that threads steal.
  // Same results either way; matmul_same_input and matmul_swiglu convert by tokens.
  bool x_in_column_ranges = false;
};

// Reusable 64-byte-aligned memory for the converted activations.
class MatmulScratch {
 public:
  uint8_t* get(size_t bytes);

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> buf_;
  size_t size_ = 0;
};

// Whether `type` has fast kernels (every type ggml_traits marks computable).
bool matmul_supports(GgmlType type);

// The matrix packed in the layout this path's kernel for `type` reads, or nullptr when the
// path has none (the matmul then reads the stored rows).
std::unique_ptr<PackedWeights> pack_for_kernels(const CpuKernels& k, GgmlType type,
                                                const uint8_t* w, int64_t rows, int64_t cols,
                                                size_t row_bytes, PackedArena* arena = nullptr,
                                                ThreadPool* pool = nullptr);

// Preconditions: matmul_supports(a.type); a.cols a multiple of the type's block size.
void matmul(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch, const MatmulArgs& a);

// Up to four matmuls of the same input (Q, K and V; gate and up): when all are packed and
// read the same activation format, the input is converted once (by tokens: their
// x_in_column_ranges is not read) and all their tasks run as one job; otherwise one matmul
// after another. Same results as separate matmul calls.
void matmul_same_input(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch,
                       std::span<const MatmulArgs> args);

// The feed-forward's gate and up projections with SwiGLU applied:
//   out[T × rows] = silu(x · gateᵀ) ⊙ (x · upᵀ),
// the values matmul_same_input then k.swiglu over the rows give (bit for bit where rows is a
// multiple of 8: the AVX2 SwiGLU rounds a shorter tail differently). It fuses only a step of
// few tokens (T ≤ kPackedTileTokens) whose two matrices are packed, of one shape, and read
// one activation format: then a task computes one 16-row group of each into a small buffer
// on its own stack and stores SwiGLU of the two, so the gate and up values never go through
// memory that the other threads read. x is converted by tokens (x_in_column_ranges is not
// read). Returns false, having done nothing, when it does not apply (the caller then runs
// the two steps). gate.y and up.y are not used.
bool matmul_swiglu(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch,
                   const MatmulArgs& gate, const MatmulArgs& up, float* out);

// The activation rows a matmul of this type reads (exposed for tests): converts
// n_tokens rows of x into `out` (n_tokens · act_row_bytes(format, cols) bytes).
ActFormat matmul_act_format(const CpuKernels& k, GgmlType type);
void convert_activations(const CpuKernels& k, ActFormat format, const float* x, int64_t n_tokens,
                         int64_t cols, uint8_t* out);
// convert_activations cut as an x_in_column_ranges call cuts it: each row in 256-column
// chunks, each chunk converted as a row of its own and its fields moved into place (exposed
// for tests: the bytes must be convert_activations').
void convert_activations_by_column_chunks(const CpuKernels& k, ActFormat format, const float* x,
                                          int64_t n_tokens, int64_t cols, uint8_t* out);

}  // namespace duet::cpu
