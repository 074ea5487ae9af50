#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

namespace duet::cpu {
namespace {

constexpr std::align_val_t kAlign{64};

// Rows per task are a multiple of this, so that for T = 1 two tasks never write the same
// 64-byte line of y.
constexpr int64_t kRowQuantum = 16;
// Tokens per prefill task: a task's activations (64 × ≤ 10 KB rows) stay in L2 while it
// walks its weight rows four at a time.
constexpr int64_t kPrefillTokens = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

uint8_t* MatmulScratch::get(size_t bytes) {
  if (bytes > size_) {
    buf_.reset(static_cast<uint8_t*>(::operator new(bytes, kAlign)));
    size_ = bytes;
  }
  return buf_.get();
}

void MatmulScratch::Free::operator()(uint8_t* p) const { ::operator delete(p, kAlign); }

bool matmul_supports(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::IQ4_NL:
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::IQ4_XS:
      return true;
    default:
      return false;
  }
}

ActFormat matmul_act_format(const CpuKernels& k, GgmlType type) {
  const WeightKernels* wk = k.for_type(type);
  assert(wk != nullptr);
  return wk->act;
}

void convert_activations(const CpuKernels& k, ActFormat format, const float* x, int64_t n_tokens,
                         int64_t cols, uint8_t* out) {
  const ConvertRowFn convert = k.converter(format);
  assert(convert != nullptr);
  const size_t stride = act_row_bytes(format, cols);
  for (int64_t t = 0; t < n_tokens; ++t) convert(x + t * cols, cols, out + t * stride);
}

std::unique_ptr<PackedWeights> pack_for_kernels(const CpuKernels& k, GgmlType type,
                                                const uint8_t* w, int64_t rows, int64_t cols,
                                                size_t row_bytes, PackedArena* arena,
                                                ThreadPool* pool) {
  const WeightKernels* wk = k.for_type(type);
  if (wk == nullptr || wk->packed_tile == nullptr) return nullptr;
  return PackedWeights::pack(wk->packed, type, w, rows, cols, row_bytes, arena, pool);
}

namespace {

// Packed weights: tasks of whole 16-row groups × token blocks. Few tokens (one block): a
// task is one group, each tile takes every token (the weights stream once), and the groups
// run in per-thread ranges (ThreadPool::parallel_for_ranges) so that each thread streams
// one long run of the matrix. Measured in one process alternating every two steps (Q4_K_M
// 0.6B, two threads) against 16 tasks of up to 16 groups handed out in turn: one sequence
// +3 % and eight +10 % in one of the machine's states, +22-27 % and +18 % in the other
// (one fixed half per thread, which the ranges equal); the same halves cut into 16-group
// pieces taken alternately lose 10-13 %, so it is the long runs that count. Many tokens:
// token blocks of kPrefillTokens, so that a group (≤ 52 KB for 3072 columns) is loaded
// once per block and stays in L1/L2 while the tiles walk the block's tokens.
struct PackedPlan {
  int64_t token_block = 0, n_token_blocks = 0, group_block = 0, n_group_blocks = 0;
  int64_t tasks() const { return n_token_blocks * n_group_blocks; }
  bool in_ranges() const { return n_token_blocks == 1; }
};

PackedPlan plan_packed(const MatmulArgs& a, int n_threads) {
  const int64_t T = a.n_tokens, groups = a.packed->groups();
  PackedPlan p;
  p.token_block = T <= kPackedTileTokens ? T : std::min(T, kPrefillTokens);
  p.n_token_blocks = ceil_div(T, p.token_block);
  const int64_t want_tasks = 8 * static_cast<int64_t>(n_threads);
  p.group_block =
      p.in_ranges()
          ? 1
          : std::clamp<int64_t>(ceil_div(groups, ceil_div(want_tasks, p.n_token_blocks)), 1, 16);
  p.n_group_blocks = ceil_div(groups, p.group_block);
  return p;
}

void run_packed_task(const WeightKernels& wk, const MatmulArgs& a, const PackedPlan& p,
                     const uint8_t* xa, size_t xs, int64_t task) {
  const PackedWeights& w = *a.packed;
  const int64_t T = a.n_tokens, groups = w.groups();
  const int64_t g0 = (task % p.n_group_blocks) * p.group_block;
  const int64_t t0 = (task / p.n_group_blocks) * p.token_block;
  const int64_t g1 = std::min(groups, g0 + p.group_block), t1 = std::min(T, t0 + p.token_block);
  for (int64_t g = g0; g < g1; ++g) {
    const int nrows = static_cast<int>(std::min<int64_t>(kPackRows, a.rows - g * kPackRows));
    for (int64_t t = t0; t < t1; t += kPackedTileTokens) {
      const int nt = static_cast<int>(std::min<int64_t>(kPackedTileTokens, t1 - t));
      wk.packed_tile(w.group(g), a.cols, nrows, xa + t * xs, xs, nt,
                     a.y + t * a.rows + g * kPackRows, a.rows);
    }
  }
}

bool reads_packed(const WeightKernels& wk, const MatmulArgs& a) {
  return a.packed != nullptr && wk.packed_tile != nullptr && a.packed->layout() == wk.packed;
}

// Columns of a chunk that convert_columns handles: whole blocks of every format.
constexpr int64_t kConvertChunk = 256;
// A chunk converted as a row of its own fits this buffer in every format.
constexpr size_t kChunkRowBytes = 512;
static_assert(act_row_bytes(ActFormat::kQ8x256, kConvertChunk) <= kChunkRowBytes &&
              act_row_bytes(ActFormat::kQ8x32, kConvertChunk) <= kChunkRowBytes);

// Converts columns [c0, c1) of one row (c0 a multiple of kConvertChunk, c1 − c0 ≤ it and a
// whole number of the format's blocks) into their places in the converted row `out`:
// the piece is converted as a row of its own and its fields copied over, which gives the
// bytes of converting the whole row, as every field belongs to one block.
void convert_columns(ConvertRowFn convert, ActFormat act, const float* x, int64_t cols, int64_t c0,
                     int64_t c1, uint8_t* out) {
  const int64_t width = c1 - c0;
  if (act == ActFormat::kBf16) {
    convert(x + c0, width, out + 2 * c0);
    return;
  }
  alignas(64) uint8_t piece[kChunkRowBytes];
  convert(x + c0, width, piece);
  std::memcpy(out + c0, piece, static_cast<size_t>(width));  // the codes
  if (act == ActFormat::kQ8x32) {
    // d, then s: one float each per 32 columns.
    const size_t n = static_cast<size_t>(width / 32) * 4, at = static_cast<size_t>(c0 / 32) * 4;
    std::memcpy(out + cols + at, piece + width, n);
    std::memcpy(out + cols + (cols / 32) * 4 + at, piece + width + n, n);
    return;
  }
  const Q8x256Offsets o = q8x256_offsets(cols), p = q8x256_offsets(width);
  std::memcpy(out + o.d + c0 / 256 * 4, piece + p.d, static_cast<size_t>(width / 256) * 4);
  std::memcpy(out + o.bsums + c0 / 16 * 2, piece + p.bsums, static_cast<size_t>(width / 16) * 2);
  std::memcpy(out + o.s32 + c0 / 32 * 4, piece + p.s32, static_cast<size_t>(width / 32) * 4);
  std::memcpy(out + o.sums32 + c0 / 32 * 2, piece + p.sums32, static_cast<size_t>(width / 32) * 2);
  std::memcpy(out + o.q6_start + c0 / 16 * 4, piece + p.q6_start,
              static_cast<size_t>(width / 16) * 4);
  std::memcpy(out + o.fits16 + c0 / 256, piece + p.fits16, static_cast<size_t>(width / 256));
}

// x converted once into the rows the kernels read (in parallel over tokens, or for
// x_in_column_ranges over column chunks); float input is read as it is. Sets *xs to the
// converted row stride.
const uint8_t* convert_input(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch,
                             ActFormat act, const float* x, int64_t T, int64_t cols,
                             bool x_in_column_ranges, size_t* xs) {
  if (act == ActFormat::kF32) {
    *xs = static_cast<size_t>(cols) * 4;
    return reinterpret_cast<const uint8_t*>(x);
  }
  *xs = act_row_bytes(act, cols);
  uint8_t* buf = scratch.get(*xs * static_cast<size_t>(T));
  // One token keeps its conversion on the calling thread, with no job (not measured split).
  if (x_in_column_ranges && T >= 2 && T <= kPackedTileTokens) {
    // Measured against the token split, alternating every step (Q4_K_M 0.6B, two threads,
    // the down projection after matmul_swiglu): eight sequences +1.3-2.1 % when the threads
    // sit on two dies, +0.1-2.2 % on one. A chunk's scales and sums share cache lines with
    // the next chunk's, which the other thread may write; that is in the numbers.
    const ConvertRowFn convert = k.converter(act);
    const size_t stride = *xs;
    pool.parallel_for_ranges(ceil_div(cols, kConvertChunk), [&](int64_t chunk, int) {
      const int64_t c0 = chunk * kConvertChunk, c1 = std::min(cols, c0 + kConvertChunk);
      for (int64_t t = 0; t < T; ++t)
        convert_columns(convert, act, x + t * cols, cols, c0, c1, buf + t * stride);
    });
    return buf;
  }
  // Up to 16 tokens a task, but a small batch still spread over every thread.
  const int64_t per_task = std::clamp<int64_t>(ceil_div(T, pool.size()), 1, 16);
  pool.parallel_for(ceil_div(T, per_task), [&](int64_t task, int) {
    const int64_t t0 = task * per_task;
    const int64_t n = std::min(per_task, T - t0);
    convert_activations(k, act, x + t0 * cols, n, cols, buf + t0 * *xs);
  });
  return buf;
}

}  // namespace

void convert_activations_by_column_chunks(const CpuKernels& k, ActFormat format, const float* x,
                                          int64_t n_tokens, int64_t cols, uint8_t* out) {
  const ConvertRowFn convert = k.converter(format);
  assert(convert != nullptr);
  const size_t stride = act_row_bytes(format, cols);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t c0 = 0; c0 < cols; c0 += kConvertChunk)
      convert_columns(convert, format, x + t * cols, cols, c0, std::min(cols, c0 + kConvertChunk),
                      out + t * stride);
}

