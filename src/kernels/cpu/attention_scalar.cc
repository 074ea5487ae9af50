// Plain C++ versions of the attention pieces (see CpuKernels in kernel_table.h): the
// scalar path, and the definition the SIMD versions are tested against.
#include <cmath>

#include "base/half.h"
#include "kernels/cpu/kernel_table.h"

namespace duet::cpu {
namespace {

void f16_to_f32(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp16_to_float(x[i]);
}

void f32_to_f16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_fp16(x[i]);
}

void bf16_to_f32(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(x[i]);
}

void attn_scores(const float* q, int64_t nq, const float* k, int64_t dim, float* s) {
  for (int64_t i = 0; i < nq; ++i)
    for (int j = 0; j < kAttnKeys; ++j) {
      float dot = 0.0f;
      for (int64_t d = 0; d < dim; ++d) dot += q[i * dim + d] * k[j * dim + d];
      s[i * kAttnKeys + j] = dot;
    }
}

float attn_exp_sum(float* s, float m) {
  float sum = 0.0f;
  for (int j = 0; j < kAttnKeys; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  return sum;
}

void attn_accumulate(const float* p, int64_t nq, const float* v, int64_t dim, const float* corr,
                     float* acc) {
  for (int64_t i = 0; i < nq; ++i) {
    float* a = acc + i * dim;
    for (int64_t d = 0; d < dim; ++d) {
      float sum = a[d] * corr[i];
      for (int j = 0; j < kAttnKeys; ++j) sum += p[i * kAttnKeys + j] * v[j * dim + d];
      a[d] = sum;
    }
  }
}

}  // namespace

void fill_scalar_attention_kernels(CpuKernels& k) {
  k.f16_to_f32 = f16_to_f32;
  k.f32_to_f16 = f32_to_f16;
  k.bf16_to_f32 = bf16_to_f32;
  k.attn_scores = attn_scores;
  k.attn_exp_sum = attn_exp_sum;
  k.attn_accumulate = attn_accumulate;
}

}  // namespace duet::cpu
