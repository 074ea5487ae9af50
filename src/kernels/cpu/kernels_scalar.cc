// The portable path: plain C++ for any CPU. It reads the same converted activations as the
// SIMD paths (so it also defines what they compute) and is the fallback on CPUs without
// AVX2. The activation quantizers here are the definition every ISA's copy must match
// byte for byte.
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/kquant_scales.h"
#include "kernels/ref/ops.h"
#include "kernels/ref/quant_blocks.h"

namespace duet::cpu {
namespace {

// round-to-nearest-even of x·(127/amax), clamped: what cvtps2dq does after min/max.
int8_t quantize_one(float v) {
  v = std::fmin(std::fmax(v, -127.0f), 127.0f);
  return static_cast<int8_t>(std::nearbyint(v));
}

float block_amax(const float* x, int n) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  return amax;
}

void to_q8x32(const float* x, int64_t cols, uint8_t* out) {
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  float* s = d + cols / 32;
  for (int64_t b = 0; b < cols / 32; ++b) {
    const float amax = block_amax(x + b * 32, 32);
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int i = 0; i < 32; ++i) {
      qs[b * 32 + i] = quantize_one(x[b * 32 + i] * id);
      sum += qs[b * 32 + i];
    }
    d[b] = amax / 127.0f;
    s[b] = d[b] * static_cast<float>(sum);
  }
}

void to_q8x256(const float* x, int64_t cols, uint8_t* out) {
  const Q8x256Offsets o = q8x256_offsets(cols);
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + o.d);
  auto* bsums = reinterpret_cast<int16_t*>(out + o.bsums);
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float amax = block_amax(x + b * 256, 256);
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    d[b] = amax / 127.0f;
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) {
        const int64_t c = b * 256 + j * 16 + i;
        qs[c] = quantize_one(x[c] * id);
        sum += qs[c];
      }
      bsums[b * 16 + j] = static_cast<int16_t>(sum);
    }
    fill_q8x256_sums(out, cols, b, q8x256_fits16(qs + b * 256));
  }
}

// ---- float weights: eight running sums so the compiler can use SSE lanes ----

template <typename Decode>
float dot_float(const uint8_t* w, const float* x, int64_t cols, Decode decode) {
  float acc[8] = {};
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8)
    for (int j = 0; j < 8; ++j) acc[j] += decode(w, c + j) * x[c + j];
  float sum = 0.0f;
  for (; c < cols; ++c) sum += decode(w, c) * x[c];
  for (float a : acc) sum += a;
  return sum;
}

float load_f32(const uint8_t* w, int64_t i) {
  float v;
  std::memcpy(&v, w + i * 4, 4);
  return v;
}
uint16_t load_u16(const uint8_t* w, int64_t i) {
  uint16_t v;
  std::memcpy(&v, w + i * 2, 2);
  return v;
}

float dot_f32(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_float(w, reinterpret_cast<const float*>(x), cols, load_f32);
}
float dot_f16(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_float(w, reinterpret_cast<const float*>(x), cols,
                   [](const uint8_t* p, int64_t i) { return fp16_to_float(load_u16(p, i)); });
}
float dot_bf16(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_float(w, reinterpret_cast<const float*>(x), cols,
                   [](const uint8_t* p, int64_t i) { return bf16_to_float(load_u16(p, i)); });
}

// ---- quantized weights: exact integer block sums, one float step per block ----

float dot_q8_0(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(w);
  const Q8x32Row a = q8x32_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 32; ++b) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += blocks[b].qs[i] * a.qs[b * 32 + i];
    acc += fp16_to_float(blocks[b].d) * a.d[b] * static_cast<float>(sum);
  }
  return acc;
}

float dot_q4_0(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(w);
  const Q8x32Row a = q8x32_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 32; ++b) {
    const int8_t* q = a.qs + b * 32;
    int sum = 0;
    for (int i = 0; i < 16; ++i)
      sum += ((blocks[b].qs[i] & 0x0F) - 8) * q[i] + ((blocks[b].qs[i] >> 4) - 8) * q[i + 16];
    acc += fp16_to_float(blocks[b].d) * a.d[b] * static_cast<float>(sum);
  }
  return acc;
}

// Q4_1 and Q5_1: value = d·q + m, so Σ value·x̂ = d·d_x·Σ q·a + m·s (s = d_x·Σ a).
template <typename Block, int (*Code)(const Block&, int)>
float dot_offset_block(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const Block*>(w);
  const Q8x32Row a = q8x32_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 32; ++b) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += Code(blocks[b], i) * a.qs[b * 32 + i];
    acc += fp16_to_float(blocks[b].d) * a.d[b] * static_cast<float>(sum) +
           fp16_to_float(blocks[b].m) * a.s[b];
  }
  return acc;
}