void matmul(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch, const MatmulArgs& a) {
  const WeightKernels* wk = k.for_type(a.type);
  assert(wk != nullptr && wk->tile != nullptr);
  const int64_t T = a.n_tokens, rows = a.rows, cols = a.cols;
  if (T <= 0 || rows <= 0) return;

  // 1. Activations, converted once.
  size_t xs = 0;
  const uint8_t* xa =
      convert_input(k, pool, scratch, wk->act, a.x, T, cols, a.x_in_column_ranges, &xs);

  if (reads_packed(*wk, a)) {
    const PackedPlan plan = plan_packed(a, pool.size());
    pool.parallel_for_either(plan.tasks(), plan.in_ranges(), [&](int64_t task, int) {
      run_packed_task(*wk, a, plan, xa, xs, task);
    });
    return;
  }

  // 2. Tasks of row_block rows × token_block tokens, enough of them to keep every thread
  // busy to the end (tasks are claimed dynamically).
  //
  // With few tokens (decode, or a small batch of sequences decoding together) the weights
  // stream from memory once, and a core streams rows one after another about twice as fast
  // as four interleaved rows (measured: 22.8 vs 10.5 GB/s on one Zen 4 core), so such tiles
  // take one row and up to kTileMaxSingleRow tokens: a row's scales are decoded once for
  // all of them. Longer runs of tokens (prefill) use 4 × 4 tiles, which reuse each loaded
  // activation for four rows. Where the activations are float or bf16 (as large as a
  // weight row per token) that reuse wins sooner: measured on BF16 with 16 sequences,
  // 135 tok/s with 4 × 4 tiles against 99 with single rows, while Q4_K went 105 → 146.
  const bool quantized_acts = wk->act == ActFormat::kQ8x32 || wk->act == ActFormat::kQ8x256;
  const bool few_tokens = T <= (quantized_acts ? 2 * kTileMaxSingleRow : kTileMax);
  const int64_t row_step = few_tokens ? 1 : kTileMax;
  const int64_t token_step = few_tokens ? kTileMaxSingleRow : kTileMax;
  const int64_t token_block = few_tokens ? T : std::min(T, kPrefillTokens);
  const int64_t n_token_blocks = ceil_div(T, token_block);
  const int64_t want_tasks = 8 * static_cast<int64_t>(pool.size());
  const int64_t max_rows = few_tokens ? 256 : 64;
  int64_t row_block = ceil_div(rows, std::max<int64_t>(1, ceil_div(want_tasks, n_token_blocks)));
  row_block = std::clamp(ceil_div(row_block, kRowQuantum) * kRowQuantum, kRowQuantum, max_rows);
  const int64_t n_row_blocks = ceil_div(rows, row_block);

  const MatmulTileFn tile = wk->tile;
  pool.parallel_for(n_row_blocks * n_token_blocks, [&](int64_t task, int) {
    const int64_t r0 = (task % n_row_blocks) * row_block;
    const int64_t t0 = (task / n_row_blocks) * token_block;
    const int64_t r1 = std::min(rows, r0 + row_block), t1 = std::min(T, t0 + token_block);
    for (int64_t r = r0; r < r1; r += row_step) {
      const int nr = static_cast<int>(std::min<int64_t>(row_step, r1 - r));
      for (int64_t t = t0; t < t1; t += token_step) {
        const int nt = static_cast<int>(std::min<int64_t>(token_step, t1 - t));
        tile(a.w + r * a.row_bytes, a.row_bytes, nr, xa + t * xs, xs, nt, cols, a.y + t * rows + r,
             rows);
      }
    }
  });
}

