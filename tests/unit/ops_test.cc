// Reference ops checked against properties that hold exactly (or to rounding), so the
// oracle itself is tested rather than trusted.
#include "kernels/ref/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/ref/quantize.h"

namespace duet {
namespace {

std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(RefOps, MatmulMatchesNaiveFloatMatmul) {
  const int64_t rows = 7, cols = 64, T = 3;
  const auto w = randn(rows * cols, 1), x = randn(T * cols, 2);
  std::vector<uint8_t> wb;
  ASSERT_TRUE(ref::quantize_row(GgmlType::F32, w.data(), rows * cols, wb).is_ok());
  std::vector<float> y(T * rows);
  ref::matmul(GgmlType::F32, wb.data(), rows, cols, cols * 4, x.data(), T, y.data());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (int64_t c = 0; c < cols; ++c) want += double(w[r * cols + c]) * x[t * cols + c];
      EXPECT_NEAR(y[t * rows + r], want, 1e-5);
    }
}

TEST(RefOps, RmsnormGivesUnitRms) {
  const int64_t dim = 37;
  auto x = randn(dim * 2, 3);
  std::vector<float> w(dim, 1.0f), y(dim * 2);
  ref::rmsnorm(x.data(), w.data(), 2, dim, 0.0f, y.data());
  for (int r = 0; r < 2; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += double(y[r * dim + i]) * y[r * dim + i];
    EXPECT_NEAR(ss / dim, 1.0, 1e-5);
  }
  // In place gives the same result.
  ref::rmsnorm(x.data(), w.data(), 2, dim, 0.0f, x.data());
  for (int64_t i = 0; i < dim * 2; ++i) EXPECT_EQ(x[i], y[i]);
}

TEST(RefOps, RopeIsIdentityAtZeroAndPreservesNorm) {
  const int64_t heads = 3, hd = 16;
  std::vector<double> inv_freq(hd / 2);
  for (int i = 0; i < hd / 2; ++i) inv_freq[i] = std::pow(10000.0, -2.0 * i / hd);
  auto x = randn(2 * heads * hd, 4);
  const auto orig = x;
  const int32_t pos[2] = {0, 1000};
  ref::rope_neox(x.data(), 2, heads, hd, pos, inv_freq.data(), 1.0);
  for (int64_t i = 0; i < heads * hd; ++i) EXPECT_FLOAT_EQ(x[i], orig[i]);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < hd / 2; ++i) {
      const size_t a = (heads + h) * hd + i, b = a + hd / 2;
      EXPECT_NEAR(x[a] * x[a] + x[b] * x[b], orig[a] * orig[a] + orig[b] * orig[b], 1e-4);
    }
}

// q·k after rotation depends only on the distance between positions.
TEST(RefOps, RopeDotDependsOnRelativePosition) {
  const int64_t hd = 32;
  std::vector<double> inv_freq(hd / 2);
  for (int i = 0; i < hd / 2; ++i) inv_freq[i] = std::pow(1e6, -2.0 * i / hd);
  const auto q0 = randn(hd, 5), k0 = randn(hd, 6);
  auto dot_at = [&](int32_t pq, int32_t pk) {
    auto q = q0, k = k0;
    ref::rope_neox(q.data(), 1, 1, hd, &pq, inv_freq.data(), 1.0);
    ref::rope_neox(k.data(), 1, 1, hd, &pk, inv_freq.data(), 1.0);
    double d = 0;
    for (int i = 0; i < hd; ++i) d += double(q[i]) * k[i];
    return d;
  };
  EXPECT_NEAR(dot_at(10, 3), dot_at(107, 100), 1e-3);
}

TEST(RefOps, AttentionOverOneKeyReturnsItsValue) {
  const int64_t hd = 8;
  const auto q = randn(2 * hd, 7), k = randn(hd, 8), v = randn(hd, 9);
  std::vector<float> out(2 * hd);
  const int32_t pos = 0;
  ref::attention(q.data(), k.data(), v.data(), hd, &pos, 1, 2, 1, hd, 0.5f, out.data());
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < hd; ++i) EXPECT_FLOAT_EQ(out[h * hd + i], v[i]);
}

TEST(RefOps, AttentionIsCausalAndUsesItsKvHead) {
  // Two KV heads, four query heads: heads 0,1 read KV head 0; heads 2,3 read KV head 1.
  const int64_t hd = 4, n_kv = 2, n_head = 4, ctx = 3;
  const auto q = randn(n_head * hd, 10);
  auto k = randn(ctx * n_kv * hd, 11), v = randn(ctx * n_kv * hd, 12);
  std::vector<float> out1(n_head * hd), out2(n_head * hd);
  const int32_t pos = 1;  // sees rows 0 and 1 only
  ref::attention(q.data(), k.data(), v.data(), n_kv * hd, &pos, 1, n_head, n_kv, hd, 1.0f,
                 out1.data());
  for (int i = 0; i < n_kv * hd; ++i) {  // row 2 must not matter
    k[2 * n_kv * hd + i] = 100.0f;
    v[2 * n_kv * hd + i] = -100.0f;
  }
  ref::attention(q.data(), k.data(), v.data(), n_kv * hd, &pos, 1, n_head, n_kv, hd, 1.0f,
                 out2.data());
  for (int i = 0; i < n_head * hd; ++i) EXPECT_EQ(out1[i], out2[i]);
  // Head 2 equals a single-KV-head computation on KV head 1.
  std::vector<float> k1(2 * hd), v1(2 * hd), o(hd);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < hd; ++i) {
      k1[p * hd + i] = k[p * n_kv * hd + hd + i];
      v1[p * hd + i] = v[p * n_kv * hd + hd + i];
    }
  ref::attention(q.data() + 2 * hd, k1.data(), v1.data(), hd, &pos, 1, 1, 1, hd, 1.0f, o.data());
  for (int i = 0; i < hd; ++i) EXPECT_FLOAT_EQ(out1[2 * hd + i], o[i]);
}

TEST(RefOps, SwigluAndAdd) {
  const float g[3] = {0.0f, 1.0f, -2.0f}, u[3] = {5.0f, 2.0f, 1.0f};
  float out[3];
  ref::swiglu(g, u, 3, out);
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0 / (1 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(out[2], -2.0 / (1 + std::exp(2.0)), 1e-6);
  float x[3] = {1, 2, 3};
  ref::add_inplace(x, u, 3);
  EXPECT_EQ(x[0], 6.0f);
  EXPECT_EQ(x[2], 4.0f);
}

}  // namespace
}  // namespace duet
