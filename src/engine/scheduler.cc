#include "engine/scheduler.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace duet {

double prompt_chunk_work(int64_t n, int64_t start, double key_cost) {
  const double count = static_cast<double>(n);
  return count * (1 + key_cost * (static_cast<double>(start) + (count + 1) / 2));
}

int64_t prompt_chunk_within(int64_t budget, int64_t start, double key_cost) {
  if (budget <= 1 || key_cost <= 0) return std::max<int64_t>(budget, 1);
  // n + c·n·(start + (n+1)/2) ≤ budget, i.e. (c/2)·n² + (1 + c·(start + 1/2))·n − budget ≤ 0.
  const double a = key_cost / 2, b = 1 + key_cost * (static_cast<double>(start) + 0.5);
  const double n = (-b + std::sqrt(b * b + 4 * a * static_cast<double>(budget))) / (2 * a);
  return std::clamp<int64_t>(static_cast<int64_t>(n), 1, budget);
}

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks)
    : config_(config), blocks_(blocks) {}

void Scheduler::add(Sequence* seq) {
  seq->state = SequenceState::kWaiting;
  seq->arrival = next_arrival_++;
  waiting_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), seq), waiting_.end());
  release_blocks(seq);
  seq->state = SequenceState::kFinished;
}

void Scheduler::release_blocks(Sequence* seq) {
  for (int32_t b : seq->block_table) blocks_.release(b);
  seq->block_table.clear();
  seq->block_hashes.clear();
  seq->n_computed = 0;
}

// Grows the block table to cover positions [0, n_positions). All or nothing.
bool Scheduler::ensure_blocks(Sequence* seq, int64_t n_positions) {
  const int64_t bs = blocks_.block_size();
  const int64_t need = (n_positions + bs - 1) / bs - static_cast<int64_t>(seq->block_table.size());
  if (need <= 0) return true;
  if (blocks_.available() < need) return false;
  for (int64_t i = 0; i < need; ++i) seq->block_table.push_back(*blocks_.allocate());
  return true;
}

// Reuses cached full blocks of the sequence's leading tokens. The block holding the last
// known token is never taken from the cache, so at least one token is computed and the
// step has logits to sample from.
void Scheduler::match_prefix(Sequence* seq) {
  assert(seq->block_table.empty() && seq->n_computed == 0);
  const int64_t bs = blocks_.block_size();
  const int64_t max_blocks = (static_cast<int64_t>(seq->tokens.size()) - 1) / bs;
  uint64_t parent = 0;
  for (int64_t i = 0; i < max_blocks; ++i) {
    std::span<const int32_t> toks(seq->tokens.data() + i * bs, static_cast<size_t>(bs));
    const uint64_t h = block_chain_hash(parent, toks);
    auto b = blocks_.lookup(h, toks);
    if (!b) break;
    blocks_.retain(*b);
    seq->block_table.push_back(*b);
    seq->block_hashes.push_back(h);
    parent = h;
  }
  seq->n_computed = static_cast<int64_t>(seq->block_table.size()) * bs;
  seq->n_prefix_hit_tokens = std::min(seq->n_computed, seq->n_prompt);
}

void Scheduler::preempt(Sequence* seq, StepPlan& plan) {
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  release_blocks(seq);
  seq->state = SequenceState::kWaiting;
  seq->n_preemptions++;
  ++preemptions_;
  waiting_.push_front(seq);
  plan.preempted.push_back(seq);
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  int64_t budget = config_.max_batch_tokens;

  // 1. Decode: every running sequence past its prompt gets its pending token(s), oldest
  //    first. Short of blocks, the newest running sequence gives its blocks back.
  std::vector<Sequence*> decoding;
  for (Sequence* s : running_)
    if (s->n_computed >= s->n_prompt && s->n_uncomputed() > 0) decoding.push_back(s);
  for (Sequence* s : decoding) {
    if (s->state != SequenceState::kRunning) continue;  // preempted earlier in this loop
    if (budget <= 0) break;
    const int64_t count = std::min(s->n_uncomputed(), budget);
    bool ok = ensure_blocks(s, s->n_computed + count);
    while (!ok) {
      Sequence* victim = running_.back();
      preempt(victim, plan);
      if (victim == s) break;
      ok = ensure_blocks(s, s->n_computed + count);
    }
    if (!ok) continue;
    plan.chunks.push_back(
        {s, s->n_computed, count, s->n_computed + count == static_cast<int64_t>(s->tokens.size())});
    budget -= count;
  }

  // 2. Prefill chunks of running sequences, then admit waiting ones (FCFS), while the
  //    budget and the free blocks last. A prompt chunk never preempts anyone. When
  //    streams wait on this step, a chunk deep into a prompt is cut by its attention work
  //    too; with none waiting, a prompt takes the whole budget.
  const bool streams_wait = !plan.chunks.empty();
  auto schedule_prefill = [&](Sequence* s) -> bool {
    const int64_t bs = blocks_.block_size();
    const double key_cost = streams_wait ? config_.key_cost : 0.0;
    int64_t count =
        std::min(s->n_uncomputed(), prompt_chunk_within(budget, s->n_computed, key_cost));
    const int64_t coverable =
        (static_cast<int64_t>(s->block_table.size()) + blocks_.available()) * bs - s->n_computed;
    count = std::min(count, coverable);
    if (count <= 0) return false;
    const bool ok = ensure_blocks(s, s->n_computed + count);
    assert(ok);
    (void)ok;
    plan.chunks.push_back(
        {s, s->n_computed, count, s->n_computed + count == static_cast<int64_t>(s->tokens.size())});
    // What the chunk took of the budget: its tokens, and their attention work when counted.
    const double work = prompt_chunk_work(count, s->n_computed, key_cost);
    budget -= std::clamp<int64_t>(static_cast<int64_t>(std::ceil(work)), count, budget);
    return true;
  };
  for (Sequence* s : running_) {
    if (budget <= 0) break;
    if (s->n_computed < s->n_prompt && s->n_uncomputed() > 0) schedule_prefill(s);
  }
  // A step that had to preempt is short of blocks: admitting anyone now would only thrash.
  while (plan.preempted.empty() && budget > 0 && !waiting_.empty() &&
         n_running() < config_.max_running) {
    Sequence* s = waiting_.front();
    if (s->block_table.empty()) match_prefix(s);
    if (!schedule_prefill(s)) {
      // Not even one token fits now: give back the cached prefix so it cannot pin blocks
      // while waiting, and try again next step.
      release_blocks(s);
      break;
    }
    waiting_.pop_front();
    s->state = SequenceState::kRunning;
    running_.push_back(s);
  }
  for (const auto& c : plan.chunks) plan.n_tokens += c.count;
  return plan;
}

void Scheduler::commit(const StepPlan& plan) {
  const int64_t bs = blocks_.block_size();
  for (const ScheduledChunk& c : plan.chunks) {
    Sequence* s = c.seq;
    assert(c.start == s->n_computed);
    s->n_computed += c.count;
    while (static_cast<int64_t>(s->block_hashes.size()) < s->n_computed / bs) {
      const size_t i = s->block_hashes.size();
      std::span<const int32_t> toks(s->tokens.data() + i * bs, static_cast<size_t>(bs));
      const uint64_t h = block_chain_hash(i == 0 ? 0 : s->block_hashes[i - 1], toks);
      blocks_.register_full(s->block_table[i], h, toks);
      s->block_hashes.push_back(h);
    }
  }
}

}  // namespace duet
