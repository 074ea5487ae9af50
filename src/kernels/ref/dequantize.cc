#include "kernels/ref/dequantize.h"

#include <cassert>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::ref {
namespace {

void dequant_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[i * kQK + j] = d * static_cast<float>((b[i].qs[j] & 0x0F) - 8);
      y[i * kQK + j + kQK / 2] = d * static_cast<float>((b[i].qs[j] >> 4) - 8);
    }
  }
}

// Q4_1: value = d·q + m, nibbles as Q4_0.
void dequant_q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const float m = fp16_to_float(b[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[i * kQK + j] = static_cast<float>(b[i].qs[j] & 0x0F) * d + m;
      y[i * kQK + j + kQK / 2] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

void dequant_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    for (int j = 0; j < kQK; ++j) y[i * kQK + j] = static_cast<float>(q5_code(b[i], j) - 16) * d;
  }
}

void dequant_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const float m = fp16_to_float(b[i].m);
    for (int j = 0; j < kQK; ++j) y[i * kQK + j] = static_cast<float>(q5_code(b[i], j)) * d + m;
  }
}

void dequant_iq4_nl(const BlockIQ4_NL* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[i * kQK + j] = d * static_cast<float>(kIq4nlValues[b[i].qs[j] & 0x0F]);
      y[i * kQK + j + kQK / 2] = d * static_cast<float>(kIq4nlValues[b[i].qs[j] >> 4]);
    }
  }
}

void dequant_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    for (int j = 0; j < kQK; ++j) y[i * kQK + j] = d * static_cast<float>(b[i].qs[j]);
  }
}

// Sub-block j (0..7) of a Q4_K/Q5_K super-block: 6-bit scale and min. The first four
// pairs sit in the low 6 bits of bytes 0..7; the last four are split between the low or
// high nibbles of bytes 8..11 and the top 2 bits of bytes 0..7.
void scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void dequant_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const float dmin = fp16_to_float(b[i].dmin);
    const uint8_t* q = b[i].qs;
    int is = 0;
    for (int j = 0; j < kQK_K; j += 64) {
      uint8_t sc, m;
      scale_min_k4(is, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(is + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

void dequant_q5_k(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const float dmin = fp16_to_float(b[i].dmin);
    const uint8_t* ql = b[i].qs;
    const uint8_t* qh = b[i].qh;
    int is = 0;
    uint8_t u1 = 1, u2 = 2;  // bit of qh that holds the fifth bit of each half
    for (int j = 0; j < kQK_K; j += 64) {
      uint8_t sc, m;
      scale_min_k4(is, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(is + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l)
        *y++ = d1 * static_cast<float>((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l)
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
      ql += 32;
      is += 2;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

// Q2_K: value = d·sc_k·q − dmin·m_k over sub-blocks k of 16 (element e is in k = e / 16);
// element 128h + 32j + l has its two bits at 2j of qs[32h + l].
void dequant_q2_k(const BlockQ2_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const float dmin = fp16_to_float(b[i].dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const uint8_t sc = b[i].scales[e / 16];
      const float dl = d * static_cast<float>(sc & 0x0F);
      const float ml = dmin * static_cast<float>(sc >> 4);
      const int q = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      y[i * kQK_K + e] = dl * static_cast<float>(q) - ml;
    }
  }
}

// Q3_K: value = d·(sc_k)·(q − 4·(1 − hbit)) over sub-blocks k of 16, q the two low bits
// placed as Q2_K's and hbit the third bit (set: no −4).
void dequant_q3_k(const BlockQ3_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    int8_t sc[16];
    unpack_q3_k_scales(b[i].scales, sc);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const float dl = d * static_cast<float>(sc[e / 16]);
      const int low = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      const bool high = (b[i].hmask[l] >> (4 * h + j)) & 1;
      y[i * kQK_K + e] = dl * static_cast<float>(low - (high ? 0 : 4));
    }
  }
}

void dequant_iq4_xs(const BlockIQ4_XS* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    int8_t sc[8];
    unpack_iq4_xs_scales(b[i], sc);
    for (int k = 0; k < 8; ++k) {
      const float dl = d * static_cast<float>(sc[k]);
      const uint8_t* qs = b[i].qs + 16 * k;
      float* yk = y + i * kQK_K + 32 * k;
      for (int j = 0; j < 16; ++j) {
        yk[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0x0F]);
        yk[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

void dequant_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_float(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int n = 0; n < kQK_K; n += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is + 0] * static_cast<float>(q1);
        y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  const auto& t = ggml_traits(type);
  assert(n % t.block_elems == 0);
  const int64_t nb = n / t.block_elems;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case GgmlType::F16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_float(h[i]);
      return;
    }
    case GgmlType::BF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(h[i]);
      return;
    }
    case GgmlType::Q4_0:
      return dequant_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case GgmlType::Q4_1:
      return dequant_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case GgmlType::Q5_0:
      return dequant_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case GgmlType::Q5_1:
      return dequant_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case GgmlType::IQ4_NL:
      return dequant_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, nb);
    case GgmlType::Q8_0:
      return dequant_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case GgmlType::Q2_K:
      return dequant_q2_k(static_cast<const BlockQ2_K*>(src), dst, nb);
    case GgmlType::Q3_K:
      return dequant_q3_k(static_cast<const BlockQ3_K*>(src), dst, nb);
    case GgmlType::IQ4_XS:
      return dequant_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, nb);
    case GgmlType::Q4_K:
      return dequant_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
    case GgmlType::Q5_K:
      return dequant_q5_k(static_cast<const BlockQ5_K*>(src), dst, nb);
    case GgmlType::Q6_K:
      return dequant_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
    default:
      assert(false && "dequantize_row: type without a decoder");
  }
}

float dot_row(GgmlType type, const void* row, const float* x, int64_t n) {
  // Decode a block-sized chunk at a time so the reference needs no row-sized buffer.
  const int64_t be = ggml_traits(type).block_elems;
  const int64_t chunk = be == 1 ? 256 : be;
  const size_t chunk_bytes = ggml_row_bytes(type, chunk);
  float buf[256];
  double acc = 0.0;
  const auto* p = static_cast<const uint8_t*>(row);
  int64_t i = 0;
  for (; i + chunk <= n; i += chunk, p += chunk_bytes) {
    dequantize_row(type, p, buf, chunk);
    for (int64_t j = 0; j < chunk; ++j) acc += static_cast<double>(buf[j]) * x[i + j];
  }
  if (i < n) {  // tail of a plain-typed row
    dequantize_row(type, p, buf, n - i);
    for (int64_t j = 0; j < n - i; ++j) acc += static_cast<double>(buf[j]) * x[i + j];
  }
  return static_cast<float>(acc);
}

}  // namespace duet::ref
