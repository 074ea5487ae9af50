// The CPU backend's paged attention (kernels/cpu/attention.cc on each ISA path's pieces)
// against the reference (kernels/ref, double precision), over GQA shapes, KV types, both
// cache layouts (head-major blocks as KvStorage keeps them, position-major rows as a plain
// array is), block sizes that do and do not divide the key chunk, scrambled block tables,
// prefill from position 0, a chunk continuing a context, single-token decode, and several
// sequences in one call.
//
// Bound per output element, derived from the data: the fast kernel computes each score in
// float (error ≤ (dim + 4)·u·Σ_d |q_d·k_d|·scale =: δ), exponentiates with relative error
// ≤ 2e-7 (exp_avx2.h: polynomial truncation below 2^-27 plus a few roundings), and sums
// weights and weighted values in chains of at most n_keys/16 + 32 float additions. The
// output is a weighted mean of values, so relative weight errors of ε move it by at most
// 2ε·max|v|:  |out − ref| ≤ max|v|·(2·(2δ + 2e-7 + (n_keys/16 + 32)·u)) + u·|ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_backend.h"
#include "base/half.h"
#include "base/thread_pool.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/ops.h"
#include "kernels/ref/quantize.h"

namespace duet {
namespace {

constexpr double kU = 1.0 / (1 << 24);

struct Shape {
  int64_t n_head, n_head_kv, head_dim;
};

struct Case {
  GgmlType dtype;
  Shape shape;
  int64_t block_size;
  bool head_major;
};

std::string describe(const Case& c) {
  return std::string(ggml_type_name(c.dtype)) + " heads " + std::to_string(c.shape.n_head) + "/" +
         std::to_string(c.shape.n_head_kv) + " dim " + std::to_string(c.shape.head_dim) +
         " block " + std::to_string(c.block_size) +
         (c.head_major ? " head-major" : " position-major");
}

std::vector<Case> all_cases() {
  const GgmlType types[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0};
  // Qwen3's shape; a wide group; an odd head size; equal heads; a head size with a
  // 32-wide body and an 8-wide remainder; a small head. A Q8_0 head is whole blocks.
  const Shape shapes[] = {{16, 8, 128}, {8, 1, 32}, {6, 3, 20}, {2, 2, 64},
                          {4, 2, 40},   {8, 4, 16}, {4, 1, 64}};
  std::vector<Case> cases;
  for (GgmlType t : types)
    for (const Shape& s : shapes)
      for (bool head_major : {true, false}) {
        if (s.head_dim % ggml_traits(t).block_elems != 0) continue;
        for (int64_t bs : {16, 5}) cases.push_back({t, s, bs, head_major});
      }
  return cases;
}

// A KV cache of n_ctx positions spread over blocks in scrambled order.
struct TestCache {
  Shape shape;
  GgmlType dtype;
  std::vector<int32_t> block_table;
  std::vector<uint8_t> k, v;
  std::vector<float> k_f32, v_f32;  // what the stored rows decode to, by position
  PagedKvView layout;               // strides; k and v pointed at by view()

  TestCache(const Case& c, int64_t n_ctx, std::mt19937& rng) : shape(c.shape), dtype(c.dtype) {
    const int64_t bs = c.block_size, width = shape.n_head_kv * shape.head_dim;
    const int64_t n_blocks = (n_ctx + bs - 1) / bs + 3;  // some never used
    block_table.resize(static_cast<size_t>(n_blocks));
    std::iota(block_table.begin(), block_table.end(), 0);
    std::shuffle(block_table.begin(), block_table.end(), rng);
    layout = c.head_major
                 ? PagedKvView::head_major(nullptr, nullptr, dtype, bs, shape.n_head_kv,
                                           shape.head_dim, block_table.data())
                 : PagedKvView::position_major(nullptr, nullptr, dtype, bs, shape.n_head_kv,
                                               shape.head_dim, block_table.data());
    const size_t row_bytes = ggml_row_bytes(dtype, width);
    k.assign(layout.block_stride * n_blocks, 0xA5);  // garbage where nobody may read
    v.assign(k.size(), 0x5A);
    k_f32.resize(static_cast<size_t>(n_ctx * width));
    v_f32.resize(k_f32.size());
    std::normal_distribution<float> normal;
    std::vector<float> row(static_cast<size_t>(width));
    std::vector<uint8_t> bytes;
    for (int64_t p = 0; p < n_ctx; ++p) {
      for (auto* dst : {&k, &v}) {
        for (float& x : row) x = normal(rng) * 2.0f;
        bytes.clear();  // quantize_row appends
        EXPECT_TRUE(ref::quantize_row(dtype, row.data(), width, bytes).is_ok());
        EXPECT_EQ(bytes.size(), row_bytes);
        if (c.head_major) {  // each head's bytes to its own place (heads are whole blocks)
          const size_t head_bytes = row_bytes / static_cast<size_t>(shape.n_head_kv);
          for (int64_t h = 0; h < shape.n_head_kv; ++h)
            std::copy_n(bytes.begin() + h * head_bytes, head_bytes,
                        dst->begin() + layout.offset(h, p));
        } else {
          std::copy(bytes.begin(), bytes.end(), dst->begin() + layout.offset(0, p));
        }
        ref::dequantize_row(dtype, bytes.data(), (dst == &k ? k_f32 : v_f32).data() + p * width,
                            width);
      }
    }
  }

