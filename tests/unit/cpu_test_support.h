// Shared by the CPU kernel tests: the ISA paths, random activations and weights stored like
// GGUF tensors at awkward addresses, and a bit-for-bit comparison of results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "gguf/ggml_type.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu::test {

constexpr double kU = 1.0 / (1 << 24);
// The paths of this build's architecture (x86-64 or AArch64), scalar first.
inline const std::vector<CpuIsa> kAllIsas = all_cpu_isas();

inline std::string isa_param_name(CpuIsa isa) { return cpu_isa_name(isa); }

// Normal values with a few 8× outliers, so block scales differ from block to block.
inline std::vector<float> random_activations(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> pick(0, 49);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng) * (pick(rng) == 0 ? 8.0f : 1.0f);
  return v;
}

// A weight matrix stored like a GGUF tensor, but at an odd address and with padding
// between rows (row_bytes > the natural size), filled with garbage a kernel must not read.
struct TestWeights {
  GgmlType type;
  int64_t rows, cols;
  size_t row_bytes;
  std::vector<uint8_t> storage;
  size_t offset;
  const uint8_t* data() const { return storage.data() + offset; }
  const uint8_t* row(int64_t r) const { return data() + r * row_bytes; }
};

// Offsets of the fp16 scales inside a block; every other byte is a free code byte.
struct ScaleFields {
  int d, dmin;  // -1: absent
};
inline ScaleFields scale_fields(GgmlType type) {
  switch (type) {
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
      return {0, -1};
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
      return {0, 2};
    case GgmlType::Q6_K:
      return {static_cast<int>(offsetof(BlockQ6_K, d)), -1};
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
      return {0, 2};  // d, m
    case GgmlType::Q5_0:
    case GgmlType::IQ4_NL:
    case GgmlType::IQ4_XS:
      return {0, -1};
    case GgmlType::Q2_K:
      return {static_cast<int>(offsetof(BlockQ2_K, d)),
              static_cast<int>(offsetof(BlockQ2_K, dmin))};
    case GgmlType::Q3_K:
      return {static_cast<int>(offsetof(BlockQ3_K, d)), -1};
    default:
      return {-1, -1};
  }
}

inline TestWeights make_weights(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto& tr = ggml_traits(type);
  const bool blocks = tr.block_elems > 1;
  // Keep element alignment for plain types (ref reads them through typed pointers).
  const size_t pad = blocks ? 7 : static_cast<size_t>(tr.block_bytes) * 3;
  const size_t offset = blocks ? 1 : static_cast<size_t>(tr.block_bytes);
  TestWeights w{type, rows, cols, ggml_row_bytes(type, cols) + pad, {}, offset};
  w.storage.assign(offset + rows * w.row_bytes, 0xA5);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> log_scale(-10.0f, -6.0f);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* p = w.storage.data() + offset + r * w.row_bytes;
    if (!blocks) {
      for (int64_t c = 0; c < cols; ++c) {
        const float v = normal(rng);
        const uint16_t h = type == GgmlType::F16 ? float_to_fp16(v) : float_to_bf16(v);
        if (type == GgmlType::F32)
          std::memcpy(p + 4 * c, &v, 4);
        else
          std::memcpy(p + 2 * c, &h, 2);
      }
      continue;
    }
    // Random bytes are valid codes and scales for every block format; only the fp16
    // super-scales get sane magnitudes (and random signs, which the formats allow).
    const size_t bytes = ggml_row_bytes(type, cols);
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(byte(rng));
    const ScaleFields f = scale_fields(type);
    for (size_t b = 0; b < bytes / tr.block_bytes; ++b) {
      for (int at : {f.d, f.dmin}) {
        if (at < 0) continue;
        const float s = std::exp2(log_scale(rng)) * (byte(rng) & 1 ? -1.0f : 1.0f);
        const uint16_t h = float_to_fp16(s);
        std::memcpy(p + b * tr.block_bytes + at, &h, 2);
      }
    }
  }
  return w;
}

inline std::vector<float> random_uniform(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// The same floats bit for bit (== would take −0 for +0), with the first difference named.
inline ::testing::AssertionResult same_bits(const std::vector<float>& got,
                                            const std::vector<float>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << "at " << i << ": " << got[i] << " against " << want[i];
  return ::testing::AssertionSuccess();
}

}  // namespace duet::cpu::test