// Q5_0 and IQ4_NL: value = d·code, one scale per block of 32.
template <typename Block, int (*Code)(const Block&, int)>
float dot_scaled_block(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const Block*>(w);
  const Q8x32Row a = q8x32_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 32; ++b) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += Code(blocks[b], i) * a.qs[b * 32 + i];
    acc += fp16_to_float(blocks[b].d) * a.d[b] * static_cast<float>(sum);
  }
  return acc;
}

// The code of element i (0..31) of a 32-element block, as ref::dequantize_row reads it.
int q4_1_code(const BlockQ4_1& b, int i) { return block32_nibble(b.qs, i); }
int q5_0_code(const BlockQ5_0& b, int i) { return q5_code(b, i) - 16; }
int q5_1_code(const BlockQ5_1& b, int i) { return q5_code(b, i); }
int iq4_nl_code(const BlockIQ4_NL& b, int i) { return kIq4nlValues[block32_nibble(b.qs, i)]; }

float dot_q4_1(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_offset_block<BlockQ4_1, q4_1_code>(w, x, cols);
}
float dot_q5_1(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_offset_block<BlockQ5_1, q5_1_code>(w, x, cols);
}
float dot_q5_0(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_scaled_block<BlockQ5_0, q5_0_code>(w, x, cols);
}
float dot_iq4_nl(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_scaled_block<BlockIQ4_NL, iq4_nl_code>(w, x, cols);
}

// Q2_K and Q3_K: 16 sub-blocks of 16; element e = 128h + 32j + l (sub-block e / 16) has its
// two low bits at 2j of qs[32h + l]. Q2_K: value = d·sc_k·q − dmin·m_k. Q3_K: value =
// d·sc_k·(q − 4) unless bit 4h + j of hmask[l] is set, then d·sc_k·q.
float dot_q2_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockQ2_K*>(w);
  const Q8x256Row a = q8x256_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const BlockQ2_K& blk = blocks[b];
    const int8_t* q8 = a.qs + b * 256;
    int isum = 0, msum = 0;
    for (int k = 0; k < 16; ++k) {
      int p = 0;
      for (int e = 16 * k; e < 16 * k + 16; ++e)
        p += ((blk.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3) * q8[e];
      isum += (blk.scales[k] & 0x0F) * p;
      msum += (blk.scales[k] >> 4) * a.bsums[b * 16 + k];
    }
    acc += a.d[b] * (fp16_to_float(blk.d) * static_cast<float>(isum) -
                     fp16_to_float(blk.dmin) * static_cast<float>(msum));
  }
  return acc;
}

float dot_q3_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockQ3_K*>(w);
  const Q8x256Row a = q8x256_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const BlockQ3_K& blk = blocks[b];
    int8_t sc[16];
    unpack_q3_k_scales(blk.scales, sc);
    const int8_t* q8 = a.qs + b * 256;
    int isum = 0;
    for (int k = 0; k < 16; ++k) {
      int p = 0;
      for (int e = 16 * k; e < 16 * k + 16; ++e) {
        const int h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int low = (blk.qs[32 * h + l] >> (2 * j)) & 3;
        const int high = (blk.hmask[l] >> (4 * h + j)) & 1;
        p += (low - 4 + 4 * high) * q8[e];
      }
      isum += sc[k] * p;
    }
    acc += a.d[b] * fp16_to_float(blk.d) * static_cast<float>(isum);
  }
  return acc;
}

// IQ4_XS: value = d·sc_k·grid[q] over sub-blocks k of 32 (see ref::dequant_iq4_xs).
float dot_iq4_xs(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockIQ4_XS*>(w);
  const Q8x256Row a = q8x256_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const BlockIQ4_XS& blk = blocks[b];
    int8_t sc[8];
    unpack_iq4_xs_scales(blk, sc);
    const int8_t* q8 = a.qs + b * 256;
    int isum = 0;
    for (int k = 0; k < 8; ++k) {
      int p = 0;
      for (int i = 0; i < 32; ++i)
        p += kIq4nlValues[block32_nibble(blk.qs + 16 * k, i)] * q8[32 * k + i];
      isum += sc[k] * p;
    }
    acc += a.d[b] * fp16_to_float(blk.d) * static_cast<float>(isum);
  }
  return acc;
}

