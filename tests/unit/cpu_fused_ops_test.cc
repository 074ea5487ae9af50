// The CPU backend's fused decode-step ops against the separate steps they replace, bit for
// bit: matmuls of one input in one job, gate/up with SwiGLU in one job, a matmul that
// converts its input in column ranges, and the feed-forward call that chains them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_backend.h"
#include "base/thread_pool.h"
#include "kernels/cpu/matmul.h"
#include "unit/cpu_test_support.h"

namespace duet::cpu {
namespace {

using namespace duet::cpu::test;

// Matmuls of one input together (Q/K/V, gate/up) give the bits of separate matmuls: when
// they run as one job (all packed, one activation format: Q4_K with Q6_K), and when they
// fall back to one after another (formats differ, or a matrix is not packed).
TEST(CpuMatmulSameInput, EqualsSeparateMatmuls) {
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa)) continue;
    const CpuKernels& k = cpu_kernels(isa);
    const int64_t cols = 512;
    struct Mat {
      GgmlType type;
      int64_t rows;
      bool packed;
    };
    const std::vector<std::vector<Mat>> sets = {
        {{GgmlType::Q4_K, 37, true}, {GgmlType::Q4_K, 20, true}, {GgmlType::Q6_K, 50, true}},
        {{GgmlType::Q4_K, 33, true}, {GgmlType::Q4_K, 33, true}},
        {{GgmlType::Q8_0, 40, true}, {GgmlType::Q4_K, 17, true}},
        {{GgmlType::Q4_K, 16, true}, {GgmlType::Q6_K, 21, false}}};
    ThreadPool pool(3);
    uint32_t seed = 1;
    for (const auto& set : sets) {
      std::vector<TestWeights> ws;
      std::vector<std::unique_ptr<PackedWeights>> packs;
      for (const Mat& m : set) {
        ws.push_back(make_weights(m.type, m.rows, cols, seed++));
        packs.push_back(m.packed ? pack_for_kernels(k, m.type, ws.back().data(), m.rows, cols,
                                                    ws.back().row_bytes)
                                 : nullptr);
      }
      for (int64_t T : {1, 3, 8, 19}) {
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " set of " + std::to_string(set.size()) +
                     " T=" + std::to_string(T));
        const std::vector<float> x = random_activations(static_cast<size_t>(T * cols), seed++);
        std::vector<std::vector<float>> together(set.size()), apart(set.size());
        std::vector<MatmulArgs> args;
        for (size_t i = 0; i < set.size(); ++i) {
          together[i].assign(static_cast<size_t>(T * set[i].rows), NAN);
          apart[i].assign(together[i].size(), NAN);
          args.push_back({set[i].type, ws[i].data(), set[i].rows, cols, ws[i].row_bytes, x.data(),
                          T, together[i].data(), packs[i].get()});
        }
        MatmulScratch scratch;
        matmul_same_input(k, pool, scratch, args);
        for (size_t i = 0; i < set.size(); ++i) {
          MatmulArgs one = args[i];
          one.y = apart[i].data();
          matmul(k, pool, scratch, one);
          ASSERT_TRUE(same_bits(together[i], apart[i])) << "matrix " << i;
        }
      }
    }
  }
}