void matmul_same_input(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch,
                       std::span<const MatmulArgs> args) {
  if (args.empty()) return;
  const MatmulArgs& first = args.front();
  const ActFormat act = k.for_type(first.type)->act;
  constexpr size_t kMax = 4;
  bool together = first.n_tokens > 0 && args.size() <= kMax;
  for (const MatmulArgs& a : args)
    together = together && reads_packed(*k.for_type(a.type), a) && k.for_type(a.type)->act == act &&
               a.x == first.x && a.n_tokens == first.n_tokens && a.cols == first.cols && a.rows > 0;
  if (!together) {
    for (const MatmulArgs& a : args) matmul(k, pool, scratch, a);
    return;
  }
  size_t xs = 0;
  const uint8_t* xa =
      convert_input(k, pool, scratch, act, first.x, first.n_tokens, first.cols, false, &xs);
  // Every matrix's tasks in one job: the threads stay busy across the matrices' ends.
  PackedPlan plans[kMax];
  int64_t first_task[kMax + 1] = {0};
  for (size_t i = 0; i < args.size(); ++i) {
    plans[i] = plan_packed(args[i], pool.size());
    first_task[i + 1] = first_task[i] + plans[i].tasks();
  }
  // Same inputs, so all plans have the same token blocks; the matrices follow each other.
  pool.parallel_for_either(first_task[args.size()], plans[0].in_ranges(), [&](int64_t task, int) {
    size_t i = 0;
    while (task >= first_task[i + 1]) ++i;
    run_packed_task(*k.for_type(args[i].type), args[i], plans[i], xa, xs, task - first_task[i]);
  });
}