// Q4_K and Q5_K: value = d·sc_j·q − dmin·m_j over sub-blocks j of 32. The code of element l
// of sub-block j: low (even j) or high (odd j) nibble of qs[32·(j/2) + l], plus 16 when
// bit j of qh[l] is set (Q5_K).
template <bool kFifthBit, typename Block>
float dot_q45_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const Block*>(w);
  const Q8x256Row a = q8x256_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const Block& blk = blocks[b];
    uint8_t sc[8], mn[8];
    unpack_k4_scales(blk.scales, sc, mn);
    const int8_t* q8 = a.qs + b * 256;
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; ++j) {
      int p = 0;
      for (int l = 0; l < 32; ++l) {
        const uint8_t byte = blk.qs[32 * (j / 2) + l];
        int q = (j % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
        if constexpr (kFifthBit) q += ((blk.qh[l] >> j) & 1) << 4;
        p += q * q8[32 * j + l];
      }
      isum += sc[j] * p;
      msum += mn[j] * (a.bsums[b * 16 + 2 * j] + a.bsums[b * 16 + 2 * j + 1]);
    }
    acc += a.d[b] * (fp16_to_float(blk.d) * static_cast<float>(isum) -
                     fp16_to_float(blk.dmin) * static_cast<float>(msum));
  }
  return acc;
}

float dot_q4_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_q45_k<false, BlockQ4_K>(w, x, cols);
}
float dot_q5_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  return dot_q45_k<true, BlockQ5_K>(w, x, cols);
}

// Q6_K: value = d·sc_k·(q − 32) over sub-blocks k of 16; see ref::dequant_q6_k for where
// the 4 + 2 bits of each code live.
float dot_q6_k(const uint8_t* w, const uint8_t* x, int64_t cols) {
  const auto* blocks = reinterpret_cast<const BlockQ6_K*>(w);
  const Q8x256Row a = q8x256_row(x, cols);
  float acc = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const BlockQ6_K& blk = blocks[b];
    const int8_t* q8 = a.qs + b * 256;
    int isum = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk.ql + 64 * half;
      const uint8_t* qh = blk.qh + 32 * half;
      int p[8] = {};  // per 16-element sub-block of this half
      for (int l = 0; l < 32; ++l) {
        const int q1 = (ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4);
        const int q2 = (ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4);
        const int q3 = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
        const int q4 = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
        const int8_t* a8 = q8 + 128 * half + l;
        p[l / 16] += q1 * a8[0];
        p[l / 16 + 2] += q2 * a8[32];
        p[l / 16 + 4] += q3 * a8[64];
        p[l / 16 + 6] += q4 * a8[96];
      }
      for (int k = 0; k < 8; ++k) {
        const int sc = blk.scales[8 * half + k];
        isum += sc * (p[k] - 32 * a.bsums[b * 16 + 8 * half + k]);
      }
    }
    acc += a.d[b] * fp16_to_float(blk.d) * static_cast<float>(isum);
  }
  return acc;
}

template <float (*Dot)(const uint8_t*, const uint8_t*, int64_t)>
void tile(const uint8_t* w, size_t w_stride, int nr, const uint8_t* x, size_t x_stride, int nt,
          int64_t cols, float* y, int64_t ldy) {
  for (int t = 0; t < nt; ++t)
    for (int r = 0; r < nr; ++r) y[t * ldy + r] = Dot(w + r * w_stride, x + t * x_stride, cols);
}

void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float x0 = xh[i], x1 = xh[i + half];
      xh[i] = x0 * cos[i] - x1 * sin[i];
      xh[i + half] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

}  // namespace

void fill_scalar_kernels(CpuKernels& k) {
  k.isa = CpuIsa::kScalar;
  k.f32 = {ActFormat::kF32, tile<dot_f32>};
  k.f16 = {ActFormat::kF32, tile<dot_f16>};
  k.bf16 = {ActFormat::kF32, tile<dot_bf16>};
  k.q8_0 = {ActFormat::kQ8x32, tile<dot_q8_0>};
  k.q4_0 = {ActFormat::kQ8x32, tile<dot_q4_0>};
  k.q4_1 = {ActFormat::kQ8x32, tile<dot_q4_1>};
  k.q5_0 = {ActFormat::kQ8x32, tile<dot_q5_0>};
  k.q5_1 = {ActFormat::kQ8x32, tile<dot_q5_1>};
  k.iq4_nl = {ActFormat::kQ8x32, tile<dot_iq4_nl>};
  k.q2_k = {ActFormat::kQ8x256, tile<dot_q2_k>};
  k.q3_k = {ActFormat::kQ8x256, tile<dot_q3_k>};
  k.iq4_xs = {ActFormat::kQ8x256, tile<dot_iq4_xs>};
  k.q4_k = {ActFormat::kQ8x256, tile<dot_q4_k>};
  k.q5_k = {ActFormat::kQ8x256, tile<dot_q5_k>};
  k.q6_k = {ActFormat::kQ8x256, tile<dot_q6_k>};
  k.to_q8x32 = to_q8x32;
  k.to_q8x256 = to_q8x256;
  k.to_bf16 = nullptr;  // only the AVX512_BF16 path reads bf16 activations
  k.rmsnorm = ref::rmsnorm;
  k.swiglu = ref::swiglu;
  k.add_inplace = ref::add_inplace;
  k.rope_rotate = rope_rotate;
}

}  // namespace duet::cpu