// The fused gate/up/SwiGLU gives the bits of the two matmuls followed by the path's SwiGLU
// when it applies (both packed, one activation format, T ≤ 8; a last group of fewer than 16
// rows), and otherwise reports that it did not run, leaving the output alone.
TEST(CpuMatmulSwiglu, EqualsMatmulsThenSwiglu) {
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa)) continue;
    const CpuKernels& k = cpu_kernels(isa);
    const int64_t cols = 512;
    struct Pair {
      GgmlType gate, up;
      int64_t rows;
      bool packed;
    };
    const std::vector<Pair> pairs = {
        {GgmlType::Q4_K, GgmlType::Q4_K, 48, true}, {GgmlType::Q4_K, GgmlType::Q4_K, 40, true},
        {GgmlType::Q4_K, GgmlType::Q6_K, 32, true}, {GgmlType::Q6_K, GgmlType::Q6_K, 24, true},
        {GgmlType::Q8_0, GgmlType::Q8_0, 56, true}, {GgmlType::BF16, GgmlType::BF16, 32, true},
        {GgmlType::Q8_0, GgmlType::Q4_K, 32, true}, {GgmlType::Q4_K, GgmlType::Q4_K, 32, false}};
    ThreadPool pool(3);
    uint32_t seed = 100;
    for (const Pair& p : pairs) {
      const TestWeights wg = make_weights(p.gate, p.rows, cols, seed++);
      const TestWeights wu = make_weights(p.up, p.rows, cols, seed++);
      const auto pg =
          p.packed ? pack_for_kernels(k, p.gate, wg.data(), p.rows, cols, wg.row_bytes) : nullptr;
      const auto pu =
          p.packed ? pack_for_kernels(k, p.up, wu.data(), p.rows, cols, wu.row_bytes) : nullptr;
      const bool fusable = pg != nullptr && pu != nullptr &&
                           matmul_act_format(k, p.gate) == matmul_act_format(k, p.up);
      for (int64_t T : {1, 3, 8, 9}) {
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " " + ggml_type_name(p.gate) + "/" +
                     ggml_type_name(p.up) + " rows " + std::to_string(p.rows) +
                     " T=" + std::to_string(T));
        const std::vector<float> x = random_activations(static_cast<size_t>(T * cols), seed++);
        const size_t n = static_cast<size_t>(T * p.rows);
        std::vector<float> fused(n, NAN), gate(n, NAN), up(n, NAN);
        const MatmulArgs ga{p.gate,   wg.data(), p.rows,      cols,    wg.row_bytes,
                            x.data(), T,         gate.data(), pg.get()};
        const MatmulArgs ua{p.up,     wu.data(), p.rows,    cols,    wu.row_bytes,
                            x.data(), T,         up.data(), pu.get()};
        MatmulScratch scratch;
        const bool ran = matmul_swiglu(k, pool, scratch, ga, ua, fused.data());
        ASSERT_EQ(ran, fusable && T <= kPackedTileTokens);
        const MatmulArgs both[] = {ga, ua};
        matmul_same_input(k, pool, scratch, both);
        k.swiglu(gate.data(), up.data(), static_cast<int64_t>(n), gate.data());
        if (ran) {
          ASSERT_TRUE(same_bits(fused, gate));
        } else {
          for (float v : fused) ASSERT_TRUE(std::isnan(v)) << "wrote its output without running";
        }
      }
    }
  }
}

// A matmul whose input came split by columns converts it by column chunks and gets the bits
// of the token split, for every activation format (a last chunk shorter than 256 columns
// for the 32-column formats), packed or not, and for token counts on both sides of the
// decode-sized range.
TEST(CpuMatmulInColumnRanges, SameBitsAsTheTokenSplit) {
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa)) continue;
    const CpuKernels& k = cpu_kernels(isa);
    ThreadPool pool(2);
    uint32_t seed = 300;
    for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_0,
                          GgmlType::Q4_0, GgmlType::BF16, GgmlType::F32}) {
      const int64_t rows = 40;
      for (int64_t cols : {768, 544}) {
        if (ggml_traits(type).block_elems == 256 && cols % 256 != 0) continue;
        const TestWeights w = make_weights(type, rows, cols, seed++);
        const auto packed = pack_for_kernels(k, type, w.data(), rows, cols, w.row_bytes);
        for (bool use_packed : {false, true}) {
          if (use_packed && packed == nullptr) continue;
          for (int64_t T : {1, 2, 5, 8, 9}) {
            SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " " + ggml_type_name(type) + " cols " +
                         std::to_string(cols) + (use_packed ? " packed" : "") +
                         " T=" + std::to_string(T));
            const std::vector<float> x = random_activations(static_cast<size_t>(T * cols), seed++);
            std::vector<float> by_tokens(static_cast<size_t>(T * rows), NAN), by_columns(by_tokens);
            MatmulArgs a{type, w.data(),         rows,
                         cols, w.row_bytes,      x.data(),
                         T,    by_tokens.data(), use_packed ? packed.get() : nullptr};
            // Each call's converted rows start from garbage, so a field the column split
            // left unwritten cannot pass for one the token split wrote.
            MatmulScratch scratch;
            constexpr size_t kPoison = size_t{1} << 16;
            std::memset(scratch.get(kPoison), 0x5A, kPoison);
            matmul(k, pool, scratch, a);
            std::memset(scratch.get(kPoison), 0xA5, kPoison);
            a.y = by_columns.data();
            a.x_in_column_ranges = true;
            matmul(k, pool, scratch, a);
            ASSERT_TRUE(same_bits(by_columns, by_tokens));
          }
        }
      }
    }
  }
}

