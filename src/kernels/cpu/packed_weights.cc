#include "kernels/cpu/packed_weights.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "base/half.h"
#include "kernels/cpu/kquant_scales.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kWord = kPackedWordBytes;  // four columns of 16 rows
static_assert(kQ8_0x16UnitBytes % 64 == 0 && kQ4_Kx16UnitBytes % 64 == 0 &&
              kQ6_Kx16UnitBytes % 64 == 0);

constexpr size_t kArenaChunk = size_t{64} << 20;

void pack_q8_0(const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes, int64_t g0,
               int64_t g1, uint8_t* out) {
  const int64_t nb = cols / 32, pairs = (nb + 1) / 2;
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t b = 0; b < 2 * pairs; ++b) {
      uint8_t* unit = out + (g * pairs + b / 2) * kQ8_0x16UnitBytes;
      auto* d = reinterpret_cast<uint16_t*>(unit + 32 * (b % 2));
      uint8_t* codes = unit + 64 + 512 * (b % 2);
      for (int r = 0; r < kPackRows; ++r) {
        const int64_t row = g * kPackRows + r;
        if (row >= rows || b >= nb) {  // padding: scale 0, code 128 (the value 0)
          d[r] = 0;
          for (int j = 0; j < 8; ++j) std::memset(codes + j * 64 + 4 * r, 0x80, 4);
          continue;
        }
        const auto* blk = reinterpret_cast<const BlockQ8_0*>(w + row * row_bytes) + b;
        d[r] = blk->d;
        for (int j = 0; j < 8; ++j)
          for (int i = 0; i < 4; ++i)
            codes[j * 64 + 4 * r + i] = static_cast<uint8_t>(blk->qs[4 * j + i]) ^ 0x80;
      }
    }
  }
}

// Codes 0..15 of the 256 columns of a Q4_K super-block (see ref::dequantize).
void q4_k_codes(const BlockQ4_K& b, uint8_t q[256]) {
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) {
      q[64 * g + l] = b.qs[32 * g + l] & 0x0F;
      q[64 * g + 32 + l] = b.qs[32 * g + l] >> 4;
    }
}

// Codes 0..63 of the 256 columns of a Q6_K super-block (value = d·sc[c/16]·(q − 32)).
void q6_k_codes(const BlockQ6_K& b, uint8_t q[256]) {
  for (int n = 0; n < 2; ++n) {
    const uint8_t* ql = b.ql + 64 * n;
    const uint8_t* qh = b.qh + 32 * n;
    uint8_t* y = q + 128 * n;
    for (int l = 0; l < 32; ++l) {
      y[l] = (ql[l] & 0x0F) | ((qh[l] & 3) << 4);
      y[l + 32] = (ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4);
      y[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
      y[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
    }
  }
}

// Words k and k + 4 of the 32 columns at q[·][c0] as nibbles: out[k] byte 4r + i =
// q[r][c0 + 4k + i] | q[r][c0 + 16 + 4k + i] << 4 (low 4 bits of each code).
void put_nibble_words(const uint8_t (*q)[256], int c0, uint8_t* out) {
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < kPackRows; ++r)
      for (int i = 0; i < 4; ++i)
        out[k * kWord + 4 * r + i] = static_cast<uint8_t>((q[r][c0 + 4 * k + i] & 0x0F) |
                                                          (q[r][c0 + 16 + 4 * k + i] & 0x0F) << 4);
}

void pack_q4_k(const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes, int64_t g0,
               int64_t g1, uint8_t* out) {
  const int64_t nsb = cols / 256;
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t sb = 0; sb < nsb; ++sb) {
      uint8_t* unit = out + (g * nsb + sb) * kQ4_Kx16UnitBytes;
      auto* d = reinterpret_cast<uint16_t*>(unit);
      uint8_t* sc = unit + 64;
      uint8_t* mn = sc + 128;
      uint8_t q[kPackRows][256] = {};
      for (int r = 0; r < kPackRows; ++r) {
        const int64_t row = g * kPackRows + r;
        uint8_t s8[8] = {}, m8[8] = {};
        d[r] = d[16 + r] = 0;  // padding rows: zero scales, zero codes
        if (row < rows) {
          const auto& blk = reinterpret_cast<const BlockQ4_K*>(w + row * row_bytes)[sb];
          d[r] = blk.d;
          d[16 + r] = blk.dmin;
          unpack_k4_scales(blk.scales, s8, m8);
          q4_k_codes(blk, q[r]);
        }
        for (int j = 0; j < 8; ++j) {
          sc[16 * j + r] = s8[j];
          mn[32 * (j / 2) + 2 * r + j % 2] = m8[j];
        }
      }
      for (int j = 0; j < 8; ++j) put_nibble_words(q, 32 * j, unit + 320 + j * 4 * kWord);
    }
  }
}

