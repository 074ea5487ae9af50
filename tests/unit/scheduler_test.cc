// Scheduler: budgets, chunked prefill, prefix reuse, preemption, cancellation — and a
// randomized run checking that no block leaks or is freed twice.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "engine/engine.h"

namespace duet {
namespace {

std::unique_ptr<Sequence> make_seq(int64_t id, int n_prompt, int32_t first_token = 1) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  for (int i = 0; i < n_prompt; ++i) s->tokens.push_back(first_token + i);
  s->n_prompt = n_prompt;
  return s;
}

// Plays the engine: commits the plan and appends one "sampled" token to each sampling chunk.
void run_step(Scheduler& sch, const StepPlan& plan, int32_t token = 7) {
  sch.commit(plan);
  for (const auto& c : plan.chunks)
    if (c.sample) c.seq->tokens.push_back(token);
}

TEST(Scheduler, DecodeFirstThenChunkedPrefill) {
  BlockManager blocks(100, 16);
  Scheduler sch({/*max_batch_tokens=*/64, /*max_running=*/8}, blocks);
  auto a = make_seq(1, 10), b = make_seq(2, 200);
  sch.add(a.get());
  StepPlan p = sch.schedule();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].count, 10);
  EXPECT_TRUE(p.chunks[0].sample);
  run_step(sch, p);
  sch.add(b.get());
  // a decodes one token; b's prompt fills the rest of the budget, in chunks.
  for (int step = 0; step < 4; ++step) {
    p = sch.schedule();
    ASSERT_EQ(p.chunks.size(), 2u);
    EXPECT_EQ(p.chunks[0].seq, a.get());
    EXPECT_EQ(p.chunks[0].count, 1);
    EXPECT_EQ(p.chunks[1].seq, b.get());
    EXPECT_EQ(p.chunks[1].count, step < 3 ? 63 : 200 - 3 * 63);
    EXPECT_EQ(p.chunks[1].sample, step == 3);
    EXPECT_LE(p.n_tokens, 64);
    run_step(sch, p);
  }
  EXPECT_EQ(b->n_computed, 200);
  sch.remove(a.get());
  sch.remove(b.get());
  EXPECT_EQ(blocks.stats().used_blocks, 0);
}

// The chunk length for a budget of work: the longest n with n·(1 + c·(start + (n+1)/2))
// within the budget, against a search over every n.
TEST(Scheduler, PromptChunkWithinTheBudgetOfWork) {
  EXPECT_EQ(prompt_chunk_within(512, 0, 0.0), 512);
  EXPECT_EQ(prompt_chunk_within(512, 100000, 0.0), 512);
  EXPECT_EQ(prompt_chunk_within(1, 100000, 1e-3), 1);
  EXPECT_EQ(prompt_chunk_within(512, 10000000, 1e-3), 1);  // never stuck
  for (double c : {1e-5, 5.2e-4, 1e-2})
    for (int64_t start : {0, 1, 700, 4096, 16384, 32768})
      for (int64_t budget : {2, 7, 64, 512, 2048}) {
        auto work = [&](int64_t n) {
          return static_cast<double>(n) *
                 (1 + c * (static_cast<double>(start) + static_cast<double>(n + 1) / 2));
        };
        int64_t want = 1;
        while (want < budget && work(want + 1) <= static_cast<double>(budget)) ++want;
        const int64_t got = prompt_chunk_within(budget, start, c);
        // The closed form may land one short where the work meets the budget exactly.
        EXPECT_TRUE(got == want || (got == want - 1 && work(want) >= budget - 1e-6))
            << "c " << c << " start " << start << " budget " << budget << ": " << got << " vs "
            << want;
      }
}

