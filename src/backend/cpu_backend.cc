// The fast CPU backend: the kernels/cpu table of one ISA path, with the work of each call
// spread over a thread pool.
#include "backend/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "base/thread_pool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/matmul.h"
#include "kernels/ref/ops.h"

namespace duet {
namespace {

// Element-wise work below this many floats runs on the calling thread: waking the pool
// costs more than it saves. A job of two trivial tasks costs ~0.02 µs here (the workers
// spin between a step's ops), so the split starts small: eight decoding sequences' norms,
// SwiGLU and residual adds then use both threads (decode x8 +0.5-3 %, A/B against 1 << 16).
constexpr int64_t kParallelElems = 1 << 12;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class CpuBackend final : public Backend {
 public:
  CpuBackend(ThreadPool& pool, CpuIsa isa)
      : pool_(pool), k_(cpu::cpu_kernels(isa)), attn_scratch_(static_cast<size_t>(pool.size())) {}

  std::string name() const override { return std::string("cpu-") + cpu_isa_name(k_.isa); }

  bool prepare_weights(const WeightMatrix& w) override {
    if (!cpu::matmul_supports(w.type)) return false;
    if (packed_.count(w.data) != 0) return true;
    auto p =
        cpu::pack_for_kernels(k_, w.type, w.data, w.rows, w.cols, w.row_bytes, &arena_, &pool_);
    if (p == nullptr) return false;
    packed_.emplace(w.data, std::move(p));
    return true;
  }

  // Every buffer is host memory (the default allocate), so each view has host().
  void matmul(const WeightMatrix& w, ConstFloats x, int64_t n_tokens, Floats y) override {
    if (!cpu::matmul_supports(w.type)) {  // no fast kernel: stay correct
      ref::matmul(w.type, w.data, w.rows, w.cols, w.row_bytes, x.host(), n_tokens, y.host());
      return;
    }
    cpu::matmul(k_, pool_, scratch_, args_for(w, x.host(), n_tokens, y.host()));
  }

  void matmul_same_input(std::span<const WeightMatrix* const> ws, ConstFloats x, int64_t n_tokens,
                         std::span<const Floats> ys) override {
    std::vector<cpu::MatmulArgs>& args = same_input_args_;
    args.clear();
    for (size_t i = 0; i < ws.size(); ++i) {
      if (!cpu::matmul_supports(ws[i]->type)) {
        Backend::matmul_same_input(ws, x, n_tokens, ys);
        return;
      }
      args.push_back(args_for(*ws[i], x.host(), n_tokens, ys[i].host()));
    }
    cpu::matmul_same_input(k_, pool_, scratch_, args);
  }

  // A decode-sized step applies SwiGLU inside the gate/up job (cpu::matmul_swiglu), which
  // leaves each thread the columns it computed, and the down projection converts its input
  // in the same column ranges (x_in_column_ranges); anything else takes the default's steps.
  // (matmul_swiglu itself declines gate and up matrices that were not packed, which covers
  // types without fast kernels.)
  void feed_forward(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down,
                    ConstFloats x, int64_t n_tokens, Floats out, Floats gate_scratch,
                    Floats up_scratch) override {
    if (cpu::matmul_supports(down.type) &&
        cpu::matmul_swiglu(k_, pool_, scratch_, args_for(gate, x.host(), n_tokens, nullptr),
                           args_for(up, x.host(), n_tokens, nullptr), gate_scratch.host())) {
      cpu::MatmulArgs down_args = args_for(down, gate_scratch.host(), n_tokens, out.host());
      down_args.x_in_column_ranges = true;
      cpu::matmul(k_, pool_, scratch_, down_args);
      return;
    }
    Backend::feed_forward(gate, up, down, x, n_tokens, out, gate_scratch, up_scratch);
  }

  // A few rows per forward pass: decoding them is noise next to the matmuls.
  void get_rows(const WeightMatrix& table, const int32_t* ids, int64_t n, Floats out) override {
    ref::get_rows(table.type, table.data, table.cols, table.row_bytes, ids, n, out.host());
  }

  void rmsnorm(ConstFloats xv, const float* w, int64_t rows, int64_t dim, float eps,
               Floats yv) override {
    const float* x = xv.host();
    float* y = yv.host();
    const int64_t per_task = std::max<int64_t>(1, kParallelElems / std::max<int64_t>(dim, 1));
    pool_.parallel_for(ceil_div(rows, per_task), [&](int64_t task, int) {
      const int64_t r0 = task * per_task, n = std::min(per_task, rows - r0);
      k_.rmsnorm(x + r0 * dim, w, n, dim, eps, y + r0 * dim);
    });
  }

  void rope_neox(Floats xv, int64_t n_tokens, int64_t n_heads, int64_t head_dim,
                 const RopeAngles& rope) override {
    const int64_t half = head_dim / 2;
    update_rope_table(n_tokens, half, rope);
    float* x = xv.host();
    const int64_t per_task =
        std::max<int64_t>(1, kParallelElems / std::max<int64_t>(n_heads * head_dim, 1));
    pool_.parallel_for(ceil_div(n_tokens, per_task), [&](int64_t task, int) {
      const int64_t t0 = task * per_task, t1 = std::min(n_tokens, t0 + per_task);
      for (int64_t t = t0; t < t1; ++t)
        k_.rope_rotate(x + t * n_heads * head_dim, n_heads, head_dim, rope_cos_.data() + t * half,
                       rope_sin_.data() + t * half);
    });
  }

  // One job instead of four: each task norms and rotates whole heads, a token's query heads
  // and then its key heads, so a head is read and written once.
  void qk_norm_rope(const QkNormRope& a) override {
    const int64_t n_tokens = a.n_tokens, n_head = a.n_head, n_head_kv = a.n_head_kv,
                  head_dim = a.head_dim;
    const float eps = a.eps;
    const float *q_norm = a.q_norm, *k_norm = a.k_norm;
    float* q = a.q.host();
    float* k = a.k.host();
    const int64_t half = head_dim / 2;
    update_rope_table(n_tokens, half, a.rope);
    const int64_t heads =
        n_head + n_head_kv;  // a token's rows: its query heads, then its key heads
    const int64_t per_task = std::max<int64_t>(1, kParallelElems / std::max<int64_t>(head_dim, 1));
    const int64_t n_rows = n_tokens * heads;
    pool_.parallel_for_ranges(ceil_div(n_rows, per_task), [&](int64_t task, int) {
      const int64_t r1 = std::min(n_rows, (task + 1) * per_task);
      for (int64_t r = task * per_task; r < r1; ++r) {
        const int64_t t = r / heads, h = r % heads;
        const bool is_q = h < n_head;
        float* x =
            is_q ? q + (t * n_head + h) * head_dim : k + (t * n_head_kv + h - n_head) * head_dim;
        k_.rmsnorm(x, is_q ? q_norm : k_norm, 1, head_dim, eps, x);
        k_.rope_rotate(x, 1, head_dim, rope_cos_.data() + t * half, rope_sin_.data() + t * half);
      }
    });
  }

  // Every sequence's tasks (KV head × query tile) in one job: a decode step's sequences have
  // a few tasks each, too few to keep the threads busy one sequence at a time. In per-thread
  // ranges, so that a thread takes all heads of its sequences (the heads of a block lie side
  // by side) rather than heads handed out in turn: measured in one process alternating
  // steps (three runs; the same binary against itself reads 0.98-1.00), eight sequences at
  // 16+128 positions +4.6-6.8 %, one +0.5-2.7 %, a 1,024-token prompt within the noise.
  void attention_paged(std::span<const PagedAttentionCall> calls,
                       const AttentionShape& s) override {
    auto& args = attn_args_;
    auto& first_task = attn_first_task_;
    args.clear();
    first_task.assign(1, 0);
    for (const PagedAttentionCall& c : calls) {
      cpu::PagedAttentionArgs a;
      a.q = c.q;
      a.kv = c.kv;
      a.positions = c.positions;
      a.n_tokens = c.n_tokens;
      a.n_head = s.n_head;
      a.n_head_kv = s.n_head_kv;
      a.head_dim = s.head_dim;
      a.scale = s.scale;
      a.out = c.out;
      if (!cpu::paged_attention_supported(a)) {
        Backend::attention_paged(std::span<const PagedAttentionCall>(&c, 1), s);
        continue;
      }
      args.push_back(a);
      first_task.push_back(first_task.back() + cpu::paged_attention_tasks(a));
    }
    const int64_t n_tasks = first_task.back();
    // The call holding a task: the last whose first task is not after it.
    auto call_of = [&](int64_t task) {
      return static_cast<size_t>(std::upper_bound(first_task.begin(), first_task.end(), task) -
                                 first_task.begin()) -
             1;
    };
    pool_.parallel_for_ranges(n_tasks, [&](int64_t task, int thread) {
      const size_t i = call_of(task);
      // A thread runs its range front to back, so the task after this one is most likely
      // its next: the kernel asks for that task's first keys and values while it finishes.
      cpu::AttnChunkRef next;
      if (task + 1 < n_tasks) {
        const size_t j = call_of(task + 1);
        next = cpu::paged_attention_first_chunk(args[j], task + 1 - first_task[j]);
      }
      cpu::paged_attention_task(k_, args[i], task - first_task[i],
                                attn_scratch_[static_cast<size_t>(thread)], next);
    });
  }

  // F16, the default KV type, in SIMD (the reference's scalar rounding was ~3 % of an
  // eight-sequence decode step); the other types through the reference. Spread over the
  // threads like the element-wise ops, instead of one thread writing while the others
  // wait (eight sequences +0 to +1.3 %, measured alternating steps).
  void encode_rows(GgmlType dtype, std::span<const KvRowWrite> rows, int64_t n) override {
    const int64_t n_rows = static_cast<int64_t>(rows.size());
    const int64_t per_task = std::max<int64_t>(1, kParallelElems / std::max<int64_t>(n, 1));
    pool_.parallel_for_ranges(ceil_div(n_rows, per_task), [&](int64_t task, int) {
      const auto mine =
          rows.subspan(static_cast<size_t>(task * per_task),
                       static_cast<size_t>(std::min(per_task, n_rows - task * per_task)));
      if (dtype != GgmlType::F16) {
        Backend::encode_rows(dtype, mine, n);
        return;
      }
      for (const KvRowWrite& r : mine) k_.f32_to_f16(r.x, n, reinterpret_cast<uint16_t*>(r.out));
    });
  }

  void swiglu(ConstFloats gate, ConstFloats up, int64_t n, Floats out) override {
    pool_.parallel_for(ceil_div(n, kParallelElems), [&](int64_t task, int) {
      const int64_t i0 = task * kParallelElems;
      k_.swiglu(gate.host() + i0, up.host() + i0, std::min(kParallelElems, n - i0),
                out.host() + i0);
    });
  }

  void add_inplace(Floats x, ConstFloats y, int64_t n) override {
    pool_.parallel_for(ceil_div(n, kParallelElems), [&](int64_t task, int) {
      const int64_t i0 = task * kParallelElems;
      k_.add_inplace(x.host() + i0, y.host() + i0, std::min(kParallelElems, n - i0));
    });
  }

 private:
  // cos/sin of every (token, frequency) of the call, scaled by mscale. A forward pass
  // rotates q and k of every layer at the same positions, so the table is rebuilt only when
  // the positions or frequencies change. The angles are computed in double as in ref.
  void update_rope_table(int64_t n_tokens, int64_t half, const RopeAngles& rope) {
    const int32_t* positions = rope.positions;
    const double* inv_freq = rope.inv_freq;
    const double mscale = rope.mscale;
    const bool same = rope_mscale_ == mscale && rope_freq_.size() == static_cast<size_t>(half) &&
                      std::equal(rope_freq_.begin(), rope_freq_.end(), inv_freq) &&
                      rope_pos_.size() == static_cast<size_t>(n_tokens) &&
                      std::equal(rope_pos_.begin(), rope_pos_.end(), positions);
    if (same) return;
    rope_mscale_ = mscale;
    rope_freq_.assign(inv_freq, inv_freq + half);
    rope_pos_.assign(positions, positions + n_tokens);
    rope_cos_.resize(static_cast<size_t>(n_tokens * half));
    rope_sin_.resize(rope_cos_.size());
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(positions[t]) * inv_freq[i];
        rope_cos_[t * half + i] = static_cast<float>(std::cos(angle) * mscale);
        rope_sin_[t * half + i] = static_cast<float>(std::sin(angle) * mscale);
      }
  }

