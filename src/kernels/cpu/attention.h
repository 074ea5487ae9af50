// Causal grouped-query attention over a paged KV cache, on the pieces of a CpuKernels table
// (flash-attention style: keys in chunks of kAttnKeys, an online softmax in float, no
// score matrix and no copy of the context). Same contract as ref::attention_paged, whose
// double-precision result it matches to float rounding (tests/unit/cpu_attention_test.cc).
//
// The work splits into independent tasks — one KV head × a tile of query tokens — that
// the caller runs on any threads, each with its own AttentionScratch.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/ggml_type.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/paged_kv_view.h"

namespace duet::cpu {

struct PagedAttentionArgs {
  const float* q = nullptr;            // [n_tokens × n_head × head_dim]
  PagedKvView kv;                      // F32, F16, BF16 or Q8_0
  const int32_t* positions = nullptr;  // query t sees keys 0..positions[t]
  int64_t n_tokens = 0;
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0;
  float scale = 1.0f;
  float* out = nullptr;  // [n_tokens × n_head × head_dim]
};

// Per-thread working memory, grown on first use and reused.
struct AttentionScratch {
  std::vector<float> q, k, v, s, acc, m, l, corr;
  std::vector<int32_t> last;  // per query row: the last position it sees
};

// False for what this kernel does not handle (the caller then uses the reference):
// another KV type, or a head count that does not divide into KV groups.
bool paged_attention_supported(const PagedAttentionArgs& a);

// Tasks of one call; run each exactly once (any order, any thread). `next`: the first chunk
// of the task this thread will likely run after this one (paged_attention_first_chunk), for
// the kernel to ask memory for ahead of time; a hint only, it may be empty or wrong.
int64_t paged_attention_tasks(const PagedAttentionArgs& a);
void paged_attention_task(const CpuKernels& k, const PagedAttentionArgs& a, int64_t task,
                          AttentionScratch& scratch, const AttnChunkRef& next = {});
// The chunk a task reads first, where the decode kernel would read it (F16 / BF16 / Q8_0
// head-major blocks of whole chunks); empty otherwise.
AttnChunkRef paged_attention_first_chunk(const PagedAttentionArgs& a, int64_t task);

}  // namespace duet::cpu
