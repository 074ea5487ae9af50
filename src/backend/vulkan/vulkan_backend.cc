#include "backend/vulkan/vulkan_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "backend/vulkan/vk_buffer.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_runner.h"
#include "backend/vulkan/weight_layout.h"
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
struct KvStorePush {
  uint32_t n_tokens, n_head_kv, head_dim, block_size, block_stride, head_stride, pos_stride;
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
    case GgmlType::Q4_1:
      return "q4_1";
    case GgmlType::Q5_0:
      return "q5_0";
    case GgmlType::Q5_1:
      return "q5_1";
    case GgmlType::IQ4_NL:
      return "iq4_nl";
    case GgmlType::Q2_K:
      return "q2_k";
    case GgmlType::Q3_K:
      return "q3_k";
    case GgmlType::IQ4_XS:
      return "iq4_xs";
    default:
      return nullptr;
  }
}

// A buffer of this backend: device memory, reached only through its operations.
class DeviceBuffer final : public BackendBuffer {
 public:
  explicit DeviceBuffer(Buffer b) : BackendBuffer(b.size(), nullptr), buffer_(std::move(b)) {}
  const Buffer& buffer() const { return buffer_; }

 private:
  Buffer buffer_;
};

// Operations record into one command buffer, which is submitted only when the host needs a
// result: an operation that writes host memory (a step's logits, or a test's output) runs
// everything recorded so far, then copies its results out. A forward pass whose activations
// and KV cache are this backend's buffers is therefore one submit: token ids, positions and
// block tables go in with the operations that read them, and the logits come back at the
// end. Host memory an operation reads is copied into an upload arena at record time, where
// it stays until the submit.
class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::unique_ptr<vk::Context> ctx)
      : ctx_(std::move(ctx)), kernels_(*ctx_) {}
  ~VulkanBackend() override { flush(); }

  Status init() {
    auto runner = vk::Runner::create(*ctx_);
    if (!runner) return runner.status();
    runner_ = std::move(runner.value());
    const vk::DeviceInfo& dev = ctx_->info();
    align_ = std::max<size_t>(16, static_cast<size_t>(dev.min_storage_offset_alignment));
    return Status::ok();
  }

  std::string name() const override { return "vulkan (" + ctx_->info().name + ")"; }

  Status status() const override { return error_; }

  size_t max_buffer_bytes() const override {
    return static_cast<size_t>(ctx_->info().max_storage_buffer_range);
  }
  // The device-local heap less what duet has put there (other programs' use is not seen).
  std::optional<size_t> free_memory_bytes() const override {
    const size_t heap = ctx_->info().device_local_bytes;
    return heap > uploaded_bytes_ ? heap - uploaded_bytes_ : 0;
  }
  bool buffers_in_host_memory() const override { return false; }

  Result<std::unique_ptr<BackendBuffer>> allocate(size_t bytes) override {
    auto b = Buffer::create(*ctx_, bytes, vk::Memory::kDevice);
    if (!b) return b.status();
    return std::unique_ptr<BackendBuffer>(std::make_unique<DeviceBuffer>(std::move(b.value())));
  }

  void finish() override { flush(); }

  bool prepare_weights(const WeightMatrix& w) override { return weights(w) != nullptr; }
  bool prepare_table(const WeightMatrix& table) override { return weights(table) != nullptr; }

  void prepare_vector(std::span<const float> w) override {
    if (vectors_.count(w.data())) return;
    auto b = upload(reinterpret_cast<const uint8_t*>(w.data()), w.size_bytes());
    if (!b) return fail("a norm weight vector: " + b.message());
    vectors_.emplace(w.data(), DeviceVector{std::move(b.value()), w.size()});
  }

  void matmul(const WeightMatrix& w, ConstFloats x, int64_t n_tokens, Floats y) override {
    const WeightMatrix* ws[] = {&w};
    const Floats ys[] = {y};
    matmul_same_input(ws, x, n_tokens, ys);
  }

  // Every product in the same recording, in chunks of tokens small enough for one binding.
  void matmul_same_input(std::span<const WeightMatrix* const> ws, ConstFloats x, int64_t n_tokens,
                         std::span<const Floats> ys) override {
    for (const WeightMatrix* w : ws) on_device(*w);
    const int64_t cols = ws[0]->cols;
    int64_t widest = cols;
    for (const WeightMatrix* w : ws) widest = std::max(widest, w->rows);
    const int64_t chunk = token_chunk(widest);
    for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
      const int64_t nt = std::min(chunk, n_tokens - t0);
      const vk::Binding xb = in(x, floats(t0 * cols), floats(nt * cols));
      for (size_t i = 0; i < ws.size(); ++i)
        record_matmul(*ws[i], xb, out(ys[i], floats(t0 * ws[i]->rows), floats(nt * ws[i]->rows)),
                      nt);
    }
    end_op();
  }

  // The n_ff-wide products stay on the device (in the scratch buffers when they are this
  // backend's, else in the upload arena).
  void feed_forward(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down,
                    ConstFloats x, int64_t n_tokens, Floats out_view, Floats gate_scratch,
                    Floats up_scratch) override {
    for (const WeightMatrix* w : {&gate, &up, &down}) on_device(*w);
    const int64_t widest = std::max({gate.rows, gate.cols, down.rows});
    const int64_t chunk = token_chunk(widest);
    const bool out_is_x = !device(x) && x.host() == out_view.host();
    for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
      const int64_t nt = std::min(chunk, n_tokens - t0);
      const vk::Binding xb = out_is_x
                                 ? inout(out_view, floats(t0 * gate.cols), floats(nt * gate.cols))
                                 : in(x, floats(t0 * gate.cols), floats(nt * gate.cols));
      const vk::Binding gb = scratch(gate_scratch, floats(t0 * gate.rows), floats(nt * gate.rows));
      const vk::Binding ub = scratch(up_scratch, floats(t0 * up.rows), floats(nt * up.rows));
      const vk::Binding ob =
          out_is_x ? xb : out(out_view, floats(t0 * down.rows), floats(nt * down.rows));
      record_matmul(gate, xb, gb, nt);
      record_matmul(up, xb, ub, nt);
      runner_->barrier();
      const CountPush push{u32(nt * gate.rows)};
      dispatch("swiglu", {gb, ub, gb}, &push, sizeof push,
               Groups::spread(elementwise_groups(static_cast<uint64_t>(nt * gate.rows))));
      runner_->barrier();
      record_matmul(down, gb, ob, nt);
    }
    end_op();
  }

  // One dispatch per piece of the table: ids outside the piece are given as -1, which the
  // shader skips.
  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n,
                Floats out_view) override {
    const DeviceMatrix* m = &on_device(table);
    const std::string kernel = std::string("get_rows_") + type_suffix(table.type);
    const vk::Binding ob = out(out_view, 0, floats(n * table.cols));
    const GetRowsPush push{u32(table.cols), u32(m->row_bytes), u32(n)};
    for (size_t p = 0; p < m->pieces.size(); ++p) {
      const int64_t first = static_cast<int64_t>(p) * m->rows_per_piece;
      int32_t* local = nullptr;
      const vk::Binding ib = upload_arena(sizeof(int32_t) * static_cast<size_t>(n), &local);
      for (int64_t t = 0; t < n; ++t) {
        const int64_t r = ids[t] - first;
        local[t] = r >= 0 && r < m->rows_per_piece ? static_cast<int32_t>(r) : -1;
      }
      dispatch(kernel, {&m->pieces[p], ib, ob}, &push, sizeof push,
               Groups::spread(static_cast<uint64_t>(n)));
    }
    end_op();
  }

  // Row by row, as copies inside the recording.
  void gather_rows(ConstFloats src, std::span<const int64_t> rows, int64_t width,
                   Floats dst) override {
    const size_t row = floats(width);
    for (size_t i = 0; i < rows.size(); ++i) {
      const vk::Binding from = in(src, static_cast<size_t>(rows[i]) * row, row);
      const vk::Binding to = out(dst, i * row, row);
      recording();
      runner_->copy(*from.buffer, from.offset, *to.buffer, to.offset, row);
    }
    end_op();
  }

  void rmsnorm(ConstFloats x, const float* w, int64_t rows, int64_t dim, float eps,
               Floats y) override {
    const size_t bytes = floats(rows * dim);
    const bool in_place = !device(x) && x.host() == y.host();
    const vk::Binding xb = in_place ? inout(y, 0, bytes) : in(x, 0, bytes);
    const vk::Binding yb = in_place ? xb : out(y, 0, bytes);
    const vk::Binding wb = norm_weights(w, dim);
    const RmsnormPush push{u32(rows), u32(dim), eps};
    dispatch("rmsnorm", {xb, wb, yb}, &push, sizeof push,
             Groups::spread(static_cast<uint64_t>(rows)));
    end_op();
  }

  void rope_neox(Floats x, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                 const RopeAngles& rope) override {
    const int64_t half = head_dim / 2;
    const vk::Binding table = rope_table(n_tokens, half, rope);
    const vk::Binding xb = inout(x, 0, floats(n_tokens * n_heads * head_dim));
    const RopePush push{u32(n_tokens), u32(n_heads), u32(head_dim)};
    dispatch("rope_neox", {xb, table}, &push, sizeof push,
             Groups::spread(elementwise_groups(static_cast<uint64_t>(n_tokens * n_heads * half))));
    end_op();
  }

  void store_kv(const KvLayer& kv, const StepLayout& step, ConstFloats k, ConstFloats v) override {
    const Buffer* kc = device(kv.k);
    const Buffer* vc = device(kv.v);
    if (!kc || !vc) return Backend::store_kv(kv, step, k, v);  // a cache in host memory
    const char* suffix = type_suffix(kv.dtype);
    if (!suffix) return fatal("store_kv: unsupported KV type");
    const int64_t n = static_cast<int64_t>(step.slots.size());
    const size_t bytes = floats(n * kv.n_head_kv * kv.head_dim);
    const vk::Binding kb = in(k, 0, bytes);
    const vk::Binding vb = in(v, 0, bytes);
    const vk::Binding sb = upload_ints(step.slots);
    const PagedKvView layout = strides(kv);
    const KvStorePush push{u32(n),
                           u32(kv.n_head_kv),
                           u32(kv.head_dim),
                           u32(kv.block_size),
                           u32(layout.block_stride),
                           u32(layout.head_stride),
                           u32(layout.pos_stride)};
    dispatch(std::string("kv_store_") + suffix, {kb, vb, sb, kc, vc}, &push, sizeof push,
             Groups::spread(elementwise_groups(static_cast<uint64_t>(n * 2 * kv.n_head_kv))));
    end_op();
  }

  // Every sequence of the step in one dispatch over the cache's own buffers.
  void attention(const KvLayer& kv, const StepLayout& step, ConstFloats q, Floats out_view,
                 const AttentionShape& s) override {
    const Buffer* kc = device(kv.k);
    const Buffer* vc = device(kv.v);
    if (!kc || !vc) return Backend::attention(kv, step, q, out_view, s);
    const int64_t n = static_cast<int64_t>(step.positions.size());
    std::vector<int32_t>& tokens = token_info_;  // per token: position, table start
    tokens.assign(static_cast<size_t>(2 * n), 0);
    for (const StepChunk& c : step.chunks)
      for (int64_t t = c.first; t < c.first + c.n_tokens; ++t) {
        tokens[static_cast<size_t>(2 * t)] = step.positions[static_cast<size_t>(t)];
        tokens[static_cast<size_t>(2 * t + 1)] = static_cast<int32_t>(c.table_start);
      }
    record_attention(kv.dtype, strides(kv), kc, vc, upload_ints(step.tables), upload_ints(tokens),
                     q, out_view, n, s);
    end_op();
  }

  // Sequences whose caches are in host memory: the blocks each one uses are copied into
  // the upload arena, compacted (block i of the copy = block_table[i]), with the same strides.
  void attention_paged(std::span<const PagedAttentionCall> calls,
                       const AttentionShape& s) override {
    for (const PagedAttentionCall& c : calls) {
      const char* suffix = type_suffix(c.kv.dtype);
      if (!suffix) return fatal("attention: unsupported KV type");
      int32_t last = 0;
      for (int64_t t = 0; t < c.n_tokens; ++t) last = std::max(last, c.positions[t]);
      const int64_t n_blocks = last / c.kv.block_size + 1;
      const size_t block_bytes = c.kv.block_stride;
      uint8_t* kh = nullptr;
      uint8_t* vh = nullptr;
      const vk::Binding kb = upload_arena(block_bytes * static_cast<size_t>(n_blocks), &kh);
      const vk::Binding vb = upload_arena(block_bytes * static_cast<size_t>(n_blocks), &vh);
      for (int64_t b = 0; b < n_blocks; ++b) {
        const size_t from = static_cast<size_t>(c.kv.block_table[b]) * block_bytes;
        std::memcpy(kh + b * block_bytes, c.kv.k + from, block_bytes);
        std::memcpy(vh + b * block_bytes, c.kv.v + from, block_bytes);
      }
      std::vector<int32_t>& table = token_info_;
      table.resize(static_cast<size_t>(n_blocks));
      for (int64_t b = 0; b < n_blocks; ++b) table[b] = static_cast<int32_t>(b);
      const vk::Binding tb = upload_ints(table);
      table.clear();
      for (int64_t t = 0; t < c.n_tokens; ++t) {
        table.push_back(c.positions[t]);
        table.push_back(0);
      }
      record_attention(c.kv.dtype, c.kv, kb, vb, tb, upload_ints(table), c.q, c.out, c.n_tokens, s);
      end_op();
    }
  }

  void swiglu(ConstFloats gate, ConstFloats up, int64_t n, Floats out_view) override {
    const size_t bytes = floats(n);
    const vk::Binding gb = in(gate, 0, bytes);
    const vk::Binding ub = in(up, 0, bytes);
    const vk::Binding ob = out(out_view, 0, bytes);
    const CountPush push{u32(n)};
    dispatch("swiglu", {gb, ub, ob}, &push, sizeof push,
             Groups::spread(elementwise_groups(static_cast<uint64_t>(n))));
    end_op();
  }

  void add_inplace(Floats x, ConstFloats y, int64_t n) override {
    const size_t bytes = floats(n);
    const vk::Binding xb = inout(x, 0, bytes);
    const vk::Binding yb = in(y, 0, bytes);
    const CountPush push{u32(n)};
    dispatch("add", {xb, yb}, &push, sizeof push,
             Groups::spread(elementwise_groups(static_cast<uint64_t>(n))));
    end_op();
  }

 private:
  static constexpr int64_t kTiledTokens = 16;

  static uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
  static uint32_t u32(size_t v) { return static_cast<uint32_t>(v); }
  static size_t floats(int64_t n) { return sizeof(float) * static_cast<size_t>(n); }
  static uint64_t elementwise_groups(uint64_t n) { return (n + kGroupSize - 1) / kGroupSize; }

  static PagedKvView strides(const KvLayer& kv) {
    return PagedKvView::head_major(nullptr, nullptr, kv.dtype, kv.block_size, kv.n_head_kv,
                                   kv.head_dim, nullptr);
  }

  // This backend's device buffer behind `b`, or nullptr (host memory).
  static const Buffer* device(const BackendBuffer* b) {
    const auto* d = dynamic_cast<const DeviceBuffer*>(b);
    return d ? &d->buffer() : nullptr;
  }
  template <class T>
  static const Buffer* device(const View<T>& v) {
    return device(v.buffer);
  }

  // What a shader binds for `bytes` of view `v` from byte `offset`: the device buffer
  // itself, or for host memory a copy in the upload arena (in), space there copied back
  // after the submit (out), or both (inout).
  vk::Binding in(ConstFloats v, size_t offset, size_t bytes) {
    if (const Buffer* b = device(v)) return {b, offset, bytes};
    uint8_t* at = nullptr;
    const vk::Binding binding = upload_arena(bytes, &at);
    std::memcpy(at, reinterpret_cast<const uint8_t*>(v.host()) + offset, bytes);
    return binding;
  }
  vk::Binding out(Floats v, size_t offset, size_t bytes) {
    if (const Buffer* b = device(v)) return {b, offset, bytes};
    uint8_t* at = nullptr;
    const vk::Binding binding = upload_arena(bytes, &at);
    copy_outs_.push_back({reinterpret_cast<uint8_t*>(v.host()) + offset, at, bytes});
    return binding;
  }
  vk::Binding inout(Floats v, size_t offset, size_t bytes) {
    if (const Buffer* b = device(v)) return {b, offset, bytes};
    const vk::Binding binding = in(ConstFloats(v), offset, bytes);
    copy_outs_.push_back({reinterpret_cast<uint8_t*>(v.host()) + offset,
                          binding.buffer->mapped() + binding.offset, bytes});
    return binding;
  }
  // Room for intermediate values that nobody reads afterwards.
  vk::Binding scratch(Floats v, size_t offset, size_t bytes) {
    if (const Buffer* b = device(v)) return {b, offset, bytes};
    uint8_t* at = nullptr;
    return upload_arena(bytes, &at);
  }
  // A norm weight vector: its device copy when prepare_vector made one, else a copy in
  // the upload arena.
  vk::Binding norm_weights(const float* w, int64_t dim) {
    if (auto it = vectors_.find(w);
        it != vectors_.end() && it->second.n == static_cast<size_t>(dim))
      return &it->second.buffer;
    return in(ConstFloats(w), 0, floats(dim));
  }
  vk::Binding upload_ints(std::span<const int32_t> values) {
    int32_t* at = nullptr;
    const vk::Binding b = upload_arena(sizeof(int32_t) * std::max<size_t>(values.size(), 1), &at);
    std::copy(values.begin(), values.end(), at);
    return b;
  }

  // `bytes` of the upload arena, host-visible; *at gets where to write them. The arena is
  // reused after each submit; a recording that outgrows it gets another piece.
  template <class T>
  vk::Binding upload_arena(size_t bytes, T** at) {
    const size_t size = (std::max<size_t>(bytes, 4) + align_ - 1) / align_ * align_;
    if (arena_piece_ >= arena_.size() || arena_used_ + size > arena_[arena_piece_].size()) {
      if (arena_piece_ < arena_.size()) ++arena_piece_;
      arena_used_ = 0;
      if (arena_piece_ == arena_.size() || arena_[arena_piece_].size() < size) {
        const size_t piece = std::max<size_t>(size, size_t{4} << 20);
        auto b = Buffer::create(*ctx_, piece, vk::Memory::kHost);
        if (!b) fatal("host data for an operation: " + b.message());
        if (arena_piece_ == arena_.size())
          arena_.push_back(std::move(b.value()));
        else
          arena_[arena_piece_] = std::move(b.value());
      }
    }
    Buffer& piece = arena_[arena_piece_];
    const size_t offset = arena_used_;
    arena_used_ += size;
    *at = reinterpret_cast<T*>(piece.mapped() + offset);
    return {&piece, offset, bytes};
  }

  void record_attention(GgmlType dtype, const PagedKvView& layout, vk::Binding kc, vk::Binding vc,
                        vk::Binding tables, vk::Binding tokens, ConstFloats q, Floats out_view,
                        int64_t n_tokens, const AttentionShape& s) {
    const char* suffix = type_suffix(dtype);
    if (!suffix) return fatal("attention: unsupported KV type");
    const size_t q_bytes = floats(n_tokens * s.n_head * s.head_dim);
    const vk::Binding qb = in(q, 0, q_bytes);
    const vk::Binding ob = out(out_view, 0, q_bytes);
    const AttentionPush push{
        u32(n_tokens),           u32(s.n_head),          u32(s.n_head_kv),
        u32(s.head_dim),         u32(layout.block_size), u32(layout.block_stride),
        u32(layout.head_stride), u32(layout.pos_stride), s.scale};
    Groups g;
    g.x = u32(s.n_head);
    g.y = u32(n_tokens);
    dispatch(std::string("attention_") + suffix, {qb, kc, vc, tables, tokens, ob}, &push,
             sizeof push, g);
  }

  // The cos/sin table of a step's positions, computed on the host in double as the
  // reference does (a float angle pos · inv_freq loses its low bits at long positions),
  // once per step: every layer rotates q and k at the same positions. It goes into the
  // upload arena with the step's other inputs, so it costs no submit of its own.
  vk::Binding rope_table(int64_t n_tokens, int64_t half, const RopeAngles& rope) {
    const std::span<const int32_t> pos(rope.positions, static_cast<size_t>(n_tokens));
    if (rope_.binding && rope_.recording == submits_ && rope_.inv_freq == rope.inv_freq &&
        rope_.mscale == rope.mscale && rope_.half == half &&
        std::equal(pos.begin(), pos.end(), rope_.positions.begin(), rope_.positions.end()))
      return *rope_.binding;
    float* cs = nullptr;
    const vk::Binding b = upload_arena(floats(n_tokens * half * 2), &cs);
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double a = static_cast<double>(pos[t]) * rope.inv_freq[i];
        cs[(t * half + i) * 2] = static_cast<float>(std::cos(a) * rope.mscale);
        cs[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(a) * rope.mscale);
      }
    rope_.positions.assign(pos.begin(), pos.end());
    rope_.inv_freq = rope.inv_freq;
    rope_.mscale = rope.mscale;
    rope_.half = half;
    rope_.recording = submits_;
    rope_.binding = b;
    return b;
  }

  // A matrix on the device: pieces of whole rows, each small enough for one buffer (one
  // piece unless the matrix exceeds the device's largest storage buffer, 128 MiB on
  // lavapipe, a few GiB on GPUs).
  struct DeviceMatrix {
    std::vector<Buffer> pieces;
    int64_t rows_per_piece = 0;
    size_t row_bytes = 0;  // in the device layout (vk::device_row_bytes)
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
    DeviceMatrix m;
    m.row_bytes = vk::device_row_bytes(w.type, w.cols);
    const size_t bytes = static_cast<size_t>(w.rows) * m.row_bytes;
    if (uploaded_bytes_ + bytes > dev.device_local_bytes) {
      fail("the model's weights need more than " + std::to_string((uploaded_bytes_ + bytes) >> 20) +
           " MiB of device memory and " + dev.name + " has " +
           std::to_string(dev.device_local_bytes >> 20) +
           " MiB (a model that does not fit is refused; use --backend cpu)");
      return nullptr;
    }
    m.rows_per_piece =
        std::min<int64_t>(w.rows, static_cast<int64_t>(dev.max_storage_buffer_range / m.row_bytes));
    if (m.rows_per_piece < 1) {
      fail(w.name + ": one row is larger than the device's largest buffer");
      return nullptr;
    }
    // Types whose device layout differs are repacked a piece at a time on the host.
    const bool repack = vk::device_layout_differs(w.type, w.cols);
    std::vector<uint8_t> repacked;
    for (int64_t first = 0; first < w.rows; first += m.rows_per_piece) {
      const int64_t rows = std::min(m.rows_per_piece, w.rows - first);
      const uint8_t* src = w.data + static_cast<size_t>(first) * w.row_bytes;
      if (repack) {
        repacked.resize(static_cast<size_t>(rows) * m.row_bytes);
        vk::to_device_layout(w.type, w.cols, src, rows, repacked.data());
        src = repacked.data();
      }
      auto piece = upload(src, static_cast<size_t>(rows) * m.row_bytes);
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
    // Through a host-visible staging buffer, in pieces of at most 64 MiB, each in a submit
    // of its own after whatever was recorded.
    flush();
    constexpr size_t kPiece = size_t{64} << 20;
    for (size_t at = 0; at < bytes; at += kPiece) {
      const size_t n = std::min(kPiece, bytes - at);
      if (!staging_ || staging_.size() < n) {
        auto st = Buffer::create(*ctx_, std::max(n, std::min(kPiece, bytes)), vk::Memory::kHost);
        if (!st) return st.status();
        staging_ = std::move(st.value());
      }
      std::memcpy(staging_.mapped(), data + at, n);
      recording();
      runner_->copy(staging_, 0, *b, at, n);
      flush();
    }
    return b;
  }

  // Tokens per dispatch such that rows of `width` floats for all of them fit in one binding:
  // a multiple of 64 when more than 64 fit, so that chunk offsets stay aligned.
  int64_t token_chunk(int64_t width) const {
    const int64_t fit = static_cast<int64_t>(ctx_->info().max_storage_buffer_range / 4) / width;
    return fit > 64 ? fit / 64 * 64 : std::max<int64_t>(1, fit);
  }

  // The device copy of w, uploaded now if it was not at load.
  const DeviceMatrix& on_device(const WeightMatrix& w) {
    const DeviceMatrix* m = weights(w);
    if (!m) fatal("no device copy of " + w.name + ": " + error_.message());
    return *m;
  }

  // y = x · wᵀ for nt tokens, every piece of w, into the recording (w is on the device).
  // Decode-sized steps read each weight row once for all their tokens (matmul: a workgroup
  // per row); from kTiledTokens on, the tiled GEMM (matmul_tiled: 64 rows x 32 tokens per
  // workgroup, each decoded weight serving 32 tokens from shared memory).
  void record_matmul(const WeightMatrix& w, vk::Binding x, vk::Binding y, int64_t nt) {
    const DeviceMatrix* m = &on_device(w);
    const bool tiled = nt >= kTiledTokens;
    const std::string kernel =
        std::string(tiled ? "matmul_tiled_" : "matmul_") + type_suffix(w.type);
    for (size_t p = 0; p < m->pieces.size(); ++p) {
      const int64_t first = static_cast<int64_t>(p) * m->rows_per_piece;
      const int64_t rows = std::min(m->rows_per_piece, w.rows - first);
      const MatmulPush push{u32(rows), u32(w.cols), u32(m->row_bytes),
                            u32(nt),   u32(w.rows), u32(first)};
      Groups g = Groups::spread(static_cast<uint64_t>(rows));
      if (tiled) {
        g.x = u32((rows + 63) / 64);
        g.y = u32((nt + 31) / 32);
      }
      dispatch(kernel, {&m->pieces[p], x, y}, &push, sizeof push, g);
    }
  }

  // Starts a recording unless one is open.
  void recording() {
    if (recording_) return;
    runner_->begin();
    recording_ = true;
  }

  void dispatch(const std::string& kernel, std::initializer_list<vk::Binding> buffers,
                const void* push, uint32_t push_bytes, Groups groups) {
    for (const vk::Binding& b : buffers)
      if (b.offset % align_ != 0) fatal(kernel + ": a binding's offset is not aligned");
    auto k = kernels_.get(kernel, static_cast<uint32_t>(buffers.size()), push_bytes);
    if (!k) fatal(k.message());
    recording();
    if (Status s = runner_->dispatch(**k, buffers, push, groups); !s)
      fatal(kernel + ": " + s.message());
  }

  // Ends an operation: later ones see what it wrote, and if it writes host memory,
  // everything recorded runs now and its results are copied out.
  void end_op() {
    if (recording_) runner_->barrier();
    if (!copy_outs_.empty()) flush();
  }

  // Runs what is recorded, copies results to the host and frees the upload arena.
  void flush() {
    if (recording_) {
      recording_ = false;
      if (Status s = runner_->submit_and_wait(); !s) fatal(s.message());
    }
    for (const CopyOut& c : copy_outs_) std::memcpy(c.to, c.from, c.bytes);
    copy_outs_.clear();
    ++submits_;  // what was in the arena is gone
    arena_piece_ = 0;
    arena_used_ = 0;
  }

  // A matrix the device cannot hold is reported by status() after the load.
  void fail(const std::string& message) {
    if (error_) error_ = Status::error(message);
  }

  // The device failed in the middle of a step (out of memory for staging, a lost device):
  // the operations have no way to report it, and the step's results would be wrong.
  [[noreturn]] static void fatal(const std::string& message) {
    std::fprintf(stderr, "duet: Vulkan backend: %s\n", message.c_str());
    std::abort();
  }

  struct CopyOut {
    uint8_t* to;
    const uint8_t* from;
    size_t bytes;
  };

  std::unique_ptr<vk::Context> ctx_;
  vk::Kernels kernels_;
  std::unique_ptr<vk::Runner> runner_;
  std::map<WeightKey, DeviceMatrix> weights_;
  struct DeviceVector {
    Buffer buffer;
    size_t n = 0;
  };
  std::map<const float*, DeviceVector> vectors_;  // prepared norm weights, by address
  size_t uploaded_bytes_ = 0;
  size_t align_ = 16;  // of binding offsets into the arena
  bool recording_ = false;
  std::deque<Buffer> arena_;  // pieces (a deque: bindings point at them while it grows)
  size_t arena_piece_ = 0, arena_used_ = 0;
  std::vector<CopyOut> copy_outs_;
  Buffer staging_;        // weight uploads to memory the host cannot map
  uint64_t submits_ = 0;  // flushes so far: the arena's contents last until the next
  struct RopeTable {      // the current recording's rotation table and what it is for
    std::optional<vk::Binding> binding;
    uint64_t recording = 0;
    std::vector<int32_t> positions;
    const double* inv_freq = nullptr;
    double mscale = 0;
    int64_t half = 0;
  } rope_;
  std::vector<int32_t> token_info_;
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
