// The fast CPU kernels (kernels/cpu) against the scalar reference (kernels/ref), once per
// ISA path (paths this CPU lacks are skipped), over shapes that are not multiples of any
// vector width, with weights and activations at misaligned addresses and padded rows.
//
// Tolerances are derived, per output, from the data:
//  * A quantized-activation kernel computes Σ w_i·x̂_i exactly in integers per block and
//    then in float, where x̂ is the activation it actually read (a_i·d_b, or bf16(x_i)).
//    Against the exact Σ w_i·x̂_i (double, over ref-decoded weights) its error is float
//    rounding only: each term is rounded at most twice and summed in chains of at most
//    cols/8 + 32 steps (lanes of 8 or 16, a final lane reduction, the offset terms), so
//      |y − Σ w_i x̂_i| ≤ (cols/8 + 32)·u·Σ_i |x̂_i|·(|w_i| + 2|z_i|),   u = 2^-24,
//    where z_i is the weight's value at code 0 (the offset a kernel subtracts: 128·d for
//    Q8_0, 8·d for Q4_0, dmin·m for Q4_K/Q5_K, 32·d·sc for Q6_K, m for Q4_1/Q5_1, and
//    the value of code 0 for the other formats); the term covers the
//    cancellation between the shifted sum and the offset, and ref's own float decoding.
//  * Against ref::matmul on the original x, add what the activation rounding can move:
//    Σ_i |w_i|·e_i with e_i = d_b·(1/2 + 2^-13) for 8-bit blocks (round to nearest, plus
//    float rounding of x·(127/amax) and of d), e_i = 2^-8·|x_i| for bf16 (8 significant
//    bits), 0 for float activations; plus u·|y_ref| for ref's final rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_backend.h"
#include "base/half.h"
#include "base/thread_pool.h"
#include "kernels/cpu/matmul.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/ops.h"
#include "kernels/ref/quant_blocks.h"
#include "kernels/ref/quantize.h"
#include "unit/cpu_test_support.h"

namespace duet::cpu {
namespace {

using namespace duet::cpu::test;

std::vector<float> decode(const TestWeights& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r)
    ref::dequantize_row(w.type, w.row(r), out.data() + r * w.cols, w.cols);
  return out;
}

// The bytes of a block that hold codes (not scales), and the code a kernel treats as zero:
// 0x80 (= −128) for Q8_0, which the VNNI path shifts by 128; 0 for the others.
struct CodeBytes {
  size_t begin, end;
  uint8_t zero;
};
CodeBytes code_bytes(GgmlType type) {
  switch (type) {
    case GgmlType::Q8_0:
      return {offsetof(BlockQ8_0, qs), sizeof(BlockQ8_0), 0x80};
    case GgmlType::Q4_0:
      return {offsetof(BlockQ4_0, qs), sizeof(BlockQ4_0), 0};
    case GgmlType::Q4_K:
      return {offsetof(BlockQ4_K, qs), sizeof(BlockQ4_K), 0};
    case GgmlType::Q5_K:
      return {offsetof(BlockQ5_K, qh), sizeof(BlockQ5_K), 0};
    case GgmlType::Q6_K:
      return {offsetof(BlockQ6_K, ql), offsetof(BlockQ6_K, scales), 0};
    case GgmlType::Q4_1:
      return {offsetof(BlockQ4_1, qs), sizeof(BlockQ4_1), 0};
    case GgmlType::Q5_0:
      return {offsetof(BlockQ5_0, qh), sizeof(BlockQ5_0), 0};
    case GgmlType::Q5_1:
      return {offsetof(BlockQ5_1, qh), sizeof(BlockQ5_1), 0};
    case GgmlType::IQ4_NL:
      return {offsetof(BlockIQ4_NL, qs), sizeof(BlockIQ4_NL), 0};
    case GgmlType::Q2_K:
      return {offsetof(BlockQ2_K, qs), offsetof(BlockQ2_K, d), 0};
    case GgmlType::Q3_K:  // hmask and qs: code 0 is −4
      return {offsetof(BlockQ3_K, hmask), offsetof(BlockQ3_K, scales), 0};
    case GgmlType::IQ4_XS:  // code 0 is the grid's −127
      return {offsetof(BlockIQ4_XS, qs), sizeof(BlockIQ4_XS), 0};
    default:
      return {0, 0, 0};
  }
}

// |value at code 0| of every weight (the offset z_i of the header comment): each row
// decoded with its code bytes set to the zero code.
std::vector<float> zero_points(const TestWeights& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols), 0.0f);
  const auto& tr = ggml_traits(w.type);
  if (tr.block_elems == 1) return out;
  const CodeBytes codes = code_bytes(w.type);
  std::vector<uint8_t> row(ggml_row_bytes(w.type, w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    std::memcpy(row.data(), w.row(r), row.size());
    for (size_t b = 0; b < row.size() / tr.block_bytes; ++b)
      std::memset(row.data() + b * tr.block_bytes + codes.begin, codes.zero,
                  codes.end - codes.begin);
    ref::dequantize_row(w.type, row.data(), out.data() + r * w.cols, w.cols);
  }
  for (float& v : out) v = std::fabs(v);
  return out;
}

