#include "backend/vulkan/vulkan_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "backend/vulkan/vk_buffer.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_runner.h"
#include "gguf/ggml_type.h"

namespace duet {
namespace {

using vk::Buffer;
using vk::Groups;

// Push constants, as the shaders declare them (src/kernels/vulkan/*.comp).
struct MatmulPush {
  uint32_t rows, cols, row_bytes, n_tokens;
};
struct GetRowsPush {
  uint32_t cols, row_bytes, n;
};
struct RmsnormPush {
  uint32_t rows, dim;
  float eps;
};
struct RopePush {
  uint32_t n_tokens, n_heads, head_dim;
};
struct CountPush {
  uint32_t n;
};
struct AttentionPush {
  uint32_t n_tokens, n_head, n_head_kv, head_dim, block_size, block_stride, head_stride, pos_stride;
  float scale;
};

constexpr uint32_t kGroupSize = 64;  // every shader's local_size_x

// The variant suffix of a shader for a stored type ("q8_0"), or nullptr.
const char* type_suffix(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
      return "f32";
    case GgmlType::F16:
      return "f16";
    case GgmlType::BF16:
      return "bf16";
    case GgmlType::Q8_0:
      return "q8_0";
    case GgmlType::Q4_0:
      return "q4_0";
    case GgmlType::Q4_K:
      return "q4_k";
    case GgmlType::Q5_K:
      return "q5_k";
    case GgmlType::Q6_K:
      return "q6_k";
    default:
      return nullptr;
  }
}

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::unique_ptr<vk::Context> ctx)
      : ctx_(std::move(ctx)), kernels_(*ctx_) {}

  Status init() {
    auto runner = vk::Runner::create(*ctx_);
    if (!runner) return runner.status();
    runner_ = std::move(runner.value());
    return Status::ok();
  }

  std::string name() const override { return "vulkan (" + ctx_->info().name + ")"; }

  Status status() const override { return error_; }

  bool prepare_weights(const WeightMatrix& w) override { return weights(w) != nullptr; }

  void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) override {
    const Buffer* wb = weights(w);
    const char* suffix = type_suffix(w.type);
    if (!wb || !suffix) return fail("matmul: no device copy of " + w.name);
    const size_t x_bytes = sizeof(float) * static_cast<size_t>(n_tokens * w.cols);
    const size_t y_bytes = sizeof(float) * static_cast<size_t>(n_tokens * w.rows);
    Buffer& xb = stage(0, x_bytes);
    Buffer& yb = stage(1, y_bytes);
    std::memcpy(xb.mapped(), x, x_bytes);
    const MatmulPush push{u32(w.rows), u32(w.cols), u32(w.row_bytes), u32(n_tokens)};
    run(std::string("matmul_") + suffix, {wb, &xb, &yb}, &push, sizeof push,
        Groups::spread(static_cast<uint64_t>(w.rows)));
    std::memcpy(y, yb.mapped(), y_bytes);
  }

  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, float* out) override {
    const Buffer* tb = weights(table);
    const char* suffix = type_suffix(table.type);
    if (!tb || !suffix) return fail("get_rows: no device copy of " + table.name);
    const size_t out_bytes = sizeof(float) * static_cast<size_t>(n * table.cols);
    Buffer& ib = stage(0, sizeof(int32_t) * static_cast<size_t>(n));
    Buffer& ob = stage(1, out_bytes);
    std::memcpy(ib.mapped(), ids, sizeof(int32_t) * static_cast<size_t>(n));
    const GetRowsPush push{u32(table.cols), u32(table.row_bytes), u32(n)};
    run(std::string("get_rows_") + suffix, {tb, &ib, &ob}, &push, sizeof push,
        Groups::spread(static_cast<uint64_t>(n)));
    std::memcpy(out, ob.mapped(), out_bytes);
  }

  void rmsnorm(const float* x, const float* w, int64_t rows, int64_t dim, float eps,
               float* y) override {
    const size_t bytes = sizeof(float) * static_cast<size_t>(rows * dim);
    Buffer& xb = stage(0, bytes);
    Buffer& wb = stage(1, sizeof(float) * static_cast<size_t>(dim));
    std::memcpy(xb.mapped(), x, bytes);
    std::memcpy(wb.mapped(), w, sizeof(float) * static_cast<size_t>(dim));
    const RmsnormPush push{u32(rows), u32(dim), eps};
    // In place on the device: y is bound to x's buffer.
    run("rmsnorm", {&xb, &wb, &xb}, &push, sizeof push,
        Groups::spread(static_cast<uint64_t>(rows)));
    std::memcpy(y, xb.mapped(), bytes);
  }

  void rope_neox(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                 const int32_t* positions, const double* inv_freq, double mscale) override {
    // The angles in double on the host, as the reference computes them: a float angle
    // pos · inv_freq loses its low bits at long positions.
    const int64_t half = head_dim / 2;
    cos_sin_.resize(static_cast<size_t>(n_tokens * half * 2));
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double a = static_cast<double>(positions[t]) * inv_freq[i];
        cos_sin_[(t * half + i) * 2] = static_cast<float>(std::cos(a) * mscale);
        cos_sin_[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(a) * mscale);
      }
    const size_t bytes = sizeof(float) * static_cast<size_t>(n_tokens * n_heads * head_dim);
    Buffer& xb = stage(0, bytes);
    Buffer& cb = stage(1, sizeof(float) * cos_sin_.size());
    std::memcpy(xb.mapped(), x, bytes);
    std::memcpy(cb.mapped(), cos_sin_.data(), sizeof(float) * cos_sin_.size());
    const RopePush push{u32(n_tokens), u32(n_heads), u32(head_dim)};
    run("rope_neox", {&xb, &cb}, &push, sizeof push,
        Groups::spread(elementwise_groups(static_cast<uint64_t>(n_tokens * n_heads * half))));
    std::memcpy(x, xb.mapped(), bytes);
  }

  void attention_paged(std::span<const PagedAttentionCall> calls,
                       const AttentionShape& s) override {
    for (const PagedAttentionCall& c : calls) attention_one(c, s);
  }

  void swiglu(const float* gate, const float* up, int64_t n, float* out) override {
    const size_t bytes = sizeof(float) * static_cast<size_t>(n);
    Buffer& gb = stage(0, bytes);
    Buffer& ub = stage(1, bytes);
    std::memcpy(gb.mapped(), gate, bytes);
    std::memcpy(ub.mapped(), up, bytes);
    const CountPush push{u32(n)};
    run("swiglu", {&gb, &ub, &gb}, &push, sizeof push,
        Groups::spread(elementwise_groups(static_cast<uint64_t>(n))));
    std::memcpy(out, gb.mapped(), bytes);
  }

  void add_inplace(float* x, const float* y, int64_t n) override {
    const size_t bytes = sizeof(float) * static_cast<size_t>(n);
    Buffer& xb = stage(0, bytes);
    Buffer& yb = stage(1, bytes);
    std::memcpy(xb.mapped(), x, bytes);
    std::memcpy(yb.mapped(), y, bytes);
    const CountPush push{u32(n)};
    run("add", {&xb, &yb}, &push, sizeof push,
        Groups::spread(elementwise_groups(static_cast<uint64_t>(n))));
    std::memcpy(x, xb.mapped(), bytes);
  }

 private:
  static uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
  static uint64_t elementwise_groups(uint64_t n) { return (n + kGroupSize - 1) / kGroupSize; }

  // One sequence: the blocks its positions use are gathered into a compact copy (block i of
  // the copy = block_table[i]), with the same strides, and the shader reads that.
  void attention_one(const PagedAttentionCall& c, const AttentionShape& s) {
    const char* suffix = type_suffix(c.kv.dtype);
    if (!suffix) return fail("attention: unsupported KV type");
    int32_t last = 0;
    for (int64_t t = 0; t < c.n_tokens; ++t) last = std::max(last, c.positions[t]);
    const int64_t n_blocks = last / c.kv.block_size + 1;
    const size_t block_bytes = c.kv.block_stride;  // whole blocks, as KvStorage keeps them
    Buffer& kb = stage(0, block_bytes * static_cast<size_t>(n_blocks));
    Buffer& vb = stage(1, block_bytes * static_cast<size_t>(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) {
      const size_t from = static_cast<size_t>(c.kv.block_table[b]) * block_bytes;
      std::memcpy(kb.mapped() + b * block_bytes, c.kv.k + from, block_bytes);
      std::memcpy(vb.mapped() + b * block_bytes, c.kv.v + from, block_bytes);
    }
    const size_t q_bytes = sizeof(float) * static_cast<size_t>(c.n_tokens * s.n_head * s.head_dim);
    Buffer& qb = stage(2, q_bytes);
    Buffer& tb = stage(3, sizeof(int32_t) * static_cast<size_t>(n_blocks));
    Buffer& pb = stage(4, sizeof(int32_t) * static_cast<size_t>(c.n_tokens));
    Buffer& ob = stage(5, q_bytes);
    std::memcpy(qb.mapped(), c.q, q_bytes);
    auto* table = reinterpret_cast<int32_t*>(tb.mapped());
    for (int64_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(b);
    std::memcpy(pb.mapped(), c.positions, sizeof(int32_t) * static_cast<size_t>(c.n_tokens));
    const AttentionPush push{u32(c.n_tokens),       u32(s.n_head),        u32(s.n_head_kv),
                             u32(s.head_dim),       u32(c.kv.block_size), u32(c.kv.block_stride),
                             u32(c.kv.head_stride), u32(c.kv.pos_stride), s.scale};
    Groups g;
    g.x = u32(s.n_head);
    g.y = u32(c.n_tokens);
    run(std::string("attention_") + suffix, {&qb, &kb, &vb, &tb, &pb, &ob}, &push, sizeof push, g);
    std::memcpy(c.out, ob.mapped(), q_bytes);
  }

  // The device copy of a matrix, uploaded on first use (prepare_weights at load). Matrices
  // are known by where their bytes are and what they hold: a model's stay in place.
  using WeightKey = std::tuple<const uint8_t*, GgmlType, int64_t, int64_t>;
  const Buffer* weights(const WeightMatrix& w) {
    const WeightKey key{w.data, w.type, w.rows, w.cols};
    if (auto it = weights_.find(key); it != weights_.end()) return &it->second;
    if (!type_suffix(w.type)) {
      fail(w.name + ": the Vulkan backend does not compute with " + ggml_type_name(w.type));
      return nullptr;
    }
    const size_t bytes = static_cast<size_t>(w.rows) * w.row_bytes;
    auto b = Buffer::create(*ctx_, bytes, vk::Memory::kDevice);
    if (!b) {
      fail(w.name + ": " + b.message());
      return nullptr;
    }
    if (b->mapped()) {
      std::memcpy(b->mapped(), w.data, bytes);
    } else {
      // Through a host-visible staging buffer, in pieces of at most 64 MiB.
      constexpr size_t kPiece = size_t{64} << 20;
      for (size_t at = 0; at < bytes; at += kPiece) {
        const size_t n = std::min(kPiece, bytes - at);
        Buffer& st = stage(0, n);
        std::memcpy(st.mapped(), w.data + at, n);
        if (!record(runner_->begin())) return nullptr;
        runner_->copy(st, 0, *b, at, n);
        if (!record(runner_->submit_and_wait())) return nullptr;
      }
    }
    return &weights_.emplace(key, std::move(b.value())).first->second;
  }

  // Host-visible buffer number `slot`, at least `bytes` long (grown by doubling, so that a
  // steady shape allocates nothing).
  Buffer& stage(size_t slot, size_t bytes) {
    Buffer& b = stages_.at(slot);
    if (b && b.size() >= bytes) return b;
    size_t size = b ? b.size() : 4096;
    while (size < bytes) size *= 2;
    auto nb = Buffer::create(*ctx_, size, vk::Memory::kHost);
    if (!nb) fatal(nb.message());
    b = std::move(nb.value());
    return b;
  }

  void run(const std::string& kernel, std::initializer_list<const Buffer*> buffers,
           const void* push, uint32_t push_bytes, Groups groups) {
    auto k = kernels_.get(kernel, static_cast<uint32_t>(buffers.size()), push_bytes);
    if (!k) fatal(k.message());
    Status s = runner_->begin();
    if (s) s = runner_->dispatch(**k, buffers, push, groups);
    if (s) s = runner_->submit_and_wait();
    if (!s) fatal(kernel + ": " + s.message());
  }

  bool record(const Status& s) {
    if (!s) fail(s.message());
    return s.is_ok();
  }

  // A matrix the device cannot hold is reported by status() after the load.
  void fail(const std::string& message) {
    if (error_) error_ = Status::error(message);
  }

  // The device failed in the middle of a step (out of memory for staging, a lost device):
  // the host-pointer seam has no way to report it, and the step's results would be wrong.
  [[noreturn]] static void fatal(const std::string& message) {
    std::fprintf(stderr, "duet: Vulkan backend: %s\n", message.c_str());
    std::abort();
  }

  std::unique_ptr<vk::Context> ctx_;
  vk::Kernels kernels_;
  std::unique_ptr<vk::Runner> runner_;
  std::map<WeightKey, Buffer> weights_;
  std::array<Buffer, 6> stages_;  // fixed, so that references to them stay valid
  std::vector<float> cos_sin_;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_vulkan_backend(int device_index, vk::DeviceInfo* info) {
  auto ctx = vk::Context::create(device_index);
  if (!ctx) return ctx.status();
  if (info) *info = (*ctx)->info();
  auto be = std::make_unique<VulkanBackend>(std::move(ctx.value()));
  if (Status s = be->init(); !s) return s;
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace duet
