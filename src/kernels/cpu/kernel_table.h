// The fast CPU kernels of one ISA path, as a table of function pointers chosen once.
// Each *_avx2.cc / *_avx512.cc (x86-64) or *_neon*.cc (AArch64) file fills its part of a
// table; nothing in them runs unless cpu_isa_supported() said yes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"
#include "kernels/cpu/act_format.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/packed_weights.h"
#include "kernels/paged_kv_view.h"

namespace duet::cpu {

// A register-blocked matmul tile: for r < nr, t < nt (both 1..kTileMax; nt up to
// kTileMaxSingleRow when nr is 1)
//   y[t·ldy + r] = Σ_c W[r][c] · X[t][c]
// W row r at w + r·w_stride (the stored weight format), X row t at x + t·x_stride (the
// activation format of the weight type). Each output's arithmetic is the same whatever
// nr and nt are, so results do not depend on how a matmul was tiled.
constexpr int kTileMax = 4;
constexpr int kTileMaxSingleRow = 8;
// Key positions per attention chunk (see CpuKernels::attn_scores).
constexpr int kAttnKeys = 16;
// Query rows up to which an attention task may go through CpuKernels::attn_decode.
constexpr int kAttnDecodeRows = 8;
// Query rows of a prompt's attention task (attention.cc), all of which
// CpuKernels::attn_prefill takes at once.
constexpr int kAttnPrefillRows = 64;

// Where one chunk of kAttnKeys positions of one KV head starts, in an F16, BF16 or Q8_0
// head-major cache: kAttnKeys rows of keys at k and of values at v. Null: no chunk.
struct AttnChunkRef {
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
};
using MatmulTileFn = void (*)(const uint8_t* w, size_t w_stride, int nr, const uint8_t* x,
                              size_t x_stride, int nt, int64_t cols, float* y, int64_t ldy);

// Converts one row of cols floats into an activation format (see act_format.h).
using ConvertRowFn = void (*)(const float* x, int64_t cols, uint8_t* out);

// A tile over one packed group (packed_weights.h): for r < nrows (≤ kPackRows), t < nt
// (1..kPackedTileTokens)
//   y[t·ldy + r] = Σ_c W[16g + r][c] · X[t][c]
// Every output lane's arithmetic is the same whatever nt is.
constexpr int kPackedTileTokens = 8;
using PackedTileFn = void (*)(const uint8_t* group, int64_t cols, int nrows, const uint8_t* x,
                              size_t x_stride, int nt, float* y, int64_t ldy);

struct WeightKernels {
  ActFormat act = ActFormat::kF32;
  MatmulTileFn tile = nullptr;
  // Where this path has a kernel for packed weights: the layout it reads (the activations
  // are still in `act`).
  PackedLayout packed = PackedLayout::kNone;
  PackedTileFn packed_tile = nullptr;
};

struct CpuKernels {
  CpuIsa isa = CpuIsa::kScalar;
  WeightKernels f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k;
  // Formats with a scalar and an AVX2 tile (which the AVX-512 paths use too) so far.
  WeightKernels q4_1, q5_0, q5_1, iq4_nl, q2_k, q3_k, iq4_xs;
  ConvertRowFn to_q8x32 = nullptr, to_q8x256 = nullptr, to_bf16 = nullptr;

  // Element-wise ops, same contracts as the ref:: versions in kernels/ref/ops.h.
  void (*rmsnorm)(const float* x, const float* w, int64_t rows, int64_t dim, float eps,
                  float* y) = nullptr;
  void (*swiglu)(const float* gate, const float* up, int64_t n, float* out) = nullptr;
  void (*add_inplace)(float* x, const float* y, int64_t n) = nullptr;
  // NEOX rotation of one token's heads: element i and i + head_dim/2 of every head turn by
  // the angle whose (already mscale-scaled) cosine and sine are cos[i], sin[i].
  void (*rope_rotate)(float* x, int64_t n_heads, int64_t head_dim, const float* cos,
                      const float* sin) = nullptr;

