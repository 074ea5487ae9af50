// Every Vulkan shader against the reference backend, on whatever Vulkan device the machine
// has (lavapipe in CI), over shapes that include ragged ones: rows not a multiple of the
// workgroup, token counts across the matmul's tile of 8, float rows of odd length, GQA,
// several sequences over scattered KV blocks. The reference accumulates in double, the
// shaders in float, so results agree to float rounding, not bit for bit (dequantization,
// checked through get_rows, is exact).
//
// A machine without any Vulkan device fails here, saying so: CI must not skip the GPU tests.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/ref_backend.h"
#include "backend/vulkan/vk_buffer.h"
#include "backend/vulkan/vk_context.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_runner.h"
#include "backend/vulkan/vulkan_backend.h"
#include "gguf/gguf_file.h"
#include "kernels/ref/quantize.h"
#include "kv/kv_storage.h"
#include "support/test_util.h"

namespace duet {
namespace {

class VulkanKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto be = make_vulkan_backend();
    if (be) {
      backend_ = std::move(be.value()).release();
    } else {
      error_ = be.message();
    }
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(backend_, nullptr)
        << "no Vulkan device to test the GPU backend on: " << error_
        << " (scripts/setup installs Mesa's lavapipe, a Vulkan device on the CPU)";
  }
  Backend& gpu() { return *backend_; }

  static Backend* backend_;
  static std::string error_;
};
Backend* VulkanKernels::backend_ = nullptr;
std::string VulkanKernels::error_;

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// |got - want| <= tol * (1 + |want|) everywhere.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), tol * (1 + std::fabs(want[i])))
        << what << ": element " << i << " is " << got[i] << ", want " << want[i];
}

