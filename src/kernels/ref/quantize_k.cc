// K-quant quantizers. Each super-block of 256 is cut into sub-blocks (16 or 32 elements) whose
// scale (and, for Q4_K/Q5_K, min) is chosen by a weighted least-squares search over a few
// candidate scales, as the GGUF reference quantizers choose them; the sub-block scales are then
// stored as small integers against one fp16 super-block scale, and every element is rounded
// again on the scale it will actually be read with.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/ref/quant_blocks.h"
#include "kernels/ref/quantize_formats.h"

namespace duet::ref {
namespace {

// Signed codes l in [−nmax, nmax − 1] for x ≈ scale·l, weights x²: starting from the scale
// that maps the largest magnitude to −nmax, tries nineteen nearby scales and keeps the one
// whose least-squares fit is best. Returns the fitted scale; `codes` get l + nmax.
float fit_symmetric(const float* x, int n, int nmax, uint8_t* codes) {
  const float max = largest_magnitude(x, n);
  if (std::fabs(max) < kZeroGroupMax) {
    std::fill(codes, codes + n, static_cast<uint8_t>(nmax));
    return 0.0f;
  }
  auto code = [&](float iscale, int i) {
    return std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
  };
  float scale = 0.0f, best = 0.0f;
  for (int is = 0; is <= 18; ++is) {
    // is = 0 first: the plain scale; then −9..−1 and 1..9 tenths around it.
    const int step = is == 0 ? 0 : (is <= 9 ? is - 10 : is - 9);
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = code(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l * l);
    }
    if (is == 0 || (suml2 > 0.0f && sumlx * sumlx > best * suml2)) {
      for (int i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(code(iscale, i) + nmax);
      scale = suml2 > 0.0f ? sumlx / suml2 : 0.0f;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q3_K's sub-block fit: codes l in [−nmax, nmax − 1] with weights x², then a few rounds of
// moving single codes while that improves the least-squares fit. Returns the scale; `codes`
// get l + nmax.
float fit_symmetric_refined(const float* x, int n, int nmax, uint8_t* codes) {
  const float max = largest_magnitude(x, n);
  if (std::fabs(max) < kZeroGroupMax) {
    std::fill(codes, codes + n, static_cast<uint8_t>(nmax));
    return 0.0f;
  }
  const float iscale = -static_cast<float>(nmax) / max;
  int l[32];
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    l[i] = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l[i]);
    suml2 += w * static_cast<float>(l[i] * l[i]);
  }
  for (int round = 0; round < 5; ++round) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * static_cast<float>(l[i]);
      if (slx <= 0.0f) continue;
      float sl2 = suml2 - w * static_cast<float>(l[i] * l[i]);
      const int moved = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (moved == l[i]) continue;
      slx += w * x[i] * static_cast<float>(moved);
      sl2 += w * static_cast<float>(moved * moved);
      if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
        l[i] = moved;
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(l[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Unsigned codes l in [0, nmax] for x ≈ scale·l − m (m ≥ 0) under weights w: tries
// nstep + 1 scales from (nmax + rmin)/(max − min) upwards in rdelta steps, solving the
// weighted least squares for scale and offset at each, and keeps the smallest error.
// Returns the scale and sets `m` (the subtracted offset).
float fit_affine(const float* x, const float* w, int n, int nmax, float rmin, float rdelta,
                 int nstep, uint8_t* codes, float& m) {
  float lo = x[0], hi = x[0], sum_w = 0.0f, sum_x = 0.0f;
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0.0f) lo = 0.0f;
  if (hi == lo) {
    std::fill(codes, codes + n, uint8_t{0});
    m = -lo;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1.0f / iscale, offset = lo, best_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    codes[i] = static_cast<uint8_t>(std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax));
    const float diff = scale * static_cast<float>(codes[i]) + offset - x[i];
    best_error += w[i] * diff * diff;
  }
  uint8_t trial[32];
  for (int is = 0; is <= nstep; ++is) {
    // Each trial starts from the best offset so far, as the reference search does.
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (hi - offset);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - offset)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * static_cast<float>(l);
      sum_l2 += w[i] * static_cast<float>(l * l);
      sum_xl += w[i] * static_cast<float>(l) * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0.0f) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0.0f) {
      this_min = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    float error = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * static_cast<float>(trial[i]) + this_min - x[i];
      error += w[i] * diff * diff;
    }
    if (error < best_error) {
      std::memcpy(codes, trial, static_cast<size_t>(n));
      best_error = error;
      scale = this_scale;
      offset = this_min;
    }
  }
  m = -offset;
  return scale;
}

// Packs eight 6-bit (scale, min) pairs as Q4_K/Q5_K store them (see scale_min_k4 in
// dequantize.cc): pairs 0..3 in the low six bits of bytes 0..7, pairs 4..7 split between the
// nibbles of bytes 8..11 and the top two bits of bytes 0..7.
void pack_scale_min_k4(const uint8_t ls[8], const uint8_t lm[8], uint8_t packed[12]) {
  std::memset(packed, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      packed[j] = ls[j];
      packed[j + 4] = lm[j];
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls[j] & 0x0F) | ((lm[j] & 0x0F) << 4));
      packed[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      packed[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// The shared part of Q4_K and Q5_K: fits the eight sub-blocks of 32, stores their scales and
// mins as 6-bit integers against d and dmin, and gives the final codes (0..nmax) in `codes`.
template <typename Block>
void fit_k4_superblock(const float* x, int nmax, float rmin, int nstep, Block& b,
                       uint8_t codes[kQK_K]) {
  float scales[8], mins[8], weights[32];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_affine(xs, weights, 32, nmax, rmin, 0.1f, nstep, codes + 32 * j, mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(std::clamp(nearest_int(inv_scale * scales[j]), 0, 63));
    lm[j] = static_cast<uint8_t>(std::clamp(nearest_int(inv_min * mins[j]), 0, 63));
  }
  pack_scale_min_k4(ls, lm, b.scales);
  b.d = float_to_fp16(max_scale / 63.0f);
  b.dmin = float_to_fp16(max_min / 63.0f);
  const float d = fp16_to_float(b.d), dmin = fp16_to_float(b.dmin);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * ls[j];
    if (dl == 0.0f) continue;
    const float ml = dmin * lm[j];
    for (int l = 0; l < 32; ++l)
      codes[32 * j + l] =
          static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + l] + ml) / dl), 0, nmax));
  }
}