  PagedKvView view() const {
    PagedKvView view = layout;
    view.k = k.data();
    view.v = v.data();
    return view;
  }
};

AttentionShape shape_of(const Shape& s) {
  return {s.n_head, s.n_head_kv, s.head_dim,
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)))};
}

// Queries of n_head heads at `positions`, one row per token.
std::vector<float> random_queries(const Shape& s, size_t n_tokens, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> q(n_tokens * static_cast<size_t>(s.n_head * s.head_dim));
  for (float& x : q) x = normal(rng) * 1.5f;
  return q;
}

// `got` against the double-precision reference over the cache's decoded values, within the
// bound derived in the header comment.
void expect_matches_reference(const TestCache& cache, const std::vector<float>& q,
                              const std::vector<int32_t>& positions,
                              const std::vector<float>& got) {
  const Shape& s = cache.shape;
  const AttentionShape shape = shape_of(s);
  const int64_t width = s.n_head_kv * s.head_dim, n = static_cast<int64_t>(positions.size());
  std::vector<float> want(q.size());
  ref::attention(q.data(), cache.k_f32.data(), cache.v_f32.data(), width, positions.data(), n,
                 s.n_head, s.n_head_kv, s.head_dim, shape.scale, want.data());
  const int64_t group = s.n_head / s.n_head_kv;
  int64_t checked = 0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < s.n_head; ++h) {
      const int64_t kvh = h / group, n_keys = positions[t] + 1;
      const float* qh = q.data() + (t * s.n_head + h) * s.head_dim;
      double max_abs_dot = 0, max_v = 0;
      for (int64_t p = 0; p < n_keys; ++p) {
        double abs_dot = 0;
        for (int64_t d = 0; d < s.head_dim; ++d) {
          abs_dot += std::fabs(qh[d] * cache.k_f32[p * width + kvh * s.head_dim + d]);
          max_v = std::max<double>(max_v, std::fabs(cache.v_f32[p * width + kvh * s.head_dim + d]));
        }
        max_abs_dot = std::max(max_abs_dot, abs_dot * shape.scale);
      }
      const double delta = (s.head_dim + 4) * kU * max_abs_dot;
      const double eps = 2 * delta + 2e-7 + (n_keys / 16.0 + 32) * kU;
      for (int64_t d = 0; d < s.head_dim; ++d) {
        const size_t i = static_cast<size_t>((t * s.n_head + h) * s.head_dim + d);
        const double bound = max_v * 2 * eps + kU * std::fabs(want[i]);
        ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), bound)
            << "token " << t << " (position " << positions[t] << ") head " << h << " dim " << d
            << ": got " << got[i] << ", want " << want[i];
        ++checked;
      }
    }
  EXPECT_EQ(checked, static_cast<int64_t>(q.size()));
}

