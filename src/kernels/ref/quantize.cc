#include "kernels/ref/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::ref {
namespace {

template <typename Block>
void append_block(const Block& b, std::vector<uint8_t>& out) {
  const auto* p = reinterpret_cast<const uint8_t*>(&b);
  out.insert(out.end(), p, p + sizeof(Block));
}

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

void quantize_q4_0(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK) {
    // The scale maps the value of largest magnitude (with its sign) to -8.
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(x[i + j]) > amax) {
        amax = std::fabs(x[i + j]);
        max = x[i + j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0 b{};
    b.d = float_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(x[i + j] * id + 8.5f));
      const int q1 = std::min(15, static_cast<int>(x[i + j + kQK / 2] * id + 8.5f));
      b.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
    append_block(b, out);
  }
}

}  // namespace

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
    default:
      return Status::error(std::string("no quantizer for type ") + ggml_type_name(type));
  }
}

}  // namespace duet::ref