// What the kernel reads instead of x, as exact reals (x̂), and a bound on |x − x̂|.
struct EffectiveActivations {
  std::vector<double> value, error_bound;
};
EffectiveActivations effective(const CpuKernels& k, GgmlType type, const std::vector<float>& x,
                               int64_t T, int64_t cols) {
  EffectiveActivations e{std::vector<double>(x.begin(), x.end()), std::vector<double>(x.size(), 0)};
  const ActFormat f = matmul_act_format(k, type);
  if (f == ActFormat::kF32) return e;
  const size_t stride = act_row_bytes(f, cols);
  std::vector<uint8_t> buf(stride * T + 64);
  uint8_t* base = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  convert_activations(k, f, x.data(), T, cols, base);
  for (int64_t t = 0; t < T; ++t) {
    const uint8_t* row = base + t * stride;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(t * cols + c);
      if (f == ActFormat::kBf16) {
        uint16_t h;
        std::memcpy(&h, row + 2 * c, 2);
        e.value[i] = bf16_to_float(h);
        e.error_bound[i] = std::ldexp(std::fabs(x[i]), -8);
        continue;
      }
      const bool k32 = f == ActFormat::kQ8x32;
      const int8_t* qs = k32 ? q8x32_row(row, cols).qs : q8x256_row(row, cols).qs;
      const float d = k32 ? q8x32_row(row, cols).d[c / 32] : q8x256_row(row, cols).d[c / 256];
      e.value[i] = static_cast<double>(d) * qs[c];
      e.error_bound[i] = d * (0.5 + std::ldexp(1.0, -13));
    }
  }
  return e;
}

struct MatmulCase {
  CpuIsa isa;
  GgmlType type;
};

class CpuMatmul : public ::testing::TestWithParam<MatmulCase> {
 protected:
  void SetUp() override {
    if (!cpu_isa_supported(GetParam().isa)) GTEST_SKIP() << "CPU lacks this path";
  }
};

// packed: through the path's packed kernel (the first `rows` rows packed for the call).
std::vector<float> run_matmul(const CpuKernels& k, ThreadPool& pool, const TestWeights& w,
                              int64_t rows, const float* x, int64_t T, bool packed) {
  std::vector<float> y(static_cast<size_t>(T * rows), NAN);
  MatmulScratch scratch;
  MatmulArgs a{w.type, w.data(), rows, w.cols, w.row_bytes, x, T, y.data()};
  std::unique_ptr<PackedWeights> p;
  if (packed) {
    p = pack_for_kernels(k, w.type, w.data(), rows, w.cols, w.row_bytes);
    if (p == nullptr) ADD_FAILURE() << "no packed kernel";
    a.packed = p.get();
  }
  matmul(k, pool, scratch, a);
  return y;
}

// Tokens up to 19: single-row tiles serve up to 16 tokens for quantized weights (4 for float
// ones), 4 × 4 tiles the rest, and both must give the same bits.
constexpr int64_t kMaxRows = 37, kMaxTokens = 19;