// One test per ISA path; each runs every case.
class CpuAttention : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    if (!cpu_isa_supported(GetParam())) GTEST_SKIP() << "CPU lacks this path";
  }

  // Queries at `positions` over a cache holding positions 0..max(positions), every case.
  void check(const std::vector<int32_t>& positions, uint32_t seed) {
    for (const Case& c : all_cases()) {
      SCOPED_TRACE(describe(c));
      check_case(c, positions, seed);
      if (HasFatalFailure()) return;
    }
  }

  void check_case(const Case& c, const std::vector<int32_t>& positions, uint32_t seed) {
    std::mt19937 rng(seed);
    const int64_t n_ctx = *std::max_element(positions.begin(), positions.end()) + 1;
    TestCache cache(c, n_ctx, rng);
    const std::vector<float> q = random_queries(c.shape, positions.size(), rng);
    std::vector<float> got(q.size(), NAN);
    ThreadPool pool(3);
    auto be = make_cpu_backend(pool, GetParam());
    const PagedAttentionCall call{q.data(), cache.view(), positions.data(),
                                  static_cast<int64_t>(positions.size()), got.data()};
    be->attention_paged(std::span<const PagedAttentionCall>(&call, 1), shape_of(c.shape));
    expect_matches_reference(cache, q, positions, got);
  }
};

std::vector<int32_t> range(int32_t first, int32_t count) {
  std::vector<int32_t> p(static_cast<size_t>(count));
  std::iota(p.begin(), p.end(), first);
  return p;
}

TEST_P(CpuAttention, PrefillFromTheStart) {
  check(range(0, 1), 1);
  check(range(0, 3), 2);
  check(range(0, 37), 3);
  check(range(0, 64), 8);
}

TEST_P(CpuAttention, ChunkContinuingAContext) { check(range(50, 7), 4); }

// A prompt chunk deep into a context: many chunks of keys before the causal edge, tasks
// of full and partial row groups, the edge inside and across chunks.
TEST_P(CpuAttention, PromptChunkAtDepth) { check(range(200, 45), 9); }

TEST_P(CpuAttention, DecodeOneToken) {
  check({100}, 5);
  check({16}, 6);  // the first position of a fresh key chunk
}