// A matrix of `rows` rows of `cols` values stored as `type`, owning its bytes.
struct OwnedMatrix {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

OwnedMatrix quantized_matrix(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  OwnedMatrix m;
  const auto values = random_floats(static_cast<size_t>(rows * cols), seed);
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_TRUE(ref::quantize_row(type, values.data() + r * cols, cols, m.bytes).is_ok());
  m.w = {std::string("test_") + ggml_type_name(type),
         type,
         rows,
         cols,
         ggml_row_bytes(type, cols),
         m.bytes.data()};
  return m;
}

// The K-quant types have no quantizer here: their matrices come from the golden files,
// which llama.cpp's quantizer wrote. The first `rows` rows of the first tensor of `type`.
struct FileMatrix {
  std::shared_ptr<GgufModelFile> file;
  WeightMatrix w;
};

FileMatrix file_matrix(const std::string& model, GgmlType type, int64_t rows) {
  FileMatrix m;
  auto f = GgufModelFile::open(test::golden_dir() + "/models/" + model);
  EXPECT_TRUE(f.is_ok()) << f.message();
  if (!f) return m;
  m.file = *f;
  for (const GgufTensorInfo& t : m.file->gguf().tensors()) {
    if (t.type != type || t.n_dims != 2) continue;
    m.w = {t.name, type, std::min<int64_t>(rows, t.ne[1]), t.ne[0], ggml_row_bytes(type, t.ne[0]),
           t.data};
    return m;
  }
  ADD_FAILURE() << model << " has no 2-D " << ggml_type_name(type) << " tensor";
  return m;
}

void check_matmul(Backend& gpu, const WeightMatrix& w, const std::string& what,
                  std::vector<int64_t> token_counts = {1, 3, 8, 11, 16, 45, 70}) {
  auto ref = make_ref_backend();
  for (int64_t n_tokens : token_counts) {
    const auto x = random_floats(static_cast<size_t>(n_tokens * w.cols), 100 + n_tokens);
    std::vector<float> want(static_cast<size_t>(n_tokens * w.rows)), got(want.size());
    ref->matmul(w, x.data(), n_tokens, want.data());
    gpu.matmul(w, x.data(), n_tokens, got.data());
    expect_close(got, want, 2e-5 * std::sqrt(static_cast<double>(w.cols)),
                 what + " × " + std::to_string(n_tokens) + " tokens");
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_F(VulkanKernels, MatmulOfEveryQuantizableTypeMatchesReference) {
  struct Shape {
    int64_t rows, cols;
  };
  // Kept to the end: the backend knows a matrix by its address, which a freed one's
  // successor could take.
  std::vector<OwnedMatrix> matrices;
  for (GgmlType type :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    const bool blocks = ggml_traits(type).block_elems > 1;
    // Float rows of any length (odd, below a group of 8, longer than the workgroup's
    // stride); block rows of whole blocks.
    const std::vector<Shape> shapes = blocks ? std::vector<Shape>{{1, 32}, {67, 96}, {130, 512}}
                                             : std::vector<Shape>{{1, 5}, {67, 13}, {130, 700}};
    for (const Shape& s : shapes) {
      matrices.push_back(quantized_matrix(type, s.rows, s.cols, 7));
      check_matmul(gpu(), matrices.back().w,
                   std::string(ggml_type_name(type)) + " " + std::to_string(s.rows) + "×" +
                       std::to_string(s.cols));
      if (HasFatalFailure()) return;
    }
  }
}

// A tensor of each type that only quantizers write well, taken from the golden files.
constexpr std::pair<const char*, GgmlType> kFileTypes[] = {
    {"kq-q4_k_m.gguf", GgmlType::Q4_K},   {"kq-q5_k_m.gguf", GgmlType::Q5_K},
    {"kq-q6_k.gguf", GgmlType::Q6_K},     {"kq-q4_1.gguf", GgmlType::Q4_1},
    {"kq-q5_0.gguf", GgmlType::Q5_0},     {"kq-q5_1.gguf", GgmlType::Q5_1},
    {"kq-q2_k.gguf", GgmlType::Q2_K},     {"kq-q3_k_m.gguf", GgmlType::Q3_K},
    {"kq-iq4_nl.gguf", GgmlType::IQ4_NL}, {"kq-iq4_xs.gguf", GgmlType::IQ4_XS}};

TEST_F(VulkanKernels, MatmulOfKQuantFileRowsMatchesReference) {
  for (const auto& [file, type] : kFileTypes) {
    const FileMatrix m = file_matrix(file, type, 67);
    ASSERT_NE(m.w.data, nullptr);
    check_matmul(gpu(), m.w, std::string(file) + " " + m.w.name);
    if (HasFatalFailure()) return;
  }
}

// A matrix larger than the device's largest storage buffer (128 MiB on lavapipe) is held in
// pieces of rows: matmul writes each piece's columns, get_rows finds each id's piece.
TEST_F(VulkanKernels, MatrixLargerThanOneBufferIsSplitIntoPieces) {
  auto devices = vk::list_devices();
  ASSERT_TRUE(devices.is_ok() && !devices->empty());
  const uint64_t range = (*devices)[0].max_storage_buffer_range;
  if (range > (uint64_t{512} << 20))
    GTEST_SKIP() << "this device binds " << (range >> 20) << " MiB at once: too much to test here";
  // F16 rows of 1024 values, enough of them for two pieces and a bit.
  const int64_t cols = 1024;
  const int64_t rows = static_cast<int64_t>(range / (cols * 2)) + 300;
  OwnedMatrix m;
  m.bytes.resize(static_cast<size_t>(rows * cols * 2));
  std::mt19937 rng(21);
  auto* h = reinterpret_cast<uint16_t*>(m.bytes.data());
  for (size_t i = 0; i < m.bytes.size() / 2; ++i)
    h[i] =
        static_cast<uint16_t>(0x3000 + rng() % 0x0C00) | static_cast<uint16_t>((rng() & 1) << 15);
  m.w = {"big", GgmlType::F16, rows, cols, static_cast<size_t>(cols * 2), m.bytes.data()};
  check_matmul(gpu(), m.w, "F16 " + std::to_string(rows) + "×1024 in pieces", {2});
  if (HasFatalFailure()) return;
  auto ref = make_ref_backend();
  const int32_t boundary = static_cast<int32_t>(range / (cols * 2));
  const std::vector<int32_t> ids = {0, boundary - 1, boundary, static_cast<int32_t>(rows - 1), 5};
  std::vector<float> want(ids.size() * cols), got(want.size());
  ref->get_rows(m.w, ids.data(), static_cast<int64_t>(ids.size()), want.data());
  gpu().get_rows(m.w, ids.data(), static_cast<int64_t>(ids.size()), got.data());
  EXPECT_EQ(got, want);
}

// Decoding is exact: the shader's get_rows equals the reference bit for bit.
TEST_F(VulkanKernels, GetRowsDecodesEveryTypeExactly) {
  std::vector<FileMatrix> files;
  std::vector<OwnedMatrix> owned;
  std::vector<WeightMatrix> tables;
  for (GgmlType type :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    owned.push_back(quantized_matrix(type, 40, 64, 3));
    tables.push_back(owned.back().w);
  }
  // Float rows of odd length: padded to whole words on the device (weight_layout.h).
  for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
    owned.push_back(quantized_matrix(type, 40, 13, 5));
    tables.push_back(owned.back().w);
  }
  for (const auto& [file, type] : kFileTypes) {
    files.push_back(file_matrix(file, type, 40));
    ASSERT_NE(files.back().w.data, nullptr);
    tables.push_back(files.back().w);
  }
  auto ref = make_ref_backend();
  const std::vector<int32_t> ids = {0, 39, 7, 7, 21};
  for (const WeightMatrix& t : tables) {
    std::vector<float> want(ids.size() * static_cast<size_t>(t.cols)), got(want.size());
    ref->get_rows(t, ids.data(), static_cast<int64_t>(ids.size()), want.data());
    gpu().get_rows(t, ids.data(), static_cast<int64_t>(ids.size()), got.data());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << ggml_type_name(t.type) << " element " << i;
  }
}

TEST_F(VulkanKernels, RmsnormMatchesReference) {
  auto ref = make_ref_backend();
  for (const auto& [rows, dim] : {std::pair<int64_t, int64_t>{1, 64}, {5, 128}, {3, 1000}}) {
    const auto x = random_floats(static_cast<size_t>(rows * dim), 11, 3.0f);
    const auto w = random_floats(static_cast<size_t>(dim), 12);
    std::vector<float> want(x.size()), got(x);
    ref->rmsnorm(x.data(), w.data(), rows, dim, 1e-6f, want.data());
    gpu().rmsnorm(got.data(), w.data(), rows, dim, 1e-6f, got.data());  // in place
    expect_close(got, want, 1e-5, "rmsnorm " + std::to_string(rows) + "×" + std::to_string(dim));
  }
}

TEST_F(VulkanKernels, RopeMatchesReferenceAtLongPositions) {
  auto ref = make_ref_backend();
  const int64_t n_tokens = 4, n_heads = 3, head_dim = 64;
  std::vector<double> inv_freq(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i)
    inv_freq[i] = std::pow(1000000.0, -2.0 * static_cast<double>(i) / head_dim);
  const std::vector<int32_t> positions = {0, 1, 4095, 40000};
  auto want = random_floats(static_cast<size_t>(n_tokens * n_heads * head_dim), 13);
  auto got = want;
  ref->rope_neox(want.data(), n_tokens, n_heads, head_dim,
                 {positions.data(), inv_freq.data(), 1.1});
  gpu().rope_neox(got.data(), n_tokens, n_heads, head_dim,
                  {positions.data(), inv_freq.data(), 1.1});
  expect_close(got, want, 1e-5, "rope");
}

TEST_F(VulkanKernels, SwigluAndAddMatchReference) {
  auto ref = make_ref_backend();
  const int64_t n = 1000;
  const auto gate = random_floats(n, 14, 4.0f), up = random_floats(n, 15);
  std::vector<float> want(n), got(n);
  ref->swiglu(gate.data(), up.data(), n, want.data());
  gpu().swiglu(gate.data(), up.data(), n, got.data());
  expect_close(got, want, 1e-6, "swiglu");
  auto x_want = gate, x_got = gate;
  ref->add_inplace(x_want.data(), up.data(), n);
  gpu().add_inplace(x_got.data(), up.data(), n);
  expect_close(x_got, x_want, 0, "add");
}

// Several sequences, each over its own scattered blocks of a real KvStorage, in every KV
// type: a decode token deep in its context, a prefill chunk that starts mid-block, and a
// sequence that fits in part of one block. GQA with 4 query heads per KV head. The same
// keys and values go through the reference's store_kv into a host cache and through the
// kv_store shader into a device cache; attention over the device cache (one dispatch for
// the step) and over the host cache (attention_paged) must both match the reference.
TEST_F(VulkanKernels, StoredKvAndPagedAttentionMatchReferenceForEveryKvType) {
  struct {
    int64_t n_head = 8, n_head_kv = 2, head_dim = 64;
  } cfg;
  const KvShape kv_shape{1, cfg.n_head_kv, cfg.head_dim};
  const int64_t block_size = 16, n_blocks = 12, n_slots = n_blocks * block_size;
  const AttentionShape shape{cfg.n_head, cfg.n_head_kv, cfg.head_dim, 0.125f};
  auto ref = make_ref_backend();
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0}) {
    SCOPED_TRACE(ggml_type_name(type));
    auto host_kv = KvStorage::create(*ref, kv_shape, n_blocks, block_size, type);
    auto gpu_kv = KvStorage::create(gpu(), kv_shape, n_blocks, block_size, type);
    ASSERT_TRUE(host_kv.is_ok()) << host_kv.message();
    ASSERT_TRUE(gpu_kv.is_ok()) << gpu_kv.message();
    // Every slot of the cache gets values, written in a scrambled order of slots.
    const int64_t width = cfg.n_head_kv * cfg.head_dim;
    const auto k = random_floats(static_cast<size_t>(n_slots * width), 21, 3.0f);
    const auto v = random_floats(static_cast<size_t>(n_slots * width), 22, 3.0f);
    std::vector<int32_t> slots(static_cast<size_t>(n_slots));
    for (int64_t t = 0; t < n_slots; ++t) slots[t] = static_cast<int32_t>((t * 37 + 5) % n_slots);
    const StepLayout writes{{}, slots, {}, {}};
    ref->store_kv((*host_kv)->layer(0), writes, k.data(), v.data());
    gpu().store_kv((*gpu_kv)->layer(0), writes, k.data(), v.data());

    const std::vector<std::vector<int32_t>> tables = {{5, 0, 9, 3, 11}, {2, 7}, {10}};
    const std::vector<std::vector<int32_t>> positions = {{70}, {21, 22, 23, 24, 25}, {0, 1, 2}};
    std::vector<int32_t> all_tables, all_positions;
    std::vector<StepChunk> chunks;
    for (size_t s = 0; s < tables.size(); ++s) {
      chunks.push_back(
          {static_cast<int64_t>(all_positions.size()), static_cast<int64_t>(positions[s].size()),
           static_cast<int64_t>(all_tables.size()), static_cast<int64_t>(tables[s].size())});
      all_tables.insert(all_tables.end(), tables[s].begin(), tables[s].end());
      all_positions.insert(all_positions.end(), positions[s].begin(), positions[s].end());
    }
    const StepLayout step{all_positions, {}, all_tables, chunks};
    const int64_t n_tokens = static_cast<int64_t>(all_positions.size());
    const size_t n = static_cast<size_t>(n_tokens * cfg.n_head * cfg.head_dim);
    const auto q = random_floats(n, 50);
    std::vector<float> want(n), on_device(n), from_host(n);
    ref->attention((*host_kv)->layer(0), step, q.data(), want.data(), shape);
    gpu().attention((*gpu_kv)->layer(0), step, q.data(), on_device.data(), shape);
    expect_close(on_device, want, 1e-5, "device cache");
    std::vector<PagedAttentionCall> calls;
    for (const StepChunk& c : chunks) {
      const int64_t at = c.first * cfg.n_head * cfg.head_dim;
      calls.push_back({q.data() + at, (*host_kv)->view(0, all_tables.data() + c.table_start),
                       all_positions.data() + c.first, c.n_tokens, from_host.data() + at});
    }
    gpu().attention_paged(calls, shape);
    expect_close(from_host, want, 1e-5, "host cache");
  }
}