// With a stream decoding, a long prompt's chunks shrink as its attention work grows, so each
// step stays about one budget of work; alone, the prompt takes the whole budget.
TEST(Scheduler, DeepPromptChunksShrinkWhileOthersDecode) {
  constexpr double kCost = 5.2e-4;  // the 0.6B shape's (prompt_key_cost)
  BlockManager blocks(2000, 16);
  Scheduler sch({/*max_batch_tokens=*/512, /*max_running=*/8, kCost}, blocks);
  auto alone = make_seq(1, 3000);
  sch.add(alone.get());
  for (int64_t done = 0; done < 3000; done += 512) {
    const StepPlan p = sch.schedule();
    ASSERT_EQ(p.chunks.size(), 1u);
    EXPECT_EQ(p.chunks[0].count, std::min<int64_t>(512, 3000 - done));
    run_step(sch, p);
  }
  // Now `alone` decodes, and a 16,000-token prompt arrives.
  auto deep = make_seq(2, 16000, 5);
  sch.add(deep.get());
  int64_t last_count = 512, steps = 0;
  while (deep->n_computed < 16000) {
    const StepPlan p = sch.schedule();
    ASSERT_EQ(p.chunks.size(), 2u);
    EXPECT_EQ(p.chunks[0].seq, alone.get());
    const ScheduledChunk& c = p.chunks[1];
    ASSERT_EQ(c.seq, deep.get());
    const double work =
        static_cast<double>(c.count) *
        (1 + kCost * (static_cast<double>(c.start) + static_cast<double>(c.count + 1) / 2));
    EXPECT_LE(work, 511.0 + 1e-9) << "at " << c.start;  // the decode token took one
    EXPECT_LE(c.count, last_count) << "chunks only shrink as the prompt goes deeper";
    if (c.start + c.count < 16000) {
      EXPECT_GE(work, 511.0 * 0.9) << "a chunk uses its budget";
    }
    last_count = c.count;
    run_step(sch, p);
    ++steps;
  }
  EXPECT_LT(last_count, 100);  // at 15,900 positions: 511 / (1 + 5.2e-4 · 15,950) ≈ 55
  EXPECT_GT(steps, 16000 / 511);
  sch.remove(alone.get());
  sch.remove(deep.get());
  EXPECT_EQ(blocks.stats().used_blocks, 0);
}

// Qwen3-0.6B's shape: 28 layers × 16 heads × 128 × 2 against 440M multiply-adds of
// matrices a token, times 2.
TEST(Scheduler, PromptKeyCostOfTheQwen3Shape) {
  Qwen3Config c;
  c.n_embd = 1024;
  c.n_layer = 28;
  c.n_head = 16;
  c.n_head_kv = 8;
  c.head_dim = 128;
  c.n_ff = 3072;
  const double weights = 28.0 * (1024.0 * (2048 + 2048) + 2048.0 * 1024 + 3.0 * 1024 * 3072);
  EXPECT_NEAR(prompt_key_cost(c), 2 * (28.0 * 16 * 128 * 2) / weights, 1e-12);
  EXPECT_NEAR(prompt_key_cost(c), 5.21e-4, 0.01e-4);
  EXPECT_EQ(prompt_key_cost(Qwen3Config{}), 0.0);
}

TEST(Scheduler, SharedPrefixIsComputedOnce) {
  BlockManager blocks(200, 16);
  Scheduler sch({512, 8}, blocks);
  auto a = make_seq(1, 100);
  sch.add(a.get());
  run_step(sch, sch.schedule());
  // Same first 100 tokens, then different ones.
  auto b = make_seq(2, 130);
  sch.add(b.get());
  StepPlan p = sch.schedule();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[1].seq, b.get());
  EXPECT_EQ(p.chunks[1].start, 96);  // 6 full blocks of 16 reused
  EXPECT_EQ(b->n_prefix_hit_tokens, 96);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a->block_table[i], b->block_table[i]);
  EXPECT_EQ(blocks.refcount(a->block_table[0]), 2);
  run_step(sch, p);
  sch.remove(a.get());
  sch.remove(b.get());
  EXPECT_EQ(blocks.stats().used_blocks, 0);
  EXPECT_GT(blocks.stats().cached_idle_blocks, 0);
  EXPECT_TRUE(blocks.check_invariants());
}

TEST(Scheduler, WholePromptCachedStillComputesLastToken) {
  BlockManager blocks(20, 16);
  Scheduler sch({512, 8}, blocks);
  auto a = make_seq(1, 32);
  sch.add(a.get());
  run_step(sch, sch.schedule());
  sch.remove(a.get());
  auto b = make_seq(2, 32);
  sch.add(b.get());
  StepPlan p = sch.schedule();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].start, 16);  // the block holding the last token is recomputed
  EXPECT_EQ(p.chunks[0].count, 16);
  EXPECT_TRUE(p.chunks[0].sample);
}