// One column count: the full 37 × 9 problem against its bounds, then every (or a sample of)
// smaller problems (first rows, first tokens), which must give bit-identical outputs: the
// arithmetic of an output never depends on tiling, threads or batch size.
void check_cols(const CpuKernels& k, GgmlType type, int64_t cols, bool every_shape, bool packed) {
  SCOPED_TRACE(std::string(ggml_type_name(type)) + " cols=" + std::to_string(cols) +
               (packed ? " packed" : ""));
  const TestWeights w = make_weights(type, kMaxRows, cols, static_cast<uint32_t>(cols * 31 + 7));
  const std::vector<float> wf = decode(w), z = zero_points(w);
  // x at an address that is 4 mod 64 (floats cannot be less aligned than 4).
  std::vector<float> xbuf(kMaxTokens * cols + 32);
  float* x = xbuf.data() + (16 - reinterpret_cast<uintptr_t>(xbuf.data()) / 4 % 16) % 16 + 1;
  const std::vector<float> xv = random_activations(kMaxTokens * cols, static_cast<uint32_t>(cols));
  std::copy(xv.begin(), xv.end(), x);

  std::vector<float> y_ref(kMaxTokens * kMaxRows);
  ref::matmul(type, w.data(), kMaxRows, cols, w.row_bytes, x, kMaxTokens, y_ref.data());
  const EffectiveActivations xe = effective(k, type, xv, kMaxTokens, cols);

  ThreadPool pool3(3), pool1(1);
  const std::vector<float> y = run_matmul(k, pool3, w, kMaxRows, x, kMaxTokens, packed);
  const double gamma = (static_cast<double>(cols) / 8 + 32) * kU;
  for (int64_t t = 0; t < kMaxTokens; ++t)
    for (int64_t r = 0; r < kMaxRows; ++r) {
      double exact = 0, magnitude = 0, act_err = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double wi = wf[r * cols + c], xi = xe.value[t * cols + c];
        exact += wi * xi;
        magnitude += std::fabs(xi) * (std::fabs(wi) + 2.0 * z[r * cols + c]);
        act_err += std::fabs(wi) * xe.error_bound[t * cols + c];
      }
      const double got = y[t * kMaxRows + r], want_ref = y_ref[t * kMaxRows + r];
      ASSERT_LE(std::fabs(got - exact), gamma * magnitude)
          << "vs exact on the kernel's activations, t=" << t << " r=" << r;
      ASSERT_LE(std::fabs(got - want_ref), gamma * magnitude + act_err + kU * std::fabs(want_ref))
          << "vs ref::matmul, t=" << t << " r=" << r;
    }

  EXPECT_EQ(run_matmul(k, pool1, w, kMaxRows, x, kMaxTokens, packed), y) << "1 thread vs 3 threads";
  for (int64_t rows = 1; rows <= kMaxRows; ++rows) {
    for (int64_t T = 1; T <= kMaxTokens; ++T) {
      if (!every_shape && !(rows % 4 == 1 && (T == 1 || T == 4 || T == 5 || T == 9 || T == 17)))
        continue;
      const std::vector<float> part = run_matmul(k, pool3, w, rows, x, T, packed);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_EQ(part[t * rows + r], y[t * kMaxRows + r])
              << "rows=" << rows << " T=" << T << " t=" << t << " r=" << r;
    }
  }
}

TEST_P(CpuMatmul, MatchesReferenceWithinDerivedBounds) {
  const CpuKernels& k = cpu_kernels(GetParam().isa);
  const GgmlType type = GetParam().type;
  // A path that borrows another's kernels for this type (the AVX-512 paths use the AVX2 tiles
  // of some formats) repeats that path's test: skip it.
  for (CpuIsa lower : kAllIsas) {
    if (lower == GetParam().isa) break;
    if (!cpu_isa_supported(lower)) continue;
    const WeightKernels* other = cpu_kernels(lower).for_type(type);
    if (other->tile == k.for_type(type)->tile && k.for_type(type)->packed_tile == nullptr)
      GTEST_SKIP() << "this path multiplies " << ggml_type_name(type) << " with the kernel of "
                   << cpu_isa_name(lower);
  }
  std::vector<int64_t> cols;
  switch (ggml_traits(type).block_elems) {
    case 1:  // plain types: tails of every length below the vector widths, and whole
             // multiples of 32 (what packed BF16 takes)
      cols = {1, 7, 16, 33, 100, 257, 96, 544};
      break;
    case 32:  // 1, 3, 17 (a 16-block chunk + 1) and 31 blocks (odd pair count)
      cols = {32, 96, 544, 992};
      break;
    default:  // 1, 3 and 5 super-blocks
      cols = {256, 768, 1280};
  }
  // Paths that pack this type are checked both ways: the packed kernel is what the model
  // uses, the row kernel what a matmul on unpacked weights gets.
  const bool has_packed = k.for_type(type)->packed_tile != nullptr;
  for (bool packed : {false, true}) {
    if (packed && !has_packed) continue;
    size_t checked = 0;
    for (int64_t c : cols) {
      if (packed && c % 32 != 0) continue;  // the packed layouts take whole blocks of 32
      check_cols(k, type, c, /*every_shape=*/checked++ < 2, packed);
    }
  }
}

std::vector<MatmulCase> all_matmul_cases() {
  std::vector<MatmulCase> out;
  for (CpuIsa isa : kAllIsas)
    for (GgmlType t :
         {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
          GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q4_1, GgmlType::Q5_0,
          GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_XS})
      out.push_back({isa, t});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllPaths, CpuMatmul, ::testing::ValuesIn(all_matmul_cases()),
                         [](const auto& info) {
                           return isa_param_name(info.param.isa) + "_" +
                                  ggml_type_name(info.param.type);
                         });

// ---- activation conversion ----

class CpuIsaTest : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    if (!cpu_isa_supported(GetParam())) GTEST_SKIP() << "CPU lacks this path";
  }
};

