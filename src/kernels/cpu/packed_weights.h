// Weights repacked at load time so that one register holds the same columns of 16 rows.
//
// A stored GGUF matrix keeps each row's blocks together, so a kernel that multiplies one
// row at a time must reduce every 16-lane product horizontally and re-load the activation
// for each row. In a packed matrix, the lanes of a register are 16 consecutive rows: one
// broadcast activation word feeds 16 rows in one instruction, the block scales of 16 rows
// are one vector, and each output lane is finished without a horizontal sum. The layout
// is read front to back, so decode still streams the weights in order.
//
// Every layout groups rows by 16 (the last group padded with zero-scale rows) and stores a
// group's column blocks one after another; a "word" is 64 bytes holding four consecutive
// columns of each of the 16 rows (byte 4r + i: row r, column i), i.e. one 512-bit register
// whose lane r feeds row r. All units are multiples of 64 bytes, so with a 64-byte aligned
// group every register load is aligned. Codes are stored unsigned.
//
// kQ8_0x16 (from Q8_0): one 1088-byte unit per pair of 32-column blocks (2p, 2p+1; a
// missing last block is zero):
//   uint16 d[2][16]       fp16 scale of block 2p+i of row r
//   word   codes[2][8]    codes[i][j]: columns 32(2p+i) + 4j … + 3, as w + 128
//
// kQ4_Kx16 (from Q4_K): one 2368-byte unit per super-block of 256 columns:
//   uint16 d[16], dmin[16]   fp16 super-scales of row r
//   uint8  sc[8][16]         6-bit scale of sub-block j (32 columns) of row r
//   uint8  m[4][16][2]       6-bit mins of sub-blocks 2i and 2i+1 of row r, adjacent
//                            (widened to int16, a pair is one VPDPWSSD lane)
//   word   nib[8][4]         sub-block j: nib[j][k] holds word k (columns 32j + 4k …) in
//                            its low nibbles and word k + 4 in its high nibbles
//
// kQ6_Kx16 (from Q6_K): one 3392-byte unit per super-block of 256 columns:
//   float  d[16]             super-scale of row r
//   int8   sc[8][16][2]      scales of 16-column sub-blocks 2i and 2i+1 of row r, adjacent
//   then per 32 columns u (0..7), 384 bytes, word w holding columns 32u + 4w … + 3:
//   word   full[4]           full[w], byte b: word w's code in bits 0..5, the top two bits
//                            of word w + 4's code in bits 6..7
//   word   nib[2]            nib[a]: the low four bits of word 4 + 2a in the low nibbles,
//                            of word 5 + 2a in the high nibbles
//                            (words 0..3 unpack with an AND each, words 4..7 with a
//                            shift, a VPTERNLOG and an AND each, plus a shift of each
//                            nibble word: 18 instructions for the eight)
//
// kBF16x16 (from BF16, cols a multiple of 32): one word per pair of columns (2p, 2p+1):
//   lane r = the two bf16 values of row r, as VDPBF16PS pairs them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "gguf/ggml_type.h"

namespace duet::cpu {

constexpr int kPackRows = 16;

// Bytes of one unit of each layout above: the packer and the tiles both step by these.
constexpr size_t kPackedWordBytes = 64;  // four columns of 16 rows
constexpr size_t kQ8_0x16UnitBytes = 2 * 32 + 2 * 8 * kPackedWordBytes;
constexpr size_t kQ4_Kx16UnitBytes = 2 * 32 + 2 * 8 * 16 + 8 * 4 * kPackedWordBytes;
constexpr size_t kQ6_Kx16UnitBytes = 16 * 4 + 8 * 16 * 2 + 8 * 6 * kPackedWordBytes;
static_assert(kQ8_0x16UnitBytes == 1088 && kQ4_Kx16UnitBytes == 2368 && kQ6_Kx16UnitBytes == 3392);

enum class PackedLayout { kNone, kQ8_0x16, kQ4_Kx16, kQ6_Kx16, kBF16x16 };

// Memory for packed matrices: anonymous mappings aligned to 2 MiB and advised for
// transparent huge pages (decode walks every packed byte once per token, and with 4 KiB
// pages that is a TLB miss every 4 KiB), handed out front to back in 64-byte aligned
// slices so that small matrices share huge pages. Freed when the arena is destroyed.
class PackedArena {
 public:
  PackedArena() = default;
  PackedArena(const PackedArena&) = delete;
  PackedArena& operator=(const PackedArena&) = delete;
  ~PackedArena();

  uint8_t* allocate(size_t bytes);

 private:
  struct Mapping {
    void* base;
    size_t length;
  };
  uint8_t* map_chunk(size_t size);  // size: a multiple of 2 MiB
  std::vector<Mapping> mappings_;
  uint8_t* next_ = nullptr;  // free space of the newest chunk: [next_, end_)
  uint8_t* end_ = nullptr;
};

class PackedWeights {
 public:
  PackedLayout layout() const { return layout_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t groups() const { return (rows_ + kPackRows - 1) / kPackRows; }
  size_t group_bytes() const { return group_bytes_; }
  const uint8_t* group(int64_t g) const { return data_ + static_cast<size_t>(g) * group_bytes_; }
  size_t bytes() const { return static_cast<size_t>(groups()) * group_bytes_; }

  // Packs `rows` rows of `cols` values stored as `type` (row r at w + r·row_bytes) into
  // memory from `arena` (which must outlive the result; nullptr: a private one), on the
  // pool's threads when one is given. Returns nullptr when `layout` does not apply to
  // `type` or cols is not a whole number of blocks.
  static std::unique_ptr<PackedWeights> pack(PackedLayout layout, GgmlType type, const uint8_t* w,
                                             int64_t rows, int64_t cols, size_t row_bytes,
                                             PackedArena* arena = nullptr,
                                             ThreadPool* pool = nullptr);

 private:
  PackedLayout layout_ = PackedLayout::kNone;
  int64_t rows_ = 0, cols_ = 0;
  size_t group_bytes_ = 0;
  std::unique_ptr<PackedArena> own_arena_;
  uint8_t* data_ = nullptr;
};

}  // namespace duet::cpu