void pack_q6_k(const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes, int64_t g0,
               int64_t g1, uint8_t* out) {
  const int64_t nsb = cols / 256;
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t sb = 0; sb < nsb; ++sb) {
      uint8_t* unit = out + (g * nsb + sb) * kQ6_Kx16UnitBytes;
      auto* d = reinterpret_cast<float*>(unit);
      auto* sc = reinterpret_cast<int8_t*>(unit + 64);
      uint8_t q[kPackRows][256] = {};
      for (int r = 0; r < kPackRows; ++r) {
        const int64_t row = g * kPackRows + r;
        d[r] = 0.0f;  // padding rows: zero scales, zero codes
        for (int k = 0; k < 16; ++k) sc[32 * (k / 2) + 2 * r + k % 2] = 0;
        if (row >= rows) continue;
        const auto& blk = reinterpret_cast<const BlockQ6_K*>(w + row * row_bytes)[sb];
        d[r] = fp16_to_float(blk.d);
        for (int k = 0; k < 16; ++k) sc[32 * (k / 2) + 2 * r + k % 2] = blk.scales[k];
        q6_k_codes(blk, q[r]);
      }
      // Word w of unit u holds columns 32u + 4w … + 3. Words 0..3 keep their whole 6-bit
      // code in bits 0..5 and the top two bits of word w + 4 in bits 6..7; words 4..7 keep
      // their low four bits in the nibbles of two more words (see the header).
      for (int u = 0; u < 8; ++u) {
        uint8_t* words = unit + 320 + u * 6 * kWord;
        for (int r = 0; r < kPackRows; ++r)
          for (int i = 0; i < 4; ++i) {
            const uint8_t* c = q[r] + 32 * u + i;  // c[4w]: word w's code for row r
            for (int w = 0; w < 4; ++w)
              words[w * kWord + 4 * r + i] =
                  static_cast<uint8_t>(c[4 * w] | (c[4 * (w + 4)] >> 4) << 6);
            for (int a = 0; a < 2; ++a)
              words[(4 + a) * kWord + 4 * r + i] = static_cast<uint8_t>(
                  (c[4 * (4 + 2 * a)] & 0x0F) | (c[4 * (5 + 2 * a)] & 0x0F) << 4);
          }
      }
    }
  }
}

void pack_bf16(const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes, int64_t g0,
               int64_t g1, uint8_t* out) {
  const int64_t pairs = cols / 2;
  for (int64_t g = g0; g < g1; ++g) {
    auto* dst = reinterpret_cast<uint32_t*>(out + g * pairs * kWord);
    for (int r = 0; r < kPackRows; ++r) {
      const int64_t row = g * kPackRows + r;
      for (int64_t p = 0; p < pairs; ++p) {
        uint32_t v = 0;  // padding rows: zeros
        if (row < rows) std::memcpy(&v, w + row * row_bytes + 4 * p, 4);
        dst[p * kPackRows + r] = v;
      }
    }
  }
}

}  // namespace

PackedArena::~PackedArena() {
  for (const Mapping& m : mappings_) munmap(m.base, m.length);
}