// The column-chunk conversion writes every field of every format byte for byte as the whole
// row's conversion does (each field is checked, also those only AVX-512 tiles read), and
// nothing else: both buffers start from the same garbage.
TEST(CpuMatmulInColumnRanges, ChunkedConversionGivesTheRowBytes) {
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa)) continue;
    const CpuKernels& k = cpu_kernels(isa);
    for (ActFormat format : {ActFormat::kQ8x256, ActFormat::kQ8x32, ActFormat::kBf16}) {
      if (k.converter(format) == nullptr) continue;  // bf16 rows: AVX512_BF16 only
      for (int64_t cols : {256, 544, 768, 1056}) {
        if (format == ActFormat::kQ8x256 && cols % 256 != 0) continue;
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " format " +
                     std::to_string(static_cast<int>(format)) + " cols " + std::to_string(cols));
        const int64_t T = 3;
        const std::vector<float> x =
            random_activations(static_cast<size_t>(T * cols), 700 + static_cast<uint32_t>(cols));
        const size_t bytes = static_cast<size_t>(T) * act_row_bytes(format, cols);
        std::vector<uint8_t> whole(bytes, 0x5A), chunked(bytes, 0x5A);
        convert_activations(k, format, x.data(), T, cols, whole.data());
        convert_activations_by_column_chunks(k, format, x.data(), T, cols, chunked.data());
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(chunked[i], whole[i]) << "byte " << i;
      }
    }
  }
}

// The backend's feed-forward call gives the bits of its steps (gate and up, SwiGLU, down)
// when the decode-sized fusion runs (T ≤ 8) and when a prompt-sized step takes the steps,
// on the paths that pack weights (elsewhere the call is its steps).
TEST(CpuFeedForward, EqualsItsSteps) {
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa) || cpu_kernels(isa).q4_k.packed_tile == nullptr) continue;
    SCOPED_TRACE(cpu_isa_name(isa));
    ThreadPool pool(2);
    auto be = make_cpu_backend(pool, isa);
    const int64_t d_model = 512, d_ff = 768;
    const TestWeights tg = make_weights(GgmlType::Q4_K, d_ff, d_model, 41);
    const TestWeights tu = make_weights(GgmlType::Q4_K, d_ff, d_model, 42);
    const TestWeights td = make_weights(GgmlType::Q6_K, d_model, d_ff, 43);
    const WeightMatrix gate{"gate", GgmlType::Q4_K, d_ff, d_model, tg.row_bytes, tg.data()};
    const WeightMatrix up{"up", GgmlType::Q4_K, d_ff, d_model, tu.row_bytes, tu.data()};
    const WeightMatrix down{"down", GgmlType::Q6_K, d_model, d_ff, td.row_bytes, td.data()};
    for (const WeightMatrix* w : {&gate, &up, &down})
      ASSERT_TRUE(be->prepare_weights(*w)) << w->name;
    for (int64_t T : {1, 3, 8, 12}) {
      SCOPED_TRACE("T " + std::to_string(T));
      const std::vector<float> x =
          random_activations(static_cast<size_t>(T * d_model), 50 + static_cast<uint32_t>(T));
      std::vector<float> g(static_cast<size_t>(T * d_ff)), u(g.size()), want(x.size()), got(x);
      const WeightMatrix* ws[] = {&gate, &up};
      const Floats ys[] = {g.data(), u.data()};
      be->matmul_same_input(ws, x.data(), T, ys);
      be->swiglu(g.data(), u.data(), T * d_ff, g.data());
      be->matmul(down, g.data(), T, want.data());
      be->feed_forward(gate, up, down, got.data(), T, got.data(), g.data(), u.data());  // out = x
      EXPECT_TRUE(same_bits(got, want));
    }
  }
}

}  // namespace
}  // namespace duet::cpu
