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
#include <vector>

namespace duet {

// GPT-2's byte-level alphabet: byte b is spelled as one printable code point (b itself for
// '!'..'~', 0xA1..0xAC, 0xAE..0xFF; 256 + n for the n-th other byte), so that every byte
// string has a whitespace-free spelling.
std::string byte_level_spelling(uint8_t b);
// The byte that code point `cp` spells, or -1 when `cp` is not in the alphabet.
int byte_of_code_point(uint32_t cp);

// Merges by (left id, right id): open addressing with linear probing, 16-byte slots at
// most 60% full. Lookups are the inner loop of encoding.
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
  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

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

// piece -> ids for short pieces (most pieces of natural text): a fixed array of slots,
// each holding one piece and its ids inline, found by hash and simply overwritten by a
// newer piece that hashes to the same slot. No allocation after construction; memory is
// fixed (kSlots * 64 bytes = 4 MiB). Slots are guarded by striped mutexes, so threads
// sharing a Tokenizer rarely wait on each other.
class PieceCache {
 public:
  static constexpr size_t kMaxPieceBytes = 22;
  static constexpr size_t kMaxIds = 8;

  PieceCache();
  // Appends the cached ids of `piece` to *out; false when absent.
  bool get(std::string_view piece, std::vector<int32_t>* out) const;
  void put(std::string_view piece, std::span<const int32_t> ids);

 private:
  static constexpr size_t kSlots = size_t{1} << 16;
  static constexpr size_t kStripes = 64;
  struct Slot {
    uint64_t hash = 0;
    uint8_t len = 0;  // 0: empty (cached pieces have at least 2 bytes)
    uint8_t n_ids = 0;
    char piece[kMaxPieceBytes];
    int32_t ids[kMaxIds];
  };
  static_assert(sizeof(Slot) == 64, "one cache line per slot");

  std::vector<Slot> slots_;
  mutable std::array<std::mutex, kStripes> stripes_;
};

}  // namespace duet