// Q6_K's and Q3_K's sixteen sub-block scales as integers in [lo, hi] against one fp16
// super-block scale `d`, the largest in magnitude mapping to `lo`. False (and nothing
// written) when every scale is 0.
bool quantize_scales(const float scales[16], int lo, int hi, int out[16], uint16_t& d) {
  const float max_scale = largest_magnitude(scales, 16);
  if (std::fabs(max_scale) < kZeroGroupMax) return false;
  const float iscale = static_cast<float>(lo) / max_scale;
  d = float_to_fp16(1.0f / iscale);
  for (int j = 0; j < 16; ++j) out[j] = std::clamp(nearest_int(iscale * scales[j]), lo, hi);
  return true;
}

// Codes again on the scales they will be read with: element l of sub-block j (16 each) is
// x ≈ d·sc[j]·(code − bias), code in [0, 2·bias − 1]. A sub-block whose scale is 0 keeps its
// codes (they read as 0 either way).
void round_on_scales(const float* x, float d, const int sc[16], int bias, uint8_t* codes) {
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(sc[j]);
    if (dl == 0.0f) continue;
    for (int l = 0; l < 16; ++l)
      codes[16 * j + l] =
          static_cast<uint8_t>(std::clamp(nearest_int(x[16 * j + l] / dl), -bias, bias - 1) + bias);
  }
}

}  // namespace