// Every path quantizes to the same bytes as the scalar definition, and x̂ is within
// d/2·(1 + 2^-12) of x (see the header comment).
TEST_P(CpuIsaTest, ActivationQuantizersMatchScalarBytes) {
  const CpuKernels& k = cpu_kernels(GetParam());
  const CpuKernels& scalar = cpu_kernels(CpuIsa::kScalar);
  for (ActFormat f : {ActFormat::kQ8x32, ActFormat::kQ8x256}) {
    for (int64_t cols : {256, 768}) {
      std::vector<float> x = random_activations(3 * cols, static_cast<uint32_t>(cols));
      std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // an all-zero block: d = 0, no NaN
      // In row 1, each super-block (d = 1: one code of 127) has one 16 of codes with Σ|a|
      // on either side of fits16's bound, in a different place each time: 1023 in 16 number
      // 9, 1024 in number 15, 1024 in number 6 (with 256 columns: 1024 in number 15).
      const int sums[3] = {1023, 1024, 1024}, where[3] = {9, 15, 6};
      auto expect_fits16 = [&](int64_t b) { return cols == 256 ? 0 : sums[b] == 1023 ? 1 : 0; };
      for (int64_t b = 0; b < cols / 256; ++b) {
        float* xb = x.data() + cols + 256 * b;
        const int at = cols == 256 ? 15 : where[b];
        std::fill(xb, xb + 256, 0.0f);
        xb[at == 0 ? 16 : 0] = 127.0f;
        std::fill(xb + 16 * at, xb + 16 * at + 16, 64.0f);
        xb[16 * at + 15] = cols != 256 && sums[b] == 1023 ? -63.0f : -64.0f;
      }
      const size_t stride = act_row_bytes(f, cols);
      std::vector<uint8_t> got(3 * stride, 0), want(3 * stride, 0);
      convert_activations(k, f, x.data(), 3, cols, got.data());
      convert_activations(scalar, f, x.data(), 3, cols, want.data());
      EXPECT_EQ(got, want) << "format " << static_cast<int>(f) << " cols " << cols;
      for (int64_t t = 0; t < 3; ++t) {
        const uint8_t* row = want.data() + t * stride;
        for (int64_t c = 0; c < cols; ++c) {
          const bool k32 = f == ActFormat::kQ8x32;
          const float d = k32 ? q8x32_row(row, cols).d[c / 32] : q8x256_row(row, cols).d[c / 256];
          const int8_t q = k32 ? q8x32_row(row, cols).qs[c] : q8x256_row(row, cols).qs[c];
          ASSERT_LE(std::fabs(x[t * cols + c] - double(d) * q), d * (0.5 + std::ldexp(1.0, -13)));
        }
        if (f != ActFormat::kQ8x256) continue;
        // The sums the kernels read instead of adding codes up, from their definitions.
        const Q8x256Row r = q8x256_row(row, cols);
        for (int64_t j = 0; j < cols / 16; ++j) {
          int sum = 0;
          for (int64_t c = 16 * j; c < 16 * j + 16; ++c) sum += r.qs[c];
          ASSERT_EQ(r.bsums[j], sum) << "16-value sum " << j;
          ASSERT_EQ(r.q6_start[j], -32 * sum) << "Q6_K start " << j;
        }
        for (int64_t j = 0; j < cols / 32; ++j) {
          const int sum = r.bsums[2 * j] + r.bsums[2 * j + 1];
          ASSERT_EQ(r.sums32[j], sum) << "32-value sum " << j;
          ASSERT_EQ(r.s32[j], r.d[j / 8] * static_cast<float>(sum)) << "scaled 32-value sum " << j;
        }
        for (int64_t b = 0; b < cols / 256; ++b) {
          int most = 0;  // the largest Σ|a| of 16 values
          for (int64_t j = 16 * b; j < 16 * b + 16; ++j) {
            int abs_sum = 0;
            for (int64_t c = 16 * j; c < 16 * j + 16; ++c)
              abs_sum += std::abs(static_cast<int>(r.qs[c]));
            most = std::max(most, abs_sum);
          }
          ASSERT_EQ(r.fits16[b], most <= 1023 ? 1 : 0) << "fits16 of super-block " << b;
        }
        for (int64_t b = 0; b < cols / 256 && t == 1; ++b)
          EXPECT_EQ(r.fits16[b], expect_fits16(b)) << "the bound's two sides, super-block " << b;
      }
    }
  }
}

TEST_P(CpuIsaTest, Bf16ConversionRoundsToNearestEven) {
  const CpuKernels& k = cpu_kernels(GetParam());
  if (k.to_bf16 == nullptr) GTEST_SKIP() << "this path reads float activations for BF16";
  for (int64_t cols : {1, 15, 16, 17, 100}) {
    const std::vector<float> x = random_activations(cols, 5);
    std::vector<uint16_t> out(cols + 1, 0xBEEF);
    k.to_bf16(x.data(), cols, reinterpret_cast<uint8_t*>(out.data()));
    for (int64_t c = 0; c < cols; ++c) EXPECT_EQ(out[c], float_to_bf16(x[c])) << c;
    EXPECT_EQ(out[cols], 0xBEEF) << "wrote past the row";
  }
}

// ---- element-wise ops, through the backend (which splits large calls over the pool) ----

