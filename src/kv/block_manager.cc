#include "kv/block_manager.h"

#include <algorithm>
#include <cassert>

namespace duet {

uint64_t block_chain_hash(uint64_t parent, std::span<const int32_t> tokens) {
  // FNV-1a over the parent hash and the token ids, then a final avalanche (splitmix64).
  uint64_t h = 1469598103934665603ull ^ parent;
  auto mix = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) h = (h ^ ((v >> (8 * i)) & 0xFF)) * 1099511628211ull;
  };
  for (int32_t t : tokens) mix(static_cast<uint32_t>(t));
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h;
}

BlockManager::BlockManager(int64_t n_blocks, int64_t block_size)
    : block_size_(block_size), blocks_(static_cast<size_t>(n_blocks)) {
  free_.reserve(static_cast<size_t>(n_blocks));
  // Hand out low ids first, so a lightly used pool touches the start of KV memory only.
  for (int64_t b = n_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

int64_t BlockManager::available() const { return static_cast<int64_t>(free_.size() + lru_.size()); }

std::optional<int32_t> BlockManager::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    unregister(b);
    ++evictions_;
  } else {
    return std::nullopt;
  }
  assert(blocks_[b].refs == 0);
  blocks_[b].refs = 1;
  return b;
}

void BlockManager::retain(int32_t b) {
  Block& blk = blocks_[b];
  if (blk.refs == 0) {
    // Only a cached block can be picked up again at refcount 0.
    assert(blk.registered);
    lru_.erase(blk.lru_pos);
  }
  ++blk.refs;
}

void BlockManager::release(int32_t b) {
  Block& blk = blocks_[b];
  assert(blk.refs > 0 && "block released more often than held");
  if (--blk.refs > 0) return;
  if (blk.registered) {
    lru_.push_back(b);
    blk.lru_pos = std::prev(lru_.end());
  } else {
    free_.push_back(b);
  }
}

std::optional<int32_t> BlockManager::lookup(uint64_t hash, std::span<const int32_t> tokens) {
  ++queries_;
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const Block& blk = blocks_[it->second];
  if (blk.tokens.size() != tokens.size() ||
      !std::equal(tokens.begin(), tokens.end(), blk.tokens.begin()))
    return std::nullopt;  // a collision: never trust the hash alone
  ++hits_;
  return it->second;
}

void BlockManager::register_full(int32_t b, uint64_t hash, std::span<const int32_t> tokens) {
  Block& blk = blocks_[b];
  assert(blk.refs > 0);
  if (blk.registered || by_hash_.count(hash)) return;
  blk.registered = true;
  blk.hash = hash;
  blk.tokens.assign(tokens.begin(), tokens.end());
  by_hash_[hash] = b;
}

void BlockManager::unregister(int32_t b) {
  Block& blk = blocks_[b];
  by_hash_.erase(blk.hash);
  blk.registered = false;
  blk.tokens.clear();
}

BlockManagerStats BlockManager::stats() const {
  BlockManagerStats s;
  s.total_blocks = n_blocks();
  s.free_blocks = static_cast<int64_t>(free_.size());
  s.cached_idle_blocks = static_cast<int64_t>(lru_.size());
  s.used_blocks = s.total_blocks - s.free_blocks - s.cached_idle_blocks;
  s.prefix_queries = queries_;
  s.prefix_hits = hits_;
  s.evictions = evictions_;
  return s;
}

bool BlockManager::check_invariants() const {
  int64_t zero_unregistered = 0, zero_registered = 0;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& blk = blocks_[b];
    if (blk.refs < 0) return false;
    if (blk.refs == 0) (blk.registered ? zero_registered : zero_unregistered)++;
    if (blk.registered) {
      auto it = by_hash_.find(blk.hash);
      if (it == by_hash_.end() || it->second != static_cast<int32_t>(b)) return false;
      if (static_cast<int64_t>(blk.tokens.size()) != block_size_) return false;
    }
  }
  if (zero_unregistered != static_cast<int64_t>(free_.size())) return false;
  if (zero_registered != static_cast<int64_t>(lru_.size())) return false;
  for (int32_t b : free_)
    if (blocks_[b].refs != 0 || blocks_[b].registered) return false;
  for (int32_t b : lru_)
    if (blocks_[b].refs != 0 || !blocks_[b].registered) return false;
  for (const auto& [h, b] : by_hash_)
    if (!blocks_[b].registered || blocks_[b].hash != h) return false;
  return true;
}

}  // namespace duet