  ThreadPool& pool_;
  const cpu::CpuKernels& k_;
  cpu::MatmulScratch scratch_;
  // Packed copies of the prepared matrices, by the address of their stored data.
  cpu::PackedArena arena_;
  std::unordered_map<const uint8_t*, std::unique_ptr<cpu::PackedWeights>> packed_;
  cpu::MatmulArgs args_for(const WeightMatrix& w, const float* x, int64_t n_tokens,
                           float* y) const {
    cpu::MatmulArgs a;
    a.type = w.type;
    a.w = w.data;
    a.rows = w.rows;
    a.cols = w.cols;
    a.row_bytes = w.row_bytes;
    a.x = x;
    a.n_tokens = n_tokens;
    a.y = y;
    if (auto it = packed_.find(w.data);
        it != packed_.end() && it->second->rows() == w.rows && it->second->cols() == w.cols)
      a.packed = it->second.get();
    return a;
  }

  std::vector<cpu::MatmulArgs> same_input_args_;     // one matmul_same_input call's matrices
  std::vector<cpu::AttentionScratch> attn_scratch_;  // one per pool thread
  std::vector<cpu::PagedAttentionArgs> attn_args_;   // one attention_paged call's sequences
  std::vector<int64_t> attn_first_task_;             // their first task; last: the task count
  double rope_mscale_ = 0;
  std::vector<double> rope_freq_;
  std::vector<int32_t> rope_pos_;
  std::vector<float> rope_cos_, rope_sin_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(ThreadPool& pool) {
  return make_cpu_backend(pool, best_cpu_isa());
}

std::unique_ptr<Backend> make_cpu_backend(ThreadPool& pool, CpuIsa isa) {
  return std::make_unique<CpuBackend>(pool, isa);
}

}  // namespace duet