// A step's sequences in one call, as the model makes it: decode tokens and prompt chunks of
// different lengths, each over its own cache, all sharing the pool's threads.
TEST_P(CpuAttention, SequencesOfOneStepTogether) {
  const Case c{GgmlType::F16, {16, 8, 128}, 16, true};
  const std::vector<std::vector<int32_t>> positions = {{40},         range(0, 19), {3},
                                                       range(30, 5), {0},          {77}};
  std::mt19937 rng(12);
  std::vector<TestCache> caches;
  std::vector<std::vector<float>> qs, outs;
  for (const auto& p : positions) {
    caches.emplace_back(c, *std::max_element(p.begin(), p.end()) + 1, rng);
    qs.push_back(random_queries(c.shape, p.size(), rng));
    outs.emplace_back(qs.back().size(), NAN);
  }
  std::vector<PagedAttentionCall> calls;
  for (size_t i = 0; i < positions.size(); ++i)
    calls.push_back({qs[i].data(), caches[i].view(), positions[i].data(),
                     static_cast<int64_t>(positions[i].size()), outs[i].data()});
  ThreadPool pool(3);
  auto be = make_cpu_backend(pool, GetParam());
  be->attention_paged(calls, shape_of(c.shape));
  for (size_t i = 0; i < positions.size(); ++i) {
    SCOPED_TRACE("sequence " + std::to_string(i));
    expect_matches_reference(caches[i], qs[i], positions[i], outs[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, CpuAttention, ::testing::ValuesIn(all_cpu_isas()),
                         [](const ::testing::TestParamInfo<CpuIsa>& i) {
                           return cpu_isa_name(i.param);
                         });

// The vector exp against double precision, from the masked −∞ to 0 (scores minus their
// maximum never exceed 0), and the sum it returns.
TEST(CpuAttentionPieces, ExpSumIsAccurate) {
  for (CpuIsa isa : all_cpu_isas()) {
    if (!cpu_isa_supported(isa)) continue;
    const cpu::CpuKernels& k = cpu::cpu_kernels(isa);
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> uni(-100.0f, 3.0f);
    for (int rep = 0; rep < 2000; ++rep) {
      float s[cpu::kAttnKeys], orig[cpu::kAttnKeys];
      const float m = 3.0f;
      for (int j = 0; j < cpu::kAttnKeys; ++j) orig[j] = s[j] = uni(rng);
      if (rep % 7 == 0) orig[rep % cpu::kAttnKeys] = s[rep % cpu::kAttnKeys] = -INFINITY;
      const float sum = k.attn_exp_sum(s, m);
      double want_sum = 0, terms_tol = 0;
      for (int j = 0; j < cpu::kAttnKeys; ++j) {
        const double want = std::exp(static_cast<double>(orig[j]) - m);
        want_sum += want;
        if (std::isinf(orig[j])) {
          ASSERT_EQ(s[j], 0.0f) << cpu_isa_name(isa);
        } else if (want > 1e-37) {
          // 2.5e-7 for the polynomial and its roundings; the float subtraction s − m rounds
          // its argument by up to u·|s − m|, which moves exp by as much relatively.
          const double tol = (2.5e-7 + kU * std::fabs(orig[j] - m)) * want;
          ASSERT_LE(std::fabs(s[j] - want), tol) << cpu_isa_name(isa) << " x=" << orig[j] - m;
          terms_tol += tol;
        } else {
          ASSERT_LE(s[j], 1e-37) << cpu_isa_name(isa);
        }
      }
      // The terms' own errors carry into the sum, and adding kAttnKeys floats rounds by up to
      // (kAttnKeys − 1)·u of it (below 1e-6).
      ASSERT_LE(std::fabs(sum - want_sum), terms_tol + 1e-6 * want_sum + 1e-37)
          << cpu_isa_name(isa);
    }
  }
}

// Scores from keys stored as rows against the exact dot products, for one to five query
// rows and a head size with a tail below the vector width.
TEST(CpuAttentionPieces, ScoresFromKeyRowsAreDotProducts) {
  for (CpuIsa isa : all_cpu_isas()) {
    if (!cpu_isa_supported(isa)) continue;
    const cpu::CpuKernels& k = cpu::cpu_kernels(isa);
    std::mt19937 rng(11);
    std::normal_distribution<float> normal;
    for (int64_t dim : {128, 100}) {
      for (int64_t nq = 1; nq <= 5; ++nq) {
        std::vector<float> q(static_cast<size_t>(nq * dim)),
            keys(static_cast<size_t>(cpu::kAttnKeys * dim));
        for (float& x : q) x = normal(rng);
        for (float& x : keys) x = normal(rng);
        std::vector<float> s(static_cast<size_t>(nq * cpu::kAttnKeys), NAN);
        k.attn_scores(q.data(), nq, keys.data(), dim, s.data());
        for (int64_t i = 0; i < nq; ++i)
          for (int j = 0; j < cpu::kAttnKeys; ++j) {
            double exact = 0, magnitude = 0;
            for (int64_t d = 0; d < dim; ++d) {
              exact += static_cast<double>(q[i * dim + d]) * keys[j * dim + d];
              magnitude += std::fabs(static_cast<double>(q[i * dim + d]) * keys[j * dim + d]);
            }
            ASSERT_LE(std::fabs(s[i * cpu::kAttnKeys + j] - exact), (dim + 2) * kU * magnitude)
                << cpu_isa_name(isa) << " dim " << dim << " row " << i << " key " << j;
          }
      }
    }
  }
}

// The AVX-512 path runs a decoding sequence's task (up to kAttnDecodeRows query rows) in one
// fused kernel for F16, BF16 and Q8_0 head-major caches whose blocks hold whole key chunks, and
// declines everything else, which then goes the chunked way. The cases above meet both (the
// backend calls it under the same conditions), so they check its results; this pins down
// which cases it takes.
TEST(CpuAttentionPieces, DecodeTaskFusedForHeadMajorCaches) {
  if (!cpu_isa_supported(CpuIsa::kAvx512)) GTEST_SKIP() << "CPU lacks the AVX-512 path";
  const cpu::CpuKernels& k = cpu::cpu_kernels(CpuIsa::kAvx512);
  ASSERT_NE(k.attn_decode, nullptr);
  std::mt19937 rng(21);
  auto takes = [&](const Case& c, int rows) {
    TestCache cache(c, 40, rng);
    std::vector<float> q(static_cast<size_t>(rows * c.shape.head_dim), 0.1f), out(q.size(), NAN);
    std::vector<int32_t> last(static_cast<size_t>(rows), 39);
    const bool taken = k.attn_decode(q.data(), rows, cache.view(), 0, c.shape.head_dim, last.data(),
                                     {}, out.data());
    if (taken) {  // equal queries and visibility: every row is the same mean of values
      for (int r = 1; r < rows; ++r)
        for (int64_t d = 0; d < c.shape.head_dim; ++d)
          EXPECT_EQ(out[r * c.shape.head_dim + d], out[d]);
      // The chunk to ask memory for next (here head 1's first) is a hint: same result.
      const PagedKvView view = cache.view();
      const size_t at = view.offset(1, 0);
      std::vector<float> hinted(out.size(), NAN);
      EXPECT_TRUE(k.attn_decode(q.data(), rows, view, 0, c.shape.head_dim, last.data(),
                                {view.k + at, view.v + at}, hinted.data()));
      EXPECT_EQ(hinted, out);
    } else {
      for (float x : out) EXPECT_TRUE(std::isnan(x)) << "declined but wrote";
    }
    return taken;
  };
  for (GgmlType t : {GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0})
    for (int64_t dim : {16, 32, 64, 128})
      for (int64_t bs : {16, 32})
        for (int rows : {1, 2, 5, cpu::kAttnDecodeRows}) {
          if (dim % ggml_traits(t).block_elems != 0) continue;  // a Q8_0 head is whole blocks
          EXPECT_TRUE(takes({t, {8, 8, dim}, bs, true}, rows))
              << describe({t, {8, 8, dim}, bs, true}) << " rows " << rows;
        }
  EXPECT_FALSE(takes({GgmlType::F32, {8, 8, 128}, 16, true}, 2));
  EXPECT_FALSE(takes({GgmlType::F16, {8, 8, 128}, 16, false}, 2));  // position-major
  EXPECT_FALSE(takes({GgmlType::F16, {8, 8, 128}, 5, true}, 2));    // blocks split chunks
  EXPECT_FALSE(takes({GgmlType::F16, {8, 8, 40}, 16, true}, 2));    // head size
  EXPECT_FALSE(takes({GgmlType::F16, {8, 8, 128}, 16, true}, cpu::kAttnDecodeRows + 1));
}

// The AVX-512 path runs a prompt's task (up to kAttnPrefillRows query rows, as one to four
// groups of sixteen) in one fused kernel for every KV type of a head-major cache whose
// blocks hold whole key chunks, heads of 64 or 128. Here each row count it may get, with
// the causal edge different for every row, against the reference; and what it declines.
TEST(CpuAttentionPieces, PrefillTaskFusedForHeadMajorCaches) {
  if (!cpu_isa_supported(CpuIsa::kAvx512)) GTEST_SKIP() << "CPU lacks the AVX-512 path";
  const cpu::CpuKernels& k = cpu::cpu_kernels(CpuIsa::kAvx512);
  ASSERT_NE(k.attn_prefill, nullptr);
  std::mt19937 rng(22);
  // One query head per KV head: row r is the token at position 30 + 2r.
  auto takes = [&](const Case& c, int rows) {
    std::vector<int32_t> last(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) last[r] = 30 + 2 * r;
    TestCache cache(c, last.back() + 1, rng);
    const std::vector<float> q = random_queries(c.shape, static_cast<size_t>(rows), rng);
    std::vector<float> scaled(q);
    for (float& x : scaled) x *= shape_of(c.shape).scale;
    std::vector<float> out(q.size(), NAN);
    const bool taken = k.attn_prefill(scaled.data(), rows, cache.view(), 0, c.shape.head_dim,
                                      last.data(), out.data());
    if (taken && c.shape.n_head == 1) expect_matches_reference(cache, q, last, out);
    if (!taken) {
      for (float x : out) EXPECT_TRUE(std::isnan(x)) << "declined but wrote";
    }
    return taken;
  };
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0})
    for (int64_t dim : {64, 128})
      for (int rows : {1, 9, 16, 17, 33, 50, cpu::kAttnPrefillRows}) {
        SCOPED_TRACE(describe({t, {1, 1, dim}, 16, true}) + " rows " + std::to_string(rows));
        EXPECT_TRUE(takes({t, {1, 1, dim}, 16, true}, rows));
      }
  EXPECT_TRUE(takes({GgmlType::F16, {1, 1, 128}, 32, true}, 20));    // two chunks a block
  EXPECT_FALSE(takes({GgmlType::F16, {8, 8, 128}, 16, false}, 20));  // position-major
  EXPECT_FALSE(takes({GgmlType::F16, {1, 1, 128}, 5, true}, 20));    // blocks split chunks
  EXPECT_FALSE(takes({GgmlType::F16, {1, 1, 32}, 16, true}, 20));    // head size
  EXPECT_FALSE(takes({GgmlType::F16, {1, 1, 128}, 16, true}, cpu::kAttnPrefillRows + 1));
}

}  // namespace
}  // namespace duet