  // Attention pieces, put together by kernels/cpu/attention.cc. Keys come in chunks of
  // kAttnKeys positions (zero-padded), so a chunk of scores is one or two vectors.
  // KV rows stored as F16 / BF16 → float.
  void (*f16_to_f32)(const uint16_t* x, int64_t n, float* out) = nullptr;
  // float → F16 rounded to nearest even, the bytes of base/half.h's float_to_fp16 for every
  // non-NaN input (the KV cache's writes).
  void (*f32_to_f16)(const float* x, int64_t n, uint16_t* out) = nullptr;
  void (*bf16_to_f32)(const uint16_t* x, int64_t n, float* out) = nullptr;
  // s[i·kAttnKeys + j] = Σ_d q[i·dim + d] · k[j·dim + d] for i < nq, j < kAttnKeys: the
  // scores of nq query rows against one chunk of keys stored as rows (chunk × dim). Each
  // score's arithmetic is the same whatever nq is, so a prompt's scores do not depend on
  // how it was cut into chunks.
  void (*attn_scores)(const float* q, int64_t nq, const float* k, int64_t dim, float* s) = nullptr;
  // s[j] ← exp(s[j] − m) for j < kAttnKeys (exp(−∞) = 0); returns the sum of the new s[j].
  float (*attn_exp_sum)(float* s, float m) = nullptr;
  // acc[i·dim + d] ← acc[i·dim + d]·corr[i] + Σ_j p[i·kAttnKeys + j] · v[j·dim + d]
  // for i < nq: the online-softmax update of nq output rows by one chunk of values.
  void (*attn_accumulate)(const float* p, int64_t nq, const float* v, int64_t dim,
                          const float* corr, float* acc) = nullptr;
  // All of a decode-sized attention task at once (attention_decode_avx512.cc): `rows` ≤
  // kAttnDecodeRows query rows q (rows × dim, already scaled) of KV head `head`, row r
  // seeing positions 0..last[r], into out (rows × dim). While it computes its last chunk it
  // asks for `next` (the first chunk the thread reads after it; may be empty). Returns
  // false, having done nothing, for what it does not take (the caller then uses the pieces
  // above); nullptr on paths without it.
  bool (*attn_decode)(const float* q, int rows, const PagedKvView& kv, int64_t head, int64_t dim,
                      const int32_t* last, const AttnChunkRef& next, float* out) = nullptr;
  // All of a prompt-sized attention task at once (attention_prefill_avx512.cc): `rows` ≤
  // kAttnPrefillRows query rows, otherwise as attn_decode. Returns false, having done
  // nothing, for what it does not take; nullptr on paths without it.
  bool (*attn_prefill)(const float* q, int rows, const PagedKvView& kv, int64_t head, int64_t dim,
                       const int32_t* last, float* out) = nullptr;

  // Kernels for a weight type; nullptr when the type has none.
  const WeightKernels* for_type(GgmlType type) const;
  ConvertRowFn converter(ActFormat f) const;
};

// The table of a path. Precondition: cpu_isa_supported(isa).
const CpuKernels& cpu_kernels(CpuIsa isa);

// Per-file fillers (each defined in the file of its ISA).
void fill_scalar_kernels(CpuKernels& k);
void fill_scalar_attention_kernels(CpuKernels& k);
void fill_avx2_quant_kernels(CpuKernels& k);
void fill_avx2_float_kernels(CpuKernels& k);
void fill_avx2_elementwise_kernels(CpuKernels& k);
void fill_avx2_attention_kernels(CpuKernels& k);
void fill_avx512_quant_kernels(CpuKernels& k);
void fill_avx512_attention_kernels(CpuKernels& k);
void fill_avx512_attention_decode_kernels(CpuKernels& k);
void fill_avx512_attention_prefill_kernels(CpuKernels& k);
void fill_avx512_packed_kernels(CpuKernels& k, bool bf16_dot);
void fill_avx512_float_kernels(CpuKernels& k, bool bf16_dot);
// AArch64: float tiles and attention pieces (baseline Advanced SIMD), and the integer tiles
// of each level (SMULL/SADALP, SDOT, SDOT + SMMLA).
void fill_neon_float_kernels(CpuKernels& k);
void fill_neon_quant_kernels(CpuKernels& k);
void fill_neon_dotprod_quant_kernels(CpuKernels& k);
void fill_neon_i8mm_quant_kernels(CpuKernels& k);

}  // namespace duet::cpu