// The fast RMSNorm does ref's operations except for the order of the double sum of squares,
// which moves 1/rms by a few 2^-53 and can flip the rounding of float(x·inv) by one ulp;
// the product with w can flip once more: |Δ| ≤ 2·2^-23·|y|.
TEST_P(CpuIsaTest, RmsnormMatchesReference) {
  ThreadPool pool(3);
  auto be = make_cpu_backend(pool, GetParam());
  for (int64_t dim : {1, 7, 8, 37, 128, 1000}) {
    for (int64_t rows : {1, 3, 200}) {
      const std::vector<float> x = random_activations(rows * dim, static_cast<uint32_t>(dim));
      const std::vector<float> w = random_uniform(dim, 3, 0.5f, 1.5f);
      std::vector<float> want(x.size()), got(x.size());
      ref::rmsnorm(x.data(), w.data(), rows, dim, 1e-6f, want.data());
      be->rmsnorm(x.data(), w.data(), rows, dim, 1e-6f, got.data());
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_LE(std::fabs(got[i] - want[i]), std::ldexp(std::fabs(want[i]), -22))
            << "dim " << dim << " rows " << rows << " i " << i;
      std::vector<float> in_place = x;
      be->rmsnorm(in_place.data(), w.data(), rows, dim, 1e-6f, in_place.data());
      EXPECT_EQ(in_place, got) << "y aliasing x";
    }
  }
}

// silu(g)·up with a float e^x: Taylor truncation < 2^-27, about ten float roundings in the
// polynomial and the 2^n scaling, and ln2 split into two floats (its residual error, times
// |n| <= 127, moves e^x by < 2^-19 relative); then 1 + e, the division and ·up round once
// each: < 2^-18 relative. Beyond |g| = 87 e^−g is clamped, which only matters where
// silu(g) ≈ g·e^g < 1e-35.
TEST_P(CpuIsaTest, SwigluMatchesReference) {
  ThreadPool pool(3);
  auto be = make_cpu_backend(pool, GetParam());
  for (int64_t n : {1, 7, 8, 9, 100, 70001}) {
    std::vector<float> g = random_uniform(n, 11, -20.0f, 20.0f);
    const std::vector<float> up = random_uniform(n, 12, -2.0f, 2.0f);
    const float specials[] = {0.0f, -0.0f, 87.0f, -87.0f, 88.5f, -88.5f, 200.0f, -200.0f, 1e-30f};
    for (size_t i = 0; i < std::size(specials) && i < g.size(); ++i) g[i] = specials[i];
    std::vector<float> want(n), got(n);
    ref::swiglu(g.data(), up.data(), n, want.data());
    be->swiglu(g.data(), up.data(), n, got.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::fabs(got[i] - want[i]),
                std::ldexp(std::fabs(want[i]), -18) + 1e-35 * std::fabs(up[i]))
          << "n " << n << " g " << g[i];
  }
}

// The KV cache's float → F16 writes: the same bytes as float_to_fp16 for normal values,
// halfway cases, values that round into or out of the subnormals, overflow to infinity and
// infinities; a NaN stays a NaN. 1003 values, so the SIMD loop has a tail.
TEST_P(CpuIsaTest, F32ToF16MatchesHalfH) {
  const CpuKernels& k = cpu_kernels(GetParam());
  std::mt19937 rng(21);
  std::uniform_int_distribution<uint32_t> bits;
  std::vector<float> x(1003);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t b = bits(rng);
    // Exponents around F16's range (2^-26 … 2^17) and a few anywhere.
    const uint32_t e = i % 10 == 0 ? (b >> 23) & 0xFF : 101 + (b >> 23) % 44;
    const uint32_t u = (b & 0x807FFFFFu) | (e << 23);
    std::memcpy(&x[i], &u, 4);
  }
  x[0] = 65520.0f;  // halfway to the next step past 65504: infinity
  x[1] = -INFINITY;
  x[2] = std::ldexp(1.0f, -25);         // half of the smallest subnormal: ties to zero
  x[3] = 1.0f + std::ldexp(1.0f, -11);  // halfway between 1 and the next F16: ties to even
  x[4] = NAN;
  std::vector<uint16_t> got(x.size());
  k.f32_to_f16(x.data(), static_cast<int64_t>(x.size()), got.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(fp16_to_float(got[i]))) << i;
      continue;
    }
    ASSERT_EQ(got[i], float_to_fp16(x[i])) << "x = " << x[i] << " (" << i << ")";
  }
}

