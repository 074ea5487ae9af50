#include "kernels/ref/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/ref/quant_blocks.h"
#include "kernels/ref/quantize_formats.h"

namespace duet::ref {

void quantize_q8_0(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[i + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 b{};
    b.d = float_to_fp16(d);
    for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<int8_t>(std::lround(x[i + j] * id));
    append_block(b, out);
  }
}

// The 4- or 5-bit codes of a 32-element block as Q4_x/Q5_x store them: element j's low four
// bits in the low nibble of qs[j] (j < 16) or the high nibble of qs[j − 16], its fifth bit
// (5-bit formats) as bit j of the qh word.
template <typename Block, int kBits>
void pack_block32(const int codes[kQK], Block& b) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    b.qs[j] = static_cast<uint8_t>((codes[j] & 0x0F) | ((codes[j + kQK / 2] & 0x0F) << 4));
    qh |= static_cast<uint32_t>(codes[j] >> 4) << j;
    qh |= static_cast<uint32_t>(codes[j + kQK / 2] >> 4) << (j + kQK / 2);
  }
  if constexpr (kBits == 5) std::memcpy(b.qh, &qh, 4);
}

// Q4_1 / Q5_1: the block's range [min, max] in 2^bits steps; value = d·q + m.
template <typename Block, int kBits>
void quantize_offset_blocks(const float* x, int64_t n, std::vector<uint8_t>& out) {
  constexpr int kMax = (1 << kBits) - 1;
  for (int64_t i = 0; i < n; i += kQK) {
    float lo = x[i], hi = x[i];
    for (int j = 1; j < kQK; ++j) {
      lo = std::min(lo, x[i + j]);
      hi = std::max(hi, x[i + j]);
    }
    const float d = (hi - lo) / kMax;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    Block b{};
    b.d = float_to_fp16(d);
    b.m = float_to_fp16(lo);
    int codes[kQK];
    for (int j = 0; j < kQK; ++j)
      codes[j] = std::min(kMax, static_cast<int>((x[i + j] - lo) * id + 0.5f));
    pack_block32<Block, kBits>(codes, b);
    append_block(b, out);
  }
}

void quantize_q4_1(const float* x, int64_t n, std::vector<uint8_t>& out) {
  quantize_offset_blocks<BlockQ4_1, 4>(x, n, out);
}
void quantize_q5_1(const float* x, int64_t n, std::vector<uint8_t>& out) {
  quantize_offset_blocks<BlockQ5_1, 5>(x, n, out);
}

// Q4_0 / Q5_0: the value of largest magnitude (with its sign) maps to −2^(bits−1); value =
// d·(q − 2^(bits−1)).
template <typename Block, int kBits>
void quantize_symmetric_blocks(const float* x, int64_t n, std::vector<uint8_t>& out) {
  constexpr int kHalf = 1 << (kBits - 1), kMax = (1 << kBits) - 1;
  for (int64_t i = 0; i < n; i += kQK) {
    const float d = largest_magnitude(x + i, kQK) / -static_cast<float>(kHalf);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    Block b{};
    b.d = float_to_fp16(d);
    int codes[kQK];
    for (int j = 0; j < kQK; ++j)
      codes[j] = std::min(kMax, static_cast<int>(x[i + j] * id + (kHalf + 0.5f)));
    pack_block32<Block, kBits>(codes, b);
    append_block(b, out);
  }
}

void quantize_q4_0(const float* x, int64_t n, std::vector<uint8_t>& out) {
  quantize_symmetric_blocks<BlockQ4_0, 4>(x, n, out);
}
void quantize_q5_0(const float* x, int64_t n, std::vector<uint8_t>& out) {
  quantize_symmetric_blocks<BlockQ5_0, 5>(x, n, out);
}

Status quantize_row(GgmlType type, const float* x, int64_t n, std::vector<uint8_t>& out) {
  switch (type) {
    case GgmlType::F32: {
      const auto* p = reinterpret_cast<const uint8_t*>(x);
      out.insert(out.end(), p, p + n * 4);
      return Status::ok();
    }
    case GgmlType::F16:
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = type == GgmlType::F16 ? float_to_fp16(x[i]) : float_to_bf16(x[i]);
        out.push_back(static_cast<uint8_t>(h & 0xFF));
        out.push_back(static_cast<uint8_t>(h >> 8));
      }
      return Status::ok();
    case GgmlType::Q8_0:
      quantize_q8_0(x, n, out);
      return Status::ok();
    case GgmlType::Q4_0:
      quantize_q4_0(x, n, out);
      return Status::ok();
    case GgmlType::Q4_1:
      quantize_q4_1(x, n, out);
      return Status::ok();
    case GgmlType::Q5_0:
      quantize_q5_0(x, n, out);
      return Status::ok();
    case GgmlType::Q5_1:
      quantize_q5_1(x, n, out);
      return Status::ok();
    case GgmlType::Q3_K:
      quantize_q3_k(x, n, out);
      return Status::ok();
    case GgmlType::Q4_K:
      quantize_q4_k(x, n, out);
      return Status::ok();
    case GgmlType::Q5_K:
      quantize_q5_k(x, n, out);
      return Status::ok();
    case GgmlType::Q6_K:
      quantize_q6_k(x, n, out);
      return Status::ok();
    case GgmlType::IQ4_NL:
      quantize_iq4_nl(x, n, out);
      return Status::ok();
    case GgmlType::IQ4_XS:
      quantize_iq4_xs(x, n, out);
      return Status::ok();
    default:
      return Status::error(std::string("no quantizer for type ") + ggml_type_name(type));
  }
}

}  // namespace duet::ref
