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
  uint32_t rows, cols, row_bytes, n_tokens, y_stride, y_offset;
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
  bool prepare_table(const WeightMatrix& table) override { return weights(table) != nullptr; }

  // Tokens go in chunks small enough for one buffer of X and of Y; each chunk runs every
  // piece of the matrix in one submit.
  void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) override {
    const WeightMatrix* ws[] = {&w};
    float* const ys[] = {y};
    matmul_same_input(ws, x, n_tokens, ys);
  }

  // X is copied in once and every product runs in one submit.
  void matmul_same_input(std::span<const WeightMatrix* const> ws, const float* x, int64_t n_tokens,
                         std::span<float* const> ys) override {
    if (ws.size() > kStages - 1) return Backend::matmul_same_input(ws, x, n_tokens, ys);
    for (const WeightMatrix* w : ws) on_device(*w);
    const int64_t cols = ws[0]->cols;
    int64_t widest = cols;
    for (const WeightMatrix* w : ws) widest = std::max(widest, w->rows);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += token_chunk(widest)) {
      const int64_t nt = std::min(token_chunk(widest), n_tokens - t0);
      Buffer& xb = stage_floats(0, nt * cols);
      std::memcpy(xb.mapped(), x + t0 * cols, sizeof(float) * static_cast<size_t>(nt * cols));
      begin();
      for (size_t i = 0; i < ws.size(); ++i)
        record_matmul(*ws[i], xb, stage_floats(1 + i, nt * ws[i]->rows), nt);
      submit();
      for (size_t i = 0; i < ws.size(); ++i)
        std::memcpy(ys[i] + t0 * ws[i]->rows, stages_[1 + i].mapped(),
                    sizeof(float) * static_cast<size_t>(nt * ws[i]->rows));
    }
  }

  // The whole feed-forward in one submit: the n_ff-wide products stay on the device.
  void feed_forward(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down,
                    const float* x, int64_t n_tokens, float* out, float* gate_scratch,
                    float* up_scratch) override {
    (void)gate_scratch;
    (void)up_scratch;
    for (const WeightMatrix* w : {&gate, &up, &down}) on_device(*w);
    const int64_t widest = std::max({gate.rows, gate.cols, down.rows});
    for (int64_t t0 = 0; t0 < n_tokens; t0 += token_chunk(widest)) {
      const int64_t nt = std::min(token_chunk(widest), n_tokens - t0);
      Buffer& xb = stage_floats(0, nt * gate.cols);
      Buffer& gb = stage_floats(1, nt * gate.rows);
      Buffer& ub = stage_floats(2, nt * up.rows);
      Buffer& ob = stage_floats(3, nt * down.rows);
      std::memcpy(xb.mapped(), x + t0 * gate.cols,
                  sizeof(float) * static_cast<size_t>(nt * gate.cols));
      begin();
      record_matmul(gate, xb, gb, nt);
      record_matmul(up, xb, ub, nt);
      runner_->barrier();
      const CountPush push{u32(nt * gate.rows)};
      dispatch("swiglu", {&gb, &ub, &gb}, &push, sizeof push,
               Groups::spread(elementwise_groups(static_cast<uint64_t>(nt * gate.rows))));
      runner_->barrier();
      record_matmul(down, gb, ob, nt);
      submit();
      std::memcpy(out + t0 * down.rows, ob.mapped(),
                  sizeof(float) * static_cast<size_t>(nt * down.rows));
    }
  }

  // One submit per piece of the table: ids outside the piece are given as -1, which the
  // shader skips.
  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, float* out) override {
    const DeviceMatrix* m = &on_device(table);
    const std::string kernel = std::string("get_rows_") + type_suffix(table.type);
    const size_t out_bytes = sizeof(float) * static_cast<size_t>(n * table.cols);
    Buffer& ib = stage(0, sizeof(int32_t) * static_cast<size_t>(n));
    Buffer& ob = stage(1, out_bytes);
    auto* local = reinterpret_cast<int32_t*>(ib.mapped());
    const GetRowsPush push{u32(table.cols), u32(table.row_bytes), u32(n)};
    for (size_t p = 0; p < m->pieces.size(); ++p) {
      const int64_t first = static_cast<int64_t>(p) * m->rows_per_piece;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t r = ids[t] - first;
        local[t] = r >= 0 && r < m->rows_per_piece ? static_cast<int32_t>(r) : -1;
      }
      begin();
      dispatch(kernel, {&m->pieces[p], &ib, &ob}, &push, sizeof push,
               Groups::spread(static_cast<uint64_t>(n)));
      submit();
    }
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
    // Every layer rotates q and k at the same positions: the table is computed once per step.
    const int64_t half = head_dim / 2;
    const std::vector<int32_t> pos(positions, positions + n_tokens);
    if (pos != rope_positions_ || inv_freq != rope_inv_freq_ || mscale != rope_mscale_ ||
        half != rope_half_) {
      cos_sin_.resize(static_cast<size_t>(n_tokens * half * 2));
      for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t i = 0; i < half; ++i) {
          const double a = static_cast<double>(positions[t]) * inv_freq[i];
          cos_sin_[(t * half + i) * 2] = static_cast<float>(std::cos(a) * mscale);
          cos_sin_[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(a) * mscale);
        }
      rope_positions_ = pos;
      rope_inv_freq_ = inv_freq;
      rope_mscale_ = mscale;
      rope_half_ = half;
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

  // A matrix on the device: pieces of whole rows, each small enough for one buffer (one
  // piece unless the matrix exceeds the device's largest storage buffer, 128 MiB on
  // lavapipe, a few GiB on GPUs).
  struct DeviceMatrix {
    std::vector<Buffer> pieces;
    int64_t rows_per_piece = 0;
  };

  // The device copy of a matrix, uploaded on first use (prepare_weights at load). Matrices
  // are known by where their bytes are and what they hold: a model's stay in place.
  // nullptr, with the reason in status(), when the device cannot take it.
  using WeightKey = std::tuple<const uint8_t*, GgmlType, int64_t, int64_t>;
  const DeviceMatrix* weights(const WeightMatrix& w) {
    const WeightKey key{w.data, w.type, w.rows, w.cols};
    if (auto it = weights_.find(key); it != weights_.end()) return &it->second;
    if (!type_suffix(w.type)) {
      fail(w.name + ": the Vulkan backend does not compute with " + ggml_type_name(w.type));
      return nullptr;
    }
    const vk::DeviceInfo& dev = ctx_->info();
    const size_t bytes = static_cast<size_t>(w.rows) * w.row_bytes;
    if (uploaded_bytes_ + bytes > dev.device_local_bytes) {
      fail("the model's weights need more than " + std::to_string((uploaded_bytes_ + bytes) >> 20) +
           " MiB of device memory and " + dev.name + " has " +
           std::to_string(dev.device_local_bytes >> 20) +
           " MiB (a model that does not fit is refused; use --backend cpu)");
      return nullptr;
    }
    DeviceMatrix m;
    m.rows_per_piece =
        std::min<int64_t>(w.rows, static_cast<int64_t>(dev.max_storage_buffer_range / w.row_bytes));
    if (m.rows_per_piece < 1) {
      fail(w.name + ": one row is larger than the device's largest buffer");
      return nullptr;
    }
    for (int64_t first = 0; first < w.rows; first += m.rows_per_piece) {
      const int64_t rows = std::min(m.rows_per_piece, w.rows - first);
      auto piece = upload(w.data + static_cast<size_t>(first) * w.row_bytes,
                          static_cast<size_t>(rows) * w.row_bytes);
      if (!piece) {
        fail(w.name + ": " + piece.message());
        return nullptr;
      }
      m.pieces.push_back(std::move(piece.value()));
    }
    uploaded_bytes_ += bytes;
    return &weights_.emplace(key, std::move(m)).first->second;
  }

  // `bytes` at `data` into a new device-local buffer.
  Result<Buffer> upload(const uint8_t* data, size_t bytes) {
    auto b = Buffer::create(*ctx_, bytes, vk::Memory::kDevice);
    if (!b) return b.status();
    if (b->mapped()) {
      std::memcpy(b->mapped(), data, bytes);
      return b;
    }
    // Through a host-visible staging buffer, in pieces of at most 64 MiB.
    constexpr size_t kPiece = size_t{64} << 20;
    for (size_t at = 0; at < bytes; at += kPiece) {
      const size_t n = std::min(kPiece, bytes - at);
      Buffer& st = stage(0, n);
      std::memcpy(st.mapped(), data + at, n);
      begin();
      runner_->copy(st, 0, *b, at, n);
      submit();
    }
    return b;
  }

  // Tokens per submit such that rows of `width` floats for all of them fit in one buffer.
  int64_t token_chunk(int64_t width) const {
    const int64_t floats = static_cast<int64_t>(ctx_->info().max_storage_buffer_range / 4);
    return std::max<int64_t>(1, floats / width);
  }

  Buffer& stage_floats(size_t slot, int64_t n) {
    return stage(slot, sizeof(float) * static_cast<size_t>(n));
  }

  // The device copy of w, uploaded now if it was not at load: before a recording starts,
  // since an upload records and submits a copy of its own.
  const DeviceMatrix& on_device(const WeightMatrix& w) {
    const DeviceMatrix* m = weights(w);
    if (!m) fatal("no device copy of " + w.name + ": " + error_.message());
    return *m;
  }

  // y = x · wᵀ for nt tokens, every piece of w, into the recording (w is on the device).
  void record_matmul(const WeightMatrix& w, const Buffer& x, const Buffer& y, int64_t nt) {
    const DeviceMatrix* m = &on_device(w);
    const std::string kernel = std::string("matmul_") + type_suffix(w.type);
    for (size_t p = 0; p < m->pieces.size(); ++p) {
      const int64_t first = static_cast<int64_t>(p) * m->rows_per_piece;
      const int64_t rows = std::min(m->rows_per_piece, w.rows - first);
      const MatmulPush push{u32(rows), u32(w.cols), u32(w.row_bytes),
                            u32(nt),   u32(w.rows), u32(first)};
      dispatch(kernel, {&m->pieces[p], &x, &y}, &push, sizeof push,
               Groups::spread(static_cast<uint64_t>(rows)));
    }
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
    begin();
    dispatch(kernel, buffers, push, push_bytes, groups);
    submit();
  }

  void begin() {
    if (Status s = runner_->begin(); !s) fatal(s.message());
  }
  void dispatch(const std::string& kernel, std::initializer_list<const Buffer*> buffers,
                const void* push, uint32_t push_bytes, Groups groups) {
    auto k = kernels_.get(kernel, static_cast<uint32_t>(buffers.size()), push_bytes);
    if (!k) fatal(k.message());
    if (Status s = runner_->dispatch(**k, buffers, push, groups); !s)
      fatal(kernel + ": " + s.message());
  }
  void submit() {
    if (Status s = runner_->submit_and_wait(); !s) fatal(s.message());
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
  std::map<WeightKey, DeviceMatrix> weights_;
  size_t uploaded_bytes_ = 0;
  static constexpr size_t kStages = 6;
  std::array<Buffer, kStages> stages_;  // fixed, so that references to them stay valid
  // The last rotation table and what it was computed for.
  std::vector<float> cos_sin_;
  std::vector<int32_t> rope_positions_;
  const double* rope_inv_freq_ = nullptr;
  double rope_mscale_ = 0;
  int64_t rope_half_ = 0;
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