// KV rows back to float: every F16 and BF16 bit pattern converts exactly (as base/half.h
// does), at lengths with tails below every vector width.
TEST_P(CpuIsaTest, KvConversionsToF32AreExact) {
  const CpuKernels& k = cpu_kernels(GetParam());
  std::vector<uint16_t> all(65536);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t n : {65536, 1, 7, 15, 17, 31, 33}) {
    std::vector<float> got(static_cast<size_t>(n) + 1, -1.0f);
    k.f16_to_f32(all.data() + 1000, std::min<int64_t>(n, 65536 - 1000), got.data());
    for (int64_t i = 0; i < std::min<int64_t>(n, 65536 - 1000); ++i) {
      const float want = fp16_to_float(all[1000 + i]);
      ASSERT_TRUE(std::isnan(want) ? std::isnan(got[i]) : std::memcmp(&got[i], &want, 4) == 0)
          << "f16 " << all[1000 + i] << " n=" << n;
    }
    EXPECT_EQ(got[std::min<int64_t>(n, 65536 - 1000)], -1.0f) << "wrote past n=" << n;
    std::fill(got.begin(), got.end(), -1.0f);
    k.bf16_to_f32(all.data() + 1000, std::min<int64_t>(n, 65536 - 1000), got.data());
    for (int64_t i = 0; i < std::min<int64_t>(n, 65536 - 1000); ++i) {
      const uint32_t want_bits = static_cast<uint32_t>(all[1000 + i]) << 16;
      ASSERT_EQ(std::memcmp(&got[i], &want_bits, 4), 0) << "bf16 " << all[1000 + i] << " n=" << n;
    }
    EXPECT_EQ(got[std::min<int64_t>(n, 65536 - 1000)], -1.0f) << "wrote past n=" << n;
  }
}

// A step's KV cache writes, spread over the threads, store every row as the reference
// quantizer does, for every KV type, and write nothing past a row.
TEST_P(CpuIsaTest, KvRowWritesMatchTheReferenceQuantizer) {
  ThreadPool pool(2);
  auto be = make_cpu_backend(pool, GetParam());
  const int64_t n = 128;
  for (GgmlType dtype : {GgmlType::F16, GgmlType::BF16, GgmlType::F32, GgmlType::Q8_0}) {
    for (int64_t n_rows : {1, 16, 128, 301}) {
      SCOPED_TRACE(std::string(ggml_type_name(dtype)) + " rows " + std::to_string(n_rows));
      const std::vector<float> x =
          random_activations(static_cast<size_t>(n_rows * n), static_cast<uint32_t>(n_rows));
      std::vector<uint8_t> want;
      ASSERT_TRUE(ref::quantize_row(dtype, x.data(), n, want).ok());
      const size_t row_bytes = want.size(), stride = row_bytes + 8;
      // Rows stored back to front with a gap after each, as cache slots are scattered.
      std::vector<uint8_t> got(static_cast<size_t>(n_rows) * stride, 0xCD);
      std::vector<KvRowWrite> rows;
      for (int64_t r = 0; r < n_rows; ++r)
        rows.push_back({x.data() + r * n, got.data() + (n_rows - 1 - r) * stride});
      be->encode_rows(dtype, rows, n);
      for (int64_t r = 0; r < n_rows; ++r) {
        want.clear();  // quantize_row appends
        ASSERT_TRUE(ref::quantize_row(dtype, x.data() + r * n, n, want).ok());
        const uint8_t* at = got.data() + (n_rows - 1 - r) * stride;
        ASSERT_TRUE(std::equal(want.begin(), want.end(), at)) << "row " << r;
        for (size_t i = row_bytes; i < stride; ++i) ASSERT_EQ(at[i], 0xCD) << "past row " << r;
      }
    }
  }
}

TEST_P(CpuIsaTest, AddIsExact) {
  ThreadPool pool(3);
  auto be = make_cpu_backend(pool, GetParam());
  for (int64_t n : {1, 7, 9, 70001}) {
    std::vector<float> x = random_activations(n, 1), want = x;
    const std::vector<float> y = random_activations(n, 2);
    ref::add_inplace(want.data(), y.data(), n);
    be->add_inplace(x.data(), y.data(), n);
    EXPECT_EQ(x, want);
  }
}

// cos and sin are rounded to float (u·mscale each) and the rotation is done in float (two
// roundings) where ref rounds once from double: |Δ| ≤ 6u·mscale·(|x0| + |x1|).
TEST_P(CpuIsaTest, RopeMatchesReference) {
  ThreadPool pool(3);
  auto be = make_cpu_backend(pool, GetParam());
  const int64_t heads = 3;
  const std::vector<int32_t> pos_a = {0, 1, 5, 700, 40000}, pos_b = {3, 4, 5, 6, 7};
  for (int64_t head_dim : {2, 16, 18, 64, 128}) {
    std::vector<double> inv_freq(head_dim / 2);
    for (int64_t i = 0; i < head_dim / 2; ++i)
      inv_freq[i] = std::pow(1e6, -2.0 * i / static_cast<double>(head_dim));
    for (double mscale : {1.0, 1.1386}) {
      // a, b, a again: the backend's cached cos/sin table must follow the positions.
      for (const auto* pos : {&pos_a, &pos_b, &pos_a}) {
        const int64_t T = static_cast<int64_t>(pos->size());
        const std::vector<float> x = random_activations(T * heads * head_dim, 9);
        std::vector<float> want = x, got = x;
        ref::rope_neox(want.data(), T, heads, head_dim, pos->data(), inv_freq.data(), mscale);
        be->rope_neox(got.data(), T, heads, head_dim, {pos->data(), inv_freq.data(), mscale});
        const int64_t half = head_dim / 2;
        for (int64_t i = 0; i < T * heads * head_dim; ++i) {
          const int64_t j = i % head_dim, pair = j < half ? i + half : i - half;
          const double bound = 6 * kU * mscale * (std::fabs(x[i]) + std::fabs(x[pair]));
          ASSERT_LE(std::fabs(got[i] - want[i]), bound) << "head_dim " << head_dim << " i " << i;
        }
      }
    }
  }
}

