// The device layout of weights (backend/vulkan/weight_layout.h): sizes, word alignment, and
// that repacking moves bytes without changing any. The shaders that read it are held to the
// reference by vulkan_kernels_test.cc (matmul and get_rows of every type).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/vulkan/weight_layout.h"

namespace duet::vk {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(VulkanWeightLayout, RowSizesAreWholeWords) {
  EXPECT_EQ(device_row_bytes(GgmlType::Q8_0, 64), 72u);    // 2 blocks of 36
  EXPECT_EQ(device_row_bytes(GgmlType::Q4_0, 64), 40u);    // 2 blocks of 20
  EXPECT_EQ(device_row_bytes(GgmlType::Q6_K, 512), 424u);  // 2 blocks of 212
  EXPECT_EQ(device_row_bytes(GgmlType::Q4_K, 256), 144u);  // as in the file
  EXPECT_EQ(device_row_bytes(GgmlType::Q5_K, 256), 176u);
  EXPECT_EQ(device_row_bytes(GgmlType::Q5_0, 64), 48u);    // 2 blocks of 24
  EXPECT_EQ(device_row_bytes(GgmlType::IQ4_NL, 64), 40u);  // 2 blocks of 20
  EXPECT_EQ(device_row_bytes(GgmlType::Q3_K, 512), 224u);  // 2 blocks of 112
  EXPECT_EQ(device_row_bytes(GgmlType::Q4_1, 64), 40u);    // as in the file
  EXPECT_EQ(device_row_bytes(GgmlType::Q5_1, 64), 48u);
  EXPECT_EQ(device_row_bytes(GgmlType::Q2_K, 256), 84u);
  EXPECT_EQ(device_row_bytes(GgmlType::IQ4_XS, 256), 136u);
  EXPECT_EQ(device_row_bytes(GgmlType::F32, 3), 12u);
  EXPECT_EQ(device_row_bytes(GgmlType::F16, 3), 8u);  // 6 bytes, padded
  EXPECT_EQ(device_row_bytes(GgmlType::BF16, 4), 8u);
  for (GgmlType t :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
        GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q4_1, GgmlType::Q5_0,
        GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_XS})
    EXPECT_EQ(device_row_bytes(t, 768) % 4, 0u) << ggml_type_name(t);
  EXPECT_FALSE(device_layout_differs(GgmlType::Q4_K, 256));
  EXPECT_FALSE(device_layout_differs(GgmlType::F16, 4));
  EXPECT_TRUE(device_layout_differs(GgmlType::F16, 5));
  EXPECT_TRUE(device_layout_differs(GgmlType::Q8_0, 32));
}

// Each block keeps its scale in place and its quants move to the next word; padding is zero.
TEST(VulkanWeightLayout, SmallBlocksGetTheirQuantsOnAWord) {
  const struct {
    GgmlType type;
    size_t file_block, device_block;
  } rows[] = {{GgmlType::Q8_0, 34, 36},
              {GgmlType::Q4_0, 18, 20},
              {GgmlType::IQ4_NL, 18, 20},
              {GgmlType::Q5_0, 22, 24}};
  for (const auto& row : rows) {
    const int64_t cols = 96, n_rows = 3;
    const size_t blocks = 3;
    const std::vector<uint8_t> file = random_bytes(n_rows * blocks * row.file_block, 7);
    std::vector<uint8_t> dev(n_rows * device_row_bytes(row.type, cols), 0xEE);
    to_device_layout(row.type, cols, file.data(), n_rows, dev.data());
    for (size_t b = 0; b < n_rows * blocks; ++b) {
      const uint8_t* f = &file[b * row.file_block];
      const uint8_t* d = &dev[b * row.device_block];
      EXPECT_EQ(d[0], f[0]);
      EXPECT_EQ(d[1], f[1]);
      EXPECT_EQ(d[2], 0);
      EXPECT_EQ(d[3], 0);
      for (size_t k = 2; k < row.file_block; ++k) ASSERT_EQ(d[k + 2], f[k]) << b << " " << k;
    }
  }
}

TEST(VulkanWeightLayout, Q6KAndQ3KBlocksAndOddFloatRowsArePadded) {
  for (const auto& [type, block] :
       {std::pair{GgmlType::Q6_K, size_t{210}}, std::pair{GgmlType::Q3_K, size_t{110}}}) {
    const std::vector<uint8_t> q = random_bytes(2 * 2 * block, 9);  // 2 rows of 512
    std::vector<uint8_t> dev(2 * device_row_bytes(type, 512), 0xEE);
    to_device_layout(type, 512, q.data(), 2, dev.data());
    for (size_t b = 0; b < 4; ++b) {
      for (size_t k = 0; k < block; ++k) ASSERT_EQ(dev[b * (block + 2) + k], q[b * block + k]);
      EXPECT_EQ(dev[b * (block + 2) + block], 0);
      EXPECT_EQ(dev[b * (block + 2) + block + 1], 0);
    }
  }
  const std::vector<uint8_t> f16 = random_bytes(2 * 6, 11);  // 2 rows of 3 halves
  std::vector<uint8_t> out(2 * 8, 0xEE);
  to_device_layout(GgmlType::F16, 3, f16.data(), 2, out.data());
  for (size_t r = 0; r < 2; ++r) {
    for (size_t k = 0; k < 6; ++k) EXPECT_EQ(out[r * 8 + k], f16[r * 6 + k]);
    EXPECT_EQ(out[r * 8 + 6], 0);
    EXPECT_EQ(out[r * 8 + 7], 0);
  }
}

}  // namespace
}  // namespace duet::vk