bool matmul_swiglu(const CpuKernels& k, ThreadPool& pool, MatmulScratch& scratch,
                   const MatmulArgs& gate, const MatmulArgs& up, float* out) {
  const WeightKernels* wg = k.for_type(gate.type);
  const WeightKernels* wu = k.for_type(up.type);
  const int64_t T = gate.n_tokens, rows = gate.rows, cols = gate.cols;
  if (wg == nullptr || wu == nullptr || !reads_packed(*wg, gate) || !reads_packed(*wu, up) ||
      wg->act != wu->act || gate.x != up.x || up.n_tokens != T || up.rows != rows ||
      up.cols != cols || T < 1 || T > kPackedTileTokens || rows < 1)
    return false;
  size_t xs = 0;
  const uint8_t* xa = convert_input(k, pool, scratch, wg->act, gate.x, T, cols, false, &xs);
  // In the threads' ranges like a decode matmul's groups: each thread streams one long run
  // of each matrix, and the gate and up values stay on the thread that computed them.
  // Before, a SwiGLU job split by tokens read half of each thread's gate/up lines, so the
  // next layer's stores to them had to take the lines back from the other core first:
  // across dies that costs ~15 ns a line (in a harness the same gate/up job ran 182-202 µs
  // when its previous outputs had been read by the other thread, 164-177 µs when not;
  // docs/PERF.md). Against the gate/up job followed by the SwiGLU job, alternating every
  // step (Q4_K_M 0.6B, two threads): eight sequences +2.6-3.5 % on two dies, +0.4-1.7 % on
  // one; one sequence −1 to +3 %.
  pool.parallel_for_ranges(gate.packed->groups(), [&](int64_t g, int) {
    constexpr int kTile = kPackedTileTokens * kPackRows;
    alignas(64) float gate_tile[kTile], up_tile[kTile];
    const int nrows = static_cast<int>(std::min<int64_t>(kPackRows, rows - g * kPackRows));
    if (nrows < kPackRows) {  // the tiles store only the real rows; keep the rest defined
      std::fill(gate_tile, gate_tile + kTile, 0.0f);
      std::fill(up_tile, up_tile + kTile, 0.0f);
    }
    wg->packed_tile(gate.packed->group(g), cols, nrows, xa, xs, static_cast<int>(T), gate_tile,
                    kPackRows);
    wu->packed_tile(up.packed->group(g), cols, nrows, xa, xs, static_cast<int>(T), up_tile,
                    kPackRows);
    k.swiglu(gate_tile, up_tile, T * kPackRows, gate_tile);
    for (int64_t t = 0; t < T; ++t)
      std::memcpy(out + t * rows + g * kPackRows, gate_tile + t * kPackRows,
                  static_cast<size_t>(nrows) * sizeof(float));
  });
  return true;
}

}  // namespace duet::cpu
