// Bookkeeping of the paged KV cache: which blocks are free, who holds each block, and
// which full blocks hold which tokens (the prefix cache). Plain CPU code with no tensors,
// testable without a model: the engine asks it for blocks, the model writes K/V into them.
//
// A block holds `block_size` consecutive positions of one sequence. Blocks are refcounted:
// a full block whose tokens match another request's prefix is shared, not recomputed.
// When the last holder releases a full, registered block it stays in the prefix cache
// (refcount 0, on an LRU list) until its memory is needed for something else.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace duet {

// Hash of a full block given the hash of the block before it (0 for the first block), so a
// key identifies the whole prefix up to and including this block.
uint64_t block_chain_hash(uint64_t parent, std::span<const int32_t> tokens);

struct BlockManagerStats {
  int64_t total_blocks = 0;
  int64_t free_blocks = 0;         // never used or evicted: available at once
  int64_t cached_idle_blocks = 0;  // refcount 0 but holding a cached prefix (reclaimable)
  int64_t used_blocks = 0;         // refcount > 0
  int64_t prefix_queries = 0;      // blocks looked up
  int64_t prefix_hits = 0;         // blocks found
  int64_t evictions = 0;
};

class BlockManager {
 public:
  BlockManager(int64_t n_blocks, int64_t block_size);

  int64_t block_size() const { return block_size_; }
  int64_t n_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  // Blocks that allocate() can hand out now (free plus reclaimable cached ones).
  int64_t available() const;

  // A block for new tokens, refcount 1. Prefers never-used blocks, then evicts the least
  // recently released cached block. nullopt when every block is held.
  std::optional<int32_t> allocate();
  // Adds a holder to a block (sharing a cached prefix).
  void retain(int32_t block);
  // Drops a holder. A registered full block at refcount 0 stays cached (LRU); others free.
  void release(int32_t block);

  // Prefix cache. lookup() returns the block registered under `hash` whose stored tokens
  // equal `tokens` (a hash collision never shares a wrong block), or nullopt; it counts the
  // query and the hit. The caller retains what it uses.
  std::optional<int32_t> lookup(uint64_t hash, std::span<const int32_t> tokens);
  // Records that `block` now holds the full `tokens` whose chain hash is `hash`. A block
  // already registered, or a hash already taken by another block, is left as it is.
  void register_full(int32_t block, uint64_t hash, std::span<const int32_t> tokens);

  int32_t refcount(int32_t block) const { return blocks_[block].refs; }
  BlockManagerStats stats() const;
  // Checks every internal invariant (lists, counts, index); for tests.
  bool check_invariants() const;

 private:
  struct Block {
    int32_t refs = 0;
    bool registered = false;
    uint64_t hash = 0;
    std::vector<int32_t> tokens;           // when registered
    std::list<int32_t>::iterator lru_pos;  // when registered and refs == 0
  };
  void unregister(int32_t block);

  int64_t block_size_;
  std::vector<Block> blocks_;
  std::vector<int32_t> free_;  // unregistered, refs == 0
  std::list<int32_t> lru_;     // registered, refs == 0; front = oldest
  std::unordered_map<uint64_t, int32_t> by_hash_;
  int64_t queries_ = 0, hits_ = 0, evictions_ = 0;
};

}  // namespace duet
