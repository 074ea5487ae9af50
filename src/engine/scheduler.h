// Chooses what one engine step computes. Each step fills a token budget with the decode
// token of every running sequence first, then chunks of prompts (chunked prefill), so a
// long prompt delays other users' streams by at most one chunk. While others decode, a
// chunk deep into a long prompt is also cut by its attention work (key_cost), which grows
// with the positions before it, so that the streams' step stays about one budget long. When the KV
// cache runs out of blocks, the newest running sequence is preempted (its blocks freed, its tokens
// recomputed later) — never a crash, never a deadlock.
//
// Plain CPU bookkeeping over BlockManager: no model, testable on its own.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/sequence.h"
#include "kv/block_manager.h"

namespace duet {

struct SchedulerConfig {
  int64_t max_batch_tokens = 512;  // tokens computed per step, decode + prefill
  int64_t max_running = 64;        // sequences holding KV blocks at once
  // The work of one prompt token attending to one earlier position, in units of one
  // token's weight work (prompt_key_cost). With decode tokens in a step, its prompt chunks
  // count n·(1 + key_cost·(start + (n+1)/2)) against the budget instead of n. 0: tokens only.
  double key_cost = 0;
};

// The work of a prompt chunk of n tokens from position `start`, in token-equivalents, as
// SchedulerConfig::key_cost counts it: n·(1 + key_cost·(start + (n+1)/2)).
double prompt_chunk_work(int64_t n, int64_t start, double key_cost);
// The longest such chunk whose work fits in `budget`; at least 1, so a prompt always moves,
// and at most `budget`.
int64_t prompt_chunk_within(int64_t budget, int64_t start, double key_cost);

struct ScheduledChunk {
  Sequence* seq = nullptr;
  int64_t start = 0;    // first position computed
  int64_t count = 0;    // tokens computed
  bool sample = false;  // reaches the end of the known tokens: the step samples for it
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<Sequence*> preempted;  // sent back to waiting in this step
  int64_t n_tokens = 0;
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, BlockManager& blocks);

  // Queues a sequence (state waiting). Its prompt must fit in the whole cache.
  void add(Sequence* seq);
  // Takes a sequence out wherever it is (finished or cancelled) and releases its blocks.
  void remove(Sequence* seq);

  StepPlan schedule();
  // Records that the plan's chunks were computed: advances n_computed and registers newly
  // full blocks in the prefix cache.
  void commit(const StepPlan& plan);

  int64_t n_running() const { return static_cast<int64_t>(running_.size()); }
  int64_t n_waiting() const { return static_cast<int64_t>(waiting_.size()); }
  int64_t n_preemptions() const { return preemptions_; }
  const BlockManager& blocks() const { return blocks_; }

 private:
  bool ensure_blocks(Sequence* seq, int64_t n_positions);
  void release_blocks(Sequence* seq);
  void match_prefix(Sequence* seq);
  void preempt(Sequence* seq, StepPlan& plan);

  SchedulerConfig config_;
  BlockManager& blocks_;
  std::vector<Sequence*> running_;  // in admission order
  std::deque<Sequence*> waiting_;   // front first
  int64_t next_arrival_ = 0;
  int64_t preemptions_ = 0;
};

}  // namespace duet
