#include "text/tokenizer/bpe_tables.h"

#include <algorithm>
#include <cstring>

#include "text/tokenizer/unicode.h"

namespace duet {
namespace {

// byte -> code point of its spelling. Every code point is below 0x144.
constexpr std::array<uint16_t, 256> make_byte_code_points() {
  std::array<uint16_t, 256> t{};
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool itself =
        (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    t[b] = static_cast<uint16_t>(itself ? b : 256 + n++);
  }
  return t;
}
constexpr std::array<uint16_t, 256> kByteCodePoints = make_byte_code_points();

constexpr size_t kAlphabetEnd = 0x144;
constexpr std::array<int16_t, kAlphabetEnd> make_code_point_bytes() {
  std::array<int16_t, kAlphabetEnd> t{};
  for (auto& x : t) x = -1;
  for (int b = 0; b < 256; ++b) t[kByteCodePoints[b]] = static_cast<int16_t>(b);
  return t;
}
constexpr std::array<int16_t, kAlphabetEnd> kCodePointBytes = make_code_point_bytes();

}  // namespace

std::string byte_level_spelling(uint8_t b) {
  std::string s;
  append_utf8(&s, kByteCodePoints[b]);
  return s;
}

int byte_of_code_point(uint32_t cp) { return cp < kAlphabetEnd ? kCodePointBytes[cp] : -1; }

MergeTable::MergeTable(size_t n_merges) {
  // At most 60% full: short probe runs, and Qwen3's 151k merges fit in 4 MiB.
  size_t capacity = 16;
  int bits = 4;
  while (capacity * 3 < n_merges * 5) capacity *= 2, ++bits;
  slots_.assign(capacity, Entry{kEmpty, 0, 0});
  mask_ = capacity - 1;
  shift_ = 64 - bits;
}

void MergeTable::insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  const uint64_t key = pack(left, right);
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    Entry& e = slots_[i];
    if (e.key == key) return;
    if (e.key == kEmpty) {
      e = Entry{key, rank, merged};
      return;
    }
  }
}

PieceCache::PieceCache() : slots_(kSlots) {}

bool PieceCache::get(std::string_view piece, std::vector<int32_t>* out) const {
  if (piece.size() > kMaxPieceBytes) return false;
  const uint64_t hash = std::hash<std::string_view>{}(piece);
  const size_t i = hash & (kSlots - 1);
  const Slot& slot = slots_[i];
  std::lock_guard<std::mutex> lock(stripes_[i % kStripes]);
  if (slot.hash != hash || slot.len != piece.size() ||
      std::memcmp(slot.piece, piece.data(), piece.size()) != 0)
    return false;
  out->insert(out->end(), slot.ids, slot.ids + slot.n_ids);
  return true;
}

void PieceCache::put(std::string_view piece, std::span<const int32_t> ids) {
  if (piece.size() > kMaxPieceBytes || piece.size() < 2 || ids.size() > kMaxIds) return;
  const uint64_t hash = std::hash<std::string_view>{}(piece);
  const size_t i = hash & (kSlots - 1);
  Slot& slot = slots_[i];
  std::lock_guard<std::mutex> lock(stripes_[i % kStripes]);
  slot.hash = hash;
  slot.len = static_cast<uint8_t>(piece.size());
  slot.n_ids = static_cast<uint8_t>(ids.size());
  std::memcpy(slot.piece, piece.data(), piece.size());
  std::copy(ids.begin(), ids.end(), slot.ids);
}

}  // namespace duet