void quantize_q4_k(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK_K) {
    BlockQ4_K b{};
    uint8_t codes[kQK_K];
    fit_k4_superblock(x + i, 15, -1.0f, 20, b, codes);
    // Elements 64k + l and 64k + 32 + l share byte 32k + l (low, high nibble).
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l)
        b.qs[32 * k + l] = static_cast<uint8_t>(codes[64 * k + l] | (codes[64 * k + 32 + l] << 4));
    append_block(b, out);
  }
}

void quantize_q5_k(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK_K) {
    BlockQ5_K b{};
    uint8_t codes[kQK_K];
    fit_k4_superblock(x + i, 31, -0.5f, 15, b, codes);
    // As Q4_K for the low four bits; the fifth bit of elements 64k + l and 64k + 32 + l is
    // bit 2k and 2k + 1 of qh[l].
    for (int k = 0; k < 4; ++k) {
      for (int l = 0; l < 32; ++l) {
        const int lo = codes[64 * k + l], hi = codes[64 * k + 32 + l];
        b.qs[32 * k + l] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
        b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * k)) | ((hi >> 4) << (2 * k + 1)));
      }
    }
    append_block(b, out);
  }
}

void quantize_q6_k(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK_K) {
    const float* xb = x + i;
    BlockQ6_K b{};
    uint8_t codes[kQK_K];
    float scales[16];
    for (int j = 0; j < 16; ++j) scales[j] = fit_symmetric(xb + 16 * j, 16, 32, codes + 16 * j);
    int sc[16];
    if (quantize_scales(scales, -128, 127, sc, b.d)) {
      for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(sc[j]);
      round_on_scales(xb, fp16_to_float(b.d), sc, 32, codes);
    }
    // Per half of 128: element h + l (l < 32) keeps its low nibble in ql[64·half + l] for
    // h = 0, 32 and the high nibble for h = 64, 96; its top two bits go to qh[32·half + l].
    for (int half = 0; half < 2; ++half) {
      const uint8_t* c = codes + 128 * half;
      uint8_t* ql = b.ql + 64 * half;
      uint8_t* qh = b.qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((c[l] & 0x0F) | ((c[l + 64] & 0x0F) << 4));
        ql[l + 32] = static_cast<uint8_t>((c[l + 32] & 0x0F) | ((c[l + 96] & 0x0F) << 4));
        qh[l] = static_cast<uint8_t>((c[l] >> 4) | ((c[l + 32] >> 4) << 2) |
                                     ((c[l + 64] >> 4) << 4) | ((c[l + 96] >> 4) << 6));
      }
    }
    append_block(b, out);
  }
}

void quantize_q3_k(const float* x, int64_t n, std::vector<uint8_t>& out) {
  for (int64_t i = 0; i < n; i += kQK_K) {
    const float* xb = x + i;
    BlockQ3_K b{};
    uint8_t codes[kQK_K];
    float scales[16];
    for (int j = 0; j < 16; ++j)
      scales[j] = fit_symmetric_refined(xb + 16 * j, 16, 4, codes + 16 * j);
    int sc[16];
    if (quantize_scales(scales, -32, 31, sc, b.d)) {
      // Sixteen 6-bit scales, biased by 32, packed as unpack_q3_k_scales reads them.
      for (int j = 0; j < 16; ++j) {
        const int l = sc[j] + 32;
        if (j < 8)
          b.scales[j] = static_cast<uint8_t>(l & 0x0F);
        else
          b.scales[j - 8] |= static_cast<uint8_t>((l & 0x0F) << 4);
        b.scales[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
      }
      round_on_scales(xb, fp16_to_float(b.d), sc, 4, codes);
    }
    // Code c = 4·hbit + low: hbit of element 32k + l is bit k of hmask[l]; the two low bits
    // of element 128h + 32j + l sit at bit 2j of qs[32h + l].
    for (int e = 0; e < kQK_K; ++e)
      if (codes[e] > 3) b.hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      b.qs[32 * h + l] |= static_cast<uint8_t>((codes[e] & 3) << (2 * j));
    }
    append_block(b, out);
  }
}

}  // namespace duet::ref
