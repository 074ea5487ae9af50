// Block manager: refcounts, the prefix cache's hash chain and LRU eviction.
#include "kv/block_manager.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace duet {
namespace {

std::vector<int32_t> toks(int32_t start, int n) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = start + i;
  return t;
}

TEST(BlockManager, AllocatesEveryBlockOnceThenRunsOut) {
  BlockManager m(4, 16);
  std::set<int32_t> got;
  for (int i = 0; i < 4; ++i) {
    auto b = m.allocate();
    ASSERT_TRUE(b.has_value());
    EXPECT_TRUE(got.insert(*b).second);
  }
  EXPECT_FALSE(m.allocate().has_value());
  EXPECT_EQ(m.stats().used_blocks, 4);
  m.release(*got.begin());
  EXPECT_EQ(m.available(), 1);
  EXPECT_TRUE(m.check_invariants());
}

TEST(BlockManager, PrefixCacheSharesVerifiedBlocks) {
  BlockManager m(4, 4);
  const auto t = toks(10, 4);
  const uint64_t h = block_chain_hash(0, t);
  int32_t b = *m.allocate();
  m.register_full(b, h, t);
  auto hit = m.lookup(h, t);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, b);
  m.retain(b);
  EXPECT_EQ(m.refcount(b), 2);
  // Same hash, other tokens (a forged collision): never shared.
  EXPECT_FALSE(m.lookup(h, toks(11, 4)).has_value());
  // The chain makes the same tokens after another parent a different key.
  EXPECT_NE(block_chain_hash(h, t), block_chain_hash(0, t));
  m.release(b);
  m.release(b);
  // Released but cached: still found, counted as reclaimable, not used.
  EXPECT_EQ(m.stats().cached_idle_blocks, 1);
  EXPECT_TRUE(m.lookup(h, t).has_value());
  m.retain(b);  // picked up again from the LRU list
  EXPECT_EQ(m.stats().cached_idle_blocks, 0);
  m.release(b);
  const auto s = m.stats();
  EXPECT_EQ(s.prefix_hits, 2);  // the forged collision is a query, not a hit
  EXPECT_EQ(s.prefix_queries, 3);
  EXPECT_TRUE(m.check_invariants());
}

TEST(BlockManager, EvictsLeastRecentlyReleasedCachedBlockLast) {
  BlockManager m(3, 2);
  std::vector<int32_t> blocks;
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 3; ++i) {
    int32_t b = *m.allocate();
    const auto t = toks(100 * i, 2);
    hashes.push_back(block_chain_hash(0, t));
    m.register_full(b, hashes.back(), t);
    blocks.push_back(b);
  }
  for (int i : {1, 0, 2}) m.release(blocks[i]);  // release order: 1 oldest
  const int32_t b = *m.allocate();
  EXPECT_EQ(b, blocks[1]);
  EXPECT_FALSE(m.lookup(hashes[1], toks(100, 2)).has_value());
  EXPECT_TRUE(m.lookup(hashes[0], toks(0, 2)).has_value());
  EXPECT_EQ(m.stats().evictions, 1);
  EXPECT_TRUE(m.check_invariants());
}

// Thousands of random operations against a model of who holds what.
TEST(BlockManager, RandomOperationsKeepInvariants) {
  std::mt19937 rng(42);
  BlockManager m(64, 4);
  std::vector<int32_t> held;  // one entry per reference we hold
  for (int step = 0; step < 20000; ++step) {
    const int op = rng() % 4;
    if (op == 0) {
      if (auto b = m.allocate())
        held.push_back(*b);
      else
        EXPECT_EQ(m.available(), 0);
    } else if (op == 1 && !held.empty()) {
      const size_t i = rng() % held.size();
      m.release(held[i]);
      held.erase(held.begin() + i);
    } else if (op == 2 && !held.empty()) {
      const int32_t b = held[rng() % held.size()];
      const auto t = toks(static_cast<int32_t>(rng() % 50), 4);
      m.register_full(b, block_chain_hash(0, t), t);
    } else if (op == 3) {
      const auto t = toks(static_cast<int32_t>(rng() % 50), 4);
      if (auto b = m.lookup(block_chain_hash(0, t), t)) {
        m.retain(*b);
        held.push_back(*b);
      }
    }
    ASSERT_TRUE(m.check_invariants()) << "step " << step;
    ASSERT_EQ(m.stats().used_blocks,
              static_cast<int64_t>(std::set<int32_t>(held.begin(), held.end()).size()));
  }
  for (int32_t b : held) m.release(b);
  EXPECT_EQ(m.stats().used_blocks, 0);
  EXPECT_EQ(m.available(), 64);
}

}  // namespace
}  // namespace duet
