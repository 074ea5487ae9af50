#include "kernels/ref/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ref/dequantize.h"

namespace duet::ref {

void matmul(GgmlType type, const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes,
            const float* x, int64_t n_tokens, float* y) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r)
      y[t * rows + r] = dot_row(type, w + r * row_bytes, x + t * cols, cols);
}

void get_rows(GgmlType type, const uint8_t* table, int64_t cols, size_t row_bytes,
              const int32_t* ids, int64_t n, float* out) {
  for (int64_t t = 0; t < n; ++t)
    dequantize_row(type, table + static_cast<size_t>(ids[t]) * row_bytes, out + t * cols, cols);
}

void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double ss = 0.0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
    float* yr = y + r * dim;
    for (int64_t i = 0; i < dim; ++i) yr[i] = static_cast<float>(xr[i] * inv) * w[i];
  }
}

void rope_neox(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
               const int32_t* positions, const double* inv_freq, double mscale) {
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(positions[t]) * inv_freq[i];
      const double c = std::cos(angle) * mscale, s = std::sin(angle) * mscale;
      for (int64_t h = 0; h < n_heads; ++h) {
        float* xh = x + (t * n_heads + h) * head_dim;
        const double x0 = xh[i], x1 = xh[i + half];
        xh[i] = static_cast<float>(x0 * c - x1 * s);
        xh[i + half] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

void attention(const float* q, const float* k, const float* v, int64_t kv_stride,
               const int32_t* positions, int64_t n_tokens, int64_t n_head, int64_t n_head_kv,
               int64_t head_dim, float scale, float* out) {
  const int64_t group = n_head / n_head_kv;
  std::vector<double> scores;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t n_keys = static_cast<int64_t>(positions[t]) + 1;
    scores.resize(static_cast<size_t>(n_keys));
    for (int64_t h = 0; h < n_head; ++h) {
      const float* qh = q + (t * n_head + h) * head_dim;
      const int64_t kvh = h / group;
      double max_score = -INFINITY;
      for (int64_t p = 0; p < n_keys; ++p) {
        const float* kp = k + p * kv_stride + kvh * head_dim;
        double dot = 0.0;
        for (int64_t i = 0; i < head_dim; ++i) dot += static_cast<double>(qh[i]) * kp[i];
        scores[p] = dot * scale;
        max_score = std::max(max_score, scores[p]);
      }
      double sum = 0.0;
      for (int64_t p = 0; p < n_keys; ++p) {
        scores[p] = std::exp(scores[p] - max_score);
        sum += scores[p];
      }
      float* oh = out + (t * n_head + h) * head_dim;
      for (int64_t i = 0; i < head_dim; ++i) {
        double acc = 0.0;
        for (int64_t p = 0; p < n_keys; ++p)
          acc += scores[p] * v[p * kv_stride + kvh * head_dim + i];
        oh[i] = static_cast<float>(acc / sum);
      }
    }
  }
}

void attention_paged(const float* q, const PagedKvView& kv, const int32_t* positions,
                     int64_t n_tokens, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                     float scale, float* out) {
  // Decode the rows this call can see into contiguous float, then reuse the plain kernel:
  // the oracle stays obviously equal to the contiguous one.
  int64_t n_ctx = 0;
  for (int64_t t = 0; t < n_tokens; ++t) n_ctx = std::max<int64_t>(n_ctx, positions[t] + 1);
  const int64_t kv_width = n_head_kv * head_dim;
  std::vector<float> kf(static_cast<size_t>(n_ctx * kv_width)), vf(kf.size());
  for (int64_t p = 0; p < n_ctx; ++p)
    for (int64_t h = 0; h < n_head_kv; ++h) {
      const size_t at = kv.offset(h, p);
      dequantize_row(kv.dtype, kv.k + at, kf.data() + p * kv_width + h * head_dim, head_dim);
      dequantize_row(kv.dtype, kv.v + at, vf.data() + p * kv_width + h * head_dim, head_dim);
    }
  attention(q, kf.data(), vf.data(), kv_width, positions, n_tokens, n_head, n_head_kv, head_dim,
            scale, out);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void add_inplace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace duet::ref