uint8_t* PackedArena::map_chunk(size_t size) {
  const size_t length = size + kHugePage;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  mappings_.push_back({p, length});
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto* start = reinterpret_cast<uint8_t*>((addr + kHugePage - 1) / kHugePage * kHugePage);
#ifdef MADV_HUGEPAGE
  madvise(start, size, MADV_HUGEPAGE);  // advice only: without THP the memory still works
#endif
  return start;
}

uint8_t* PackedArena::allocate(size_t bytes) {
  bytes = (bytes + 63) / 64 * 64;
  if (bytes > kArenaChunk)  // a large matrix: a mapping of its own
    return map_chunk((bytes + kHugePage - 1) / kHugePage * kHugePage);
  if (bytes > static_cast<size_t>(end_ - next_)) {
    // A new chunk. What was left of the previous one is never touched: it takes no memory.
    next_ = map_chunk(kArenaChunk);
    end_ = next_ + kArenaChunk;
  }
  uint8_t* out = next_;
  next_ += bytes;
  return out;
}

std::unique_ptr<PackedWeights> PackedWeights::pack(PackedLayout layout, GgmlType type,
                                                   const uint8_t* w, int64_t rows, int64_t cols,
                                                   size_t row_bytes, PackedArena* arena,
                                                   ThreadPool* pool) {
  size_t group_bytes = 0;
  if (layout == PackedLayout::kQ8_0x16 && type == GgmlType::Q8_0 && cols % 32 == 0)
    group_bytes = static_cast<size_t>((cols / 32 + 1) / 2) * kQ8_0x16UnitBytes;
  else if (layout == PackedLayout::kQ4_Kx16 && type == GgmlType::Q4_K && cols % 256 == 0)
    group_bytes = static_cast<size_t>(cols / 256) * kQ4_Kx16UnitBytes;
  else if (layout == PackedLayout::kQ6_Kx16 && type == GgmlType::Q6_K && cols % 256 == 0)
    group_bytes = static_cast<size_t>(cols / 256) * kQ6_Kx16UnitBytes;
  else if (layout == PackedLayout::kBF16x16 && type == GgmlType::BF16 && cols % 32 == 0)
    group_bytes = static_cast<size_t>(cols / 2) * kWord;
  if (group_bytes == 0 || rows <= 0) return nullptr;
  std::unique_ptr<PackedWeights> p(new PackedWeights());
  p->layout_ = layout;
  p->rows_ = rows;
  p->cols_ = cols;
  p->group_bytes_ = group_bytes;
  if (arena == nullptr) {
    p->own_arena_ = std::make_unique<PackedArena>();
    arena = p->own_arena_.get();
  }
  uint8_t* start = arena->allocate(p->bytes());
  p->data_ = start;
  // Groups are independent: pack chunks of them on the pool's threads.
  constexpr int64_t kGroupsPerTask = 64;
  const int64_t groups = p->groups();
  auto pack_range = [&](int64_t task, int) {
    const int64_t g0 = task * kGroupsPerTask, g1 = std::min(groups, g0 + kGroupsPerTask);
    switch (layout) {
      case PackedLayout::kQ8_0x16:
        return pack_q8_0(w, rows, cols, row_bytes, g0, g1, start);
      case PackedLayout::kQ4_Kx16:
        return pack_q4_k(w, rows, cols, row_bytes, g0, g1, start);
      case PackedLayout::kQ6_Kx16:
        return pack_q6_k(w, rows, cols, row_bytes, g0, g1, start);
      case PackedLayout::kBF16x16:
        return pack_bf16(w, rows, cols, row_bytes, g0, g1, start);
      case PackedLayout::kNone:
        return;
    }
  };
  const int64_t tasks = (groups + kGroupsPerTask - 1) / kGroupsPerTask;
  if (pool != nullptr) {
    pool->parallel_for(tasks, pack_range);
  } else {
    for (int64_t t = 0; t < tasks; ++t) pack_range(t, 0);
  }
  return p;
}

}  // namespace duet::cpu
