// One request's tokens and its place in the KV cache, as the scheduler sees it.
#pragma once

#include <cstdint>
#include <vector>

namespace duet {

enum class SequenceState { kWaiting, kRunning, kFinished };

struct Sequence {
  int64_t id = 0;
  int64_t arrival = 0;          // admission order; the newest is preempted first
  std::vector<int32_t> tokens;  // prompt, then generated (and injected) tokens
  int64_t n_prompt = 0;
  int64_t n_computed = 0;              // leading tokens whose K/V are in the cache
  std::vector<int32_t> block_table;    // block of positions [i·B, (i+1)·B)
  std::vector<uint64_t> block_hashes;  // chain hash of each full, computed block
  int64_t n_prefix_hit_tokens = 0;     // prompt tokens reused from the prefix cache
  int64_t n_preemptions = 0;
  SequenceState state = SequenceState::kWaiting;

  int64_t n_uncomputed() const { return static_cast<int64_t>(tokens.size()) - n_computed; }
};

}  // namespace duet