TEST(Scheduler, PreemptsNewestWhenBlocksRunOut) {
  BlockManager blocks(4, 4);  // 16 positions in all
  Scheduler sch({64, 8}, blocks);
  auto a = make_seq(1, 7), b = make_seq(2, 7, 100);
  sch.add(a.get());
  sch.add(b.get());
  run_step(sch, sch.schedule());  // both prefilled: 2 blocks each, 8 tokens each now
  run_step(sch, sch.schedule());  // position 7 fits the second block; 9 tokens each now
  // Both need a third block for position 8: only the older keeps running.
  StepPlan p = sch.schedule();
  ASSERT_EQ(p.preempted.size(), 1u);
  EXPECT_EQ(p.preempted[0], b.get());
  EXPECT_EQ(b->state, SequenceState::kWaiting);
  EXPECT_EQ(b->n_computed, 0);
  EXPECT_EQ(sch.n_preemptions(), 1);
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].seq, a.get());
  run_step(sch, p);
  sch.remove(a.get());
  // b comes back and recomputes what it had (prompt + its two sampled tokens), minus
  // any of its full blocks that survived in the prefix cache.
  p = sch.schedule();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].seq, b.get());
  EXPECT_EQ(p.chunks[0].start + p.chunks[0].count, 9);
  EXPECT_TRUE(p.chunks[0].sample);
  sch.remove(b.get());
  EXPECT_EQ(blocks.stats().used_blocks, 0);
}

TEST(Scheduler, CancelInEveryPhaseFreesBlocks) {
  BlockManager blocks(50, 8);
  Scheduler sch({16, 8}, blocks);
  auto queued = make_seq(1, 40), prefill = make_seq(2, 40, 500), decode = make_seq(3, 4, 900);
  sch.add(decode.get());
  run_step(sch, sch.schedule());
  sch.add(prefill.get());
  run_step(sch, sch.schedule());  // prefill partly done (budget 16)
  EXPECT_GT(prefill->n_computed, 0);
  EXPECT_LT(prefill->n_computed, 40);
  sch.add(queued.get());
  sch.remove(queued.get());   // cancelled in the queue
  sch.remove(prefill.get());  // cancelled mid-prefill
  sch.remove(decode.get());   // cancelled while decoding
  EXPECT_EQ(blocks.stats().used_blocks, 0);
  EXPECT_EQ(sch.n_running(), 0);
  EXPECT_EQ(sch.n_waiting(), 0);
  EXPECT_TRUE(blocks.check_invariants());
  EXPECT_TRUE(sch.schedule().empty());
}

// Random arrivals, cancellations, completions and a small pool that forces preemption:
// the budget always holds, every held block is accounted for, and at the end the pool is idle.
TEST(Scheduler, RandomizedNoLeaksNoDoubleFrees) {
  std::mt19937 rng(7);
  BlockManager blocks(24, 8);
  Scheduler sch({96, 12}, blocks);
  std::vector<std::unique_ptr<Sequence>> live;
  int64_t next_id = 0;
  for (int step = 0; step < 5000; ++step) {
    if (rng() % 2 == 0 && live.size() < 40) {
      // Prompts often share a prefix so the cache is exercised.
      auto s =
          make_seq(next_id++, 1 + rng() % 60, (rng() % 2) ? 1 : static_cast<int32_t>(rng() % 1000));
      sch.add(s.get());
      live.push_back(std::move(s));
    }
    if (!live.empty() && rng() % 7 == 0) {
      const size_t i = rng() % live.size();
      sch.remove(live[i].get());
      live.erase(live.begin() + i);
    }
    StepPlan p = sch.schedule();
    ASSERT_LE(p.n_tokens, 96);
    for (const auto& c : p.chunks) {
      ASSERT_EQ(c.seq->state, SequenceState::kRunning);
      ASSERT_EQ(c.start, c.seq->n_computed);
      ASSERT_GE(static_cast<int64_t>(c.seq->block_table.size()) * 8, c.start + c.count);
    }
    run_step(sch, p, static_cast<int32_t>(rng() % 5));
    // Finish sequences that reached their length; cap so no sequence outgrows the pool.
    for (size_t i = 0; i < live.size();) {
      Sequence* s = live[i].get();
      const auto length = static_cast<int64_t>(s->tokens.size());
      if (length >= s->n_prompt + 1 + (s->id % 60) || length >= 150) {
        sch.remove(s);
        live.erase(live.begin() + i);
      } else {
        ++i;
      }
    }
    ASSERT_TRUE(blocks.check_invariants()) << "step " << step;
    int64_t held = 0;
    std::vector<int> refs(24, 0);
    for (const auto& s : live)
      for (int32_t b : s->block_table) refs[b]++;
    for (int b = 0; b < 24; ++b) {
      ASSERT_EQ(refs[b], blocks.refcount(b)) << "block " << b << " at step " << step;
      held += refs[b] > 0;
    }
    ASSERT_EQ(held, blocks.stats().used_blocks);
  }
  for (auto& s : live) sch.remove(s.get());
  EXPECT_EQ(blocks.stats().used_blocks, 0);
  EXPECT_EQ(blocks.available(), 24);
  EXPECT_GT(sch.n_preemptions(), 0);
  EXPECT_GT(blocks.stats().prefix_hits, 0);
}

}  // namespace
}  // namespace duet