// The fused query/key preparation is the backend's own norms then rotations, bit for bit,
// for decode-sized and prompt-sized steps, with and without grouped heads.
TEST_P(CpuIsaTest, QkNormRopeEqualsNormsThenRotations) {
  ThreadPool pool(2);
  auto be = make_cpu_backend(pool, GetParam());
  const int64_t head_dim = 128;
  std::vector<double> inv_freq(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i)
    inv_freq[i] = std::pow(1e6, -2.0 * i / static_cast<double>(head_dim));
  const std::vector<float> qw = random_uniform(head_dim, 5, 0.5f, 1.5f),
                           kw = random_uniform(head_dim, 6, 0.5f, 1.5f);
  for (int64_t T : {1, 8, 37}) {
    for (auto [n_head, n_head_kv] : {std::pair<int64_t, int64_t>{16, 8}, {4, 4}}) {
      SCOPED_TRACE("T " + std::to_string(T) + " heads " + std::to_string(n_head) + "/" +
                   std::to_string(n_head_kv));
      std::vector<int32_t> pos(static_cast<size_t>(T));
      for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(3 + 7 * t);
      const std::vector<float> q0 = random_activations(T * n_head * head_dim, 11);
      const std::vector<float> k0 = random_activations(T * n_head_kv * head_dim, 12);
      std::vector<float> q_want = q0, k_want = k0, q_got = q0, k_got = k0;
      be->rmsnorm(q_want.data(), qw.data(), T * n_head, head_dim, 1e-6f, q_want.data());
      be->rmsnorm(k_want.data(), kw.data(), T * n_head_kv, head_dim, 1e-6f, k_want.data());
      const RopeAngles rope{pos.data(), inv_freq.data(), 1.1};
      be->rope_neox(q_want.data(), T, n_head, head_dim, rope);
      be->rope_neox(k_want.data(), T, n_head_kv, head_dim, rope);
      QkNormRope prep;
      prep.q = q_got.data();
      prep.k = k_got.data();
      prep.q_norm = qw.data();
      prep.k_norm = kw.data();
      prep.n_tokens = T;
      prep.n_head = n_head;
      prep.n_head_kv = n_head_kv;
      prep.head_dim = head_dim;
      prep.eps = 1e-6f;
      prep.rope = rope;
      be->qk_norm_rope(prep);
      EXPECT_EQ(q_got, q_want);
      EXPECT_EQ(k_got, k_want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, CpuIsaTest, ::testing::ValuesIn(kAllIsas),
                         [](const auto& info) { return isa_param_name(info.param); });

// The path the CPU check picks, where the caller says which it should be (scripts/test
// --arm64 runs the tests on emulated CPUs with and without SDOT and SMMLA).
TEST(CpuIsaDetection, PicksTheExpectedPath) {
  const char* want = std::getenv("DUET_EXPECT_CPU_ISA");
  if (want == nullptr) GTEST_SKIP() << "DUET_EXPECT_CPU_ISA is not set";
  EXPECT_STREQ(cpu_isa_name(best_cpu_isa()), want);
}

// The NEON levels sum each unit's products exactly in integers (SMULL, SDOT or SMMLA) and
// then take the same float steps, so they give the same bits, in every tile shape.
TEST(CpuNeonLevels, SameBitsOnEveryLevel) {
  const CpuIsa levels[] = {CpuIsa::kNeon, CpuIsa::kNeonDotprod, CpuIsa::kNeonI8mm};
  if (!cpu_isa_supported(CpuIsa::kNeon)) GTEST_SKIP() << "not an AArch64 CPU";
  ThreadPool pool(2);
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::IQ4_NL,
                        GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    SCOPED_TRACE(ggml_type_name(type));
    const int64_t cols = ggml_traits(type).block_elems == 32 ? 96 : 512;
    const TestWeights w = make_weights(type, 7, cols, 5);
    const std::vector<float> x = random_activations(static_cast<size_t>(11 * cols), 6);
    for (int64_t T : {1, 2, 3, 11}) {
      const std::vector<float> want =
          run_matmul(cpu_kernels(CpuIsa::kNeon), pool, w, 7, x.data(), T, /*packed=*/false);
      for (CpuIsa isa : levels) {
        if (!cpu_isa_supported(isa)) continue;
        EXPECT_TRUE(same_bits(run_matmul(cpu_kernels(isa), pool, w, 7, x.data(), T, false), want))
            << cpu_isa_name(isa) << " T=" << T;
      }
    }
  }
}

// The packed Q6_K tile scales two 16-column sums with one VPDPWSSD where every token's
// activation row marks the super-block fits16, and with a VPMULLD each otherwise: the same
// integers, so the same bits. A third of the rows have every code 0 (−32 after the offset)
// and a third every code 63 (+31). Super-block 2 sits at the bound: every 16 codes have
// Σ|a| = 1023, one sign, so the sums reach −32·1023 and 31·1023 and still take the pairs.
// Super-block 3 (and 1 for one token) is constant (every |a| = 127): there a sum reaches
// 32·127·16 > 2^15, which the int16 halves cannot hold, so the converter must mark it 0
// (checked: forcing the pairs there changes the result).
TEST(CpuPackedQ6K, Int16PairsGiveTheBitsOfTheMultiplies) {
  if (!cpu_isa_supported(CpuIsa::kAvx512)) GTEST_SKIP() << "CPU lacks AVX-512";
  const CpuKernels& k = cpu_kernels(CpuIsa::kAvx512);
  ASSERT_NE(k.q6_k.packed_tile, nullptr);
  const int64_t rows = 37, cols = 1024, T = 8, nsb = cols / 256;
  TestWeights w = make_weights(GgmlType::Q6_K, rows, cols, 5);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nsb && r % 3 != 2; ++b) {
      uint8_t* blk = w.storage.data() + w.offset + r * w.row_bytes + b * sizeof(BlockQ6_K);
      const int fill = r % 3 == 0 ? 0x00 : 0xFF;  // codes 0 or 63
      std::memset(blk + offsetof(BlockQ6_K, ql), fill, sizeof(BlockQ6_K::ql));
      std::memset(blk + offsetof(BlockQ6_K, qh), fill, sizeof(BlockQ6_K::qh));
    }
  const auto packed = pack_for_kernels(k, GgmlType::Q6_K, w.data(), rows, cols, w.row_bytes);
  ASSERT_NE(packed, nullptr);
  // Super-block 3 is constant for every token, super-block 1 for token 5: so with up to
  // five tokens three super-blocks take the pairs, with more two.
  std::vector<float> x = random_activations(static_cast<size_t>(T * cols), 9);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < nsb; ++b)
      if (b == 3 || (b == 1 && t == 5)) std::fill_n(x.begin() + t * cols + b * 256, 256, 1.0f);
    // Super-block 2: one code of 127 (d = 1) with 14 of 64 and a 0, then 15 of 64 and a 63
    // in every other 16: Σ|a| = 1023 each, the sign the token's.
    float* xb = x.data() + t * cols + 2 * 256;
    const float sign = t % 2 == 0 ? 1.0f : -1.0f;
    std::fill_n(xb, 256, 64.0f * sign);
    xb[0] = 127.0f * sign;
    xb[15] = 0.0f;
    for (int j = 1; j < 16; ++j) xb[16 * j + 15] = 63.0f * sign;
  }
  const size_t xs = act_row_bytes(ActFormat::kQ8x256, cols);
  std::vector<uint8_t> buf(xs * T + 64);
  uint8_t* xa = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  convert_activations(k, ActFormat::kQ8x256, x.data(), T, cols, xa);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < nsb; ++b)
      ASSERT_EQ(q8x256_row(xa + t * xs, cols).fits16[b], b == 3 || (b == 1 && t == 5) ? 0 : 1)
          << "t=" << t << " super-block " << b;
  // The tile over the converted rows with every fits16 byte set to `fits16` (−1: as
  // converted).
  std::vector<uint8_t> run_buf(xs * T + 64);
  uint8_t* act = run_buf.data() + (64 - reinterpret_cast<uintptr_t>(run_buf.data()) % 64) % 64;
  auto run = [&](int fits16, int nt) {
    std::memcpy(act, xa, xs * T);
    for (int64_t t = 0; t < T && fits16 >= 0; ++t)
      std::memset(act + t * xs + q8x256_offsets(cols).fits16, fits16, nsb);
    std::vector<float> y(static_cast<size_t>(nt * rows), NAN);
    for (int64_t g = 0; g < packed->groups(); ++g)
      k.q6_k.packed_tile(packed->group(g), cols,
                         static_cast<int>(std::min<int64_t>(16, rows - 16 * g)), act, xs, nt,
                         y.data() + 16 * g, rows);
    return y;
  };
  for (int nt = 1; nt <= T; ++nt) {
    SCOPED_TRACE("tokens " + std::to_string(nt));
    const std::vector<float> multiplied = run(0, nt);
    EXPECT_TRUE(same_bits(run(-1, nt), multiplied));
    EXPECT_FALSE(same_bits(run(1, nt), multiplied)) << "the constant blocks do overflow int16";
  }
}

}  // namespace
}  // namespace duet::cpu
