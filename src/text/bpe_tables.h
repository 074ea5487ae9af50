// The data structures behind Tokenizer's speed (text/bpe_tokenizer.h): GPT-2's byte-level
// alphabet, a flat hash table of merges keyed by the pair of ids, and a bounded cache of
// piece -> ids. Internal to the tokenizer.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace duet {

// GPT-2's byte-level alphabet: byte b is spelled as one printable code point (b itself for
// '!'..'~', 0xA1..0xAC, 0xAE..0xFF; 256 + n for the n-th other byte), so that every byte
// string has a whitespace-free spelling.
std::string byte_level_spelling(uint8_t b);
// The byte that code point `cp` spells, or -1 when `cp` is not in the alphabet.
int byte_of_code_point(uint32_t cp);

// Merges by (left id, right id): open addressing with linear probing, about 16 bytes a
// slot at most half full. Lookups are the inner loop of encoding.
class MergeTable {
 public:
  struct Entry {
    uint64_t key;
    int32_t rank;    // position in the merge list: lower merges first
    int32_t merged;  // id of the token left + right
  };

  explicit MergeTable(size_t n_merges);
  // Keeps the existing entry (the better rank) when the pair is already present.
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged);
  const Entry* find(int32_t left, int32_t right) const {
    const uint64_t key = pack(left, right);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Entry& e = slots_[i];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t pack(int32_t left, int32_t right) {
    return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
  }
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }

  std::vector<Entry> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
};

// One symbol of a piece being merged (a node of a doubly linked list; id -1 once absorbed).
struct MergeSymbol {
  int32_t id;
  int32_t prev;
  int32_t next;
};

// A pair of adjacent symbols that a merge applies to, as it was when found.
struct MergeCandidate {
  int32_t rank;
  int32_t pos;  // index of the left symbol
  int32_t left, right, merged;
  // Heap order: the lowest rank first, then the leftmost position.
  static bool Later(const MergeCandidate& a, const MergeCandidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

// piece -> ids, for pieces up to kMaxPieceBytes. Sharded, each shard behind its own mutex,
// so that threads sharing a Tokenizer rarely wait on each other. A full shard is emptied
// (text repeats locally, so recent pieces are what matter), which bounds memory to about
// kShards * kMaxEntriesPerShard entries.
class PieceCache {
 public:
  static constexpr size_t kMaxPieceBytes = 64;

  // Appends the cached ids of `piece` to *out; false when absent.
  bool get(std::string_view piece, std::vector<int32_t>* out) const;
  void put(std::string_view piece, std::span<const int32_t> ids);

 private:
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxEntriesPerShard = 4096;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> map;
  };
  static size_t shard_of(size_t hash) { return (hash >> 7) % kShards; }

  std::array<Shard, kShards> shards_;
};

}  // namespace duet