// Each layer's K and V is one device buffer: a cache larger than the device binds at once
// is refused with the limit named, and max_blocks is exactly what fits.
TEST_F(VulkanKernels, KvCacheIsLimitedToOneBufferPerLayer) {
  const KvShape shape{2, 8, 128};
  const int64_t most = KvStorage::max_blocks(gpu(), shape, 16, GgmlType::F16);
  ASSERT_GT(most, 0);
  EXPECT_EQ(static_cast<size_t>(most) * 16 * 8 * 128 * 2 <= gpu().max_buffer_bytes(), true);
  auto too_many = KvStorage::create(gpu(), shape, most + 1, 16, GgmlType::F16);
  ASSERT_FALSE(too_many.is_ok());
  EXPECT_NE(too_many.message().find("at most " + std::to_string(most)), std::string::npos)
      << too_many.message();
  EXPECT_TRUE(
      KvStorage::create(gpu(), shape, std::min<int64_t>(most, 64), 16, GgmlType::F16).is_ok());
}

// A list of commands equal to one run before (same kernels, buffers, ranges and push
// constants; only the data differs, as from one decode step to the next) runs the same
// command buffer again; a different list is recorded, and a destroyed buffer makes the
// runner forget what it kept (a recording may name the buffer's handle).
TEST(VulkanRunner, AnEqualListRunsItsRecordingAgain) {
  auto ctx = vk::Context::create(-1);
  ASSERT_TRUE(ctx.is_ok()) << ctx.message();
  vk::Kernels kernels(**ctx);
  auto runner = vk::Runner::create(**ctx);
  ASSERT_TRUE(runner.is_ok()) << runner.message();
  constexpr uint32_t n = 1000;
  auto x = vk::Buffer::create(**ctx, n * 4, vk::Memory::kHost);
  auto y = vk::Buffer::create(**ctx, n * 4, vk::Memory::kHost);
  ASSERT_TRUE(x.is_ok() && y.is_ok());
  auto add = kernels.get("add", 2, sizeof(uint32_t));
  ASSERT_TRUE(add.is_ok()) << add.message();
  vk::Runner& r = **runner;
  auto run = [&](float a, float b, uint32_t count) {
    auto* xs = reinterpret_cast<float*>(x->mapped());
    auto* ys = reinterpret_cast<float*>(y->mapped());
    for (uint32_t i = 0; i < n; ++i) {
      xs[i] = a;
      ys[i] = b;
    }
    r.begin();
    ASSERT_TRUE(
        r.dispatch(**add, {&*x, &*y}, &count, vk::Groups::spread((count + 63) / 64)).is_ok());
    r.barrier();
    ASSERT_TRUE(r.submit_and_wait().is_ok());
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(xs[i], i < count ? a + b : a) << i;
  };
  run(1, 2, n);
  EXPECT_EQ(r.recorded(), 1u);
  EXPECT_EQ(r.reused(), 0u);
  run(3, 4, n);  // new data, same list
  EXPECT_EQ(r.recorded(), 1u);
  EXPECT_EQ(r.reused(), 1u);
  run(5, 6, n / 2);  // other push constants
  EXPECT_EQ(r.recorded(), 2u);
  run(7, 8, n);
  EXPECT_EQ(r.reused(), 2u);
  { auto gone = vk::Buffer::create(**ctx, 64, vk::Memory::kHost); }
  run(9, 10, n);
  EXPECT_EQ(r.recorded(), 3u);
  EXPECT_EQ(r.reused(), 2u);
}

TEST(VulkanDevices, ListingNamesEachDevice) {
  auto devices = vk::list_devices();
  ASSERT_TRUE(devices.is_ok()) << devices.message();
  ASSERT_FALSE(devices->empty()) << "no Vulkan device (scripts/setup installs lavapipe)";
  for (const vk::DeviceInfo& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.api_version, VK_API_VERSION_1_2);
    EXPECT_GT(d.max_storage_buffer_range, 0u);
  }
}

TEST(VulkanDevices, AMissingDeviceIsAnErrorThatSaysSo) {
  auto be = make_vulkan_backend(999);
  ASSERT_FALSE(be.is_ok());
  EXPECT_NE(be.message().find("no Vulkan device 999"), std::string::npos) << be.message();
}

}  // namespace
}  // namespace duet
