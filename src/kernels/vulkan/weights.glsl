// Decoding GGUF rows (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K here; Q4_1, Q5_0, Q5_1,
// IQ4_NL, Q2_K, Q3_K and IQ4_XS in weights_more.glsl) from a buffer of raw bytes, bit-exact
// with src/kernels/ref/dequantize.cc.
//
// The includer declares the buffer first, as uint words holding the file's bytes:
//   layout(std430, binding = N) readonly buffer WeightBuf { uint w_words[]; };
// and defines exactly one WTYPE_<type> (WTYPE_F32 … WTYPE_IQ4_XS). Provided:
//   W_QK, W_BLOCK_BYTES               elements and bytes of one block (1 and 4/2 for floats)
//   uint  w_u8(uint byte), w_u16(uint byte), w_u32(uint byte)   little-endian, any alignment
//   float w_f16(uint byte)
//   void  dequant8(uint row_byte, uint i, out float v[8])  elements i..i+7 (i % 8 == 0)
//   float dequant1(uint row_byte, uint i)                  element i
// where row_byte is the byte at which the row starts and i counts elements from there.
//
// W_DEVICE_LAYOUT (defined by the weight shaders: matmul, matmul_tiled, get_rows) reads the
// layout weights are uploaded in (src/backend/vulkan/weight_layout.h): every block and row
// starts on a word and so do the quants, so dequant8 reads whole words (w_word) and never
// stitches. Without it (the KV cache, written by kv_store.comp) the file's layout is read.
//
// To read from another buffer, define W_BUF (the uint array) and W_FN(name) (renames every
// function, e.g. `#define W_FN(n) k_##n` gives k_dequant8) before including; the file may
// be included again with other names, which is how attention reads K and V. Both default
// to the weight buffer and the plain names.
//
// In the file's layout blocks are 18, 34, 144, 176 or 210 bytes, so a block or row may start
// at any byte: every read goes through w_u32 & co., which stitch two words when the bytes
// straddle them and never touch a word that holds none of the requested bytes (there is no
// guaranteed robust buffer access, and the host only pads buffers to a multiple of 4 bytes).

#ifndef W_QK
#if defined(WTYPE_Q4_1) || defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1) || defined(WTYPE_IQ4_NL) || \
    defined(WTYPE_Q2_K) || defined(WTYPE_Q3_K) || defined(WTYPE_IQ4_XS)
#define W_MORE 1  // a format of weights_more.glsl
#else
#define W_MORE 0
#endif
#if defined(WTYPE_F32) + defined(WTYPE_F16) + defined(WTYPE_BF16) + defined(WTYPE_Q8_0) + \
    defined(WTYPE_Q4_0) + defined(WTYPE_Q4_K) + defined(WTYPE_Q5_K) + defined(WTYPE_Q6_K) + \
    defined(WTYPE_Q4_1) + defined(WTYPE_Q5_0) + defined(WTYPE_Q5_1) + defined(WTYPE_IQ4_NL) + \
    defined(WTYPE_Q2_K) + defined(WTYPE_Q3_K) + defined(WTYPE_IQ4_XS) != 1
#error "weights.glsl: define exactly one WTYPE_ macro"
#endif
#if defined(WTYPE_F32)
#define W_QK 1
#define W_BLOCK_BYTES 4
#elif defined(WTYPE_F16) || defined(WTYPE_BF16)
#define W_QK 1
#define W_BLOCK_BYTES 2
#elif defined(WTYPE_Q8_0)
#define W_QK 32
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 36
#define W_QS_AT 4u  // where the quants start in a block
#else
#define W_BLOCK_BYTES 34
#define W_QS_AT 2u
#endif
#elif defined(WTYPE_Q4_0)
#define W_QK 32
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 20
#define W_QS_AT 4u
#else
#define W_BLOCK_BYTES 18
#define W_QS_AT 2u
#endif
#elif defined(WTYPE_Q4_K)
#define W_QK 256
#define W_BLOCK_BYTES 144
#elif defined(WTYPE_Q5_K)
#define W_QK 256
#define W_BLOCK_BYTES 176
#elif defined(WTYPE_Q6_K)
#define W_QK 256
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 212
#else
#define W_BLOCK_BYTES 210
#endif
#elif defined(WTYPE_Q4_1)
#define W_QK 32
#define W_BLOCK_BYTES 20
#define W_QS_AT 4u
#elif defined(WTYPE_Q5_0)
#define W_QK 32
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 24
#define W_QH_AT 4u
#define W_QS_AT 8u
#else
#define W_BLOCK_BYTES 22
#define W_QH_AT 2u
#define W_QS_AT 6u
#endif
#elif defined(WTYPE_Q5_1)
#define W_QK 32
#define W_BLOCK_BYTES 24
#define W_QH_AT 4u
#define W_QS_AT 8u
#elif defined(WTYPE_IQ4_NL)
#define W_QK 32
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 20
#define W_QS_AT 4u
#else
#define W_BLOCK_BYTES 18
#define W_QS_AT 2u
#endif
#elif defined(WTYPE_Q2_K)
#define W_QK 256
#define W_BLOCK_BYTES 84
#elif defined(WTYPE_Q3_K)
#define W_QK 256
#ifdef W_DEVICE_LAYOUT
#define W_BLOCK_BYTES 112
#else
#define W_BLOCK_BYTES 110
#endif
#elif defined(WTYPE_IQ4_XS)
#define W_QK 256
#define W_BLOCK_BYTES 136
#endif
#endif  // W_QK

#ifndef W_BUF
#define W_BUF w_words
#endif
#ifndef W_FN
#define W_FN(n) n
#endif

uint W_FN(w_u8)(uint byte) { return (W_BUF[byte >> 2] >> ((byte & 3u) * 8u)) & 0xFFu; }

uint W_FN(w_u16)(uint byte) {
  const uint sh = (byte & 3u) * 8u;
  const uint lo = W_BUF[byte >> 2];
  if (sh <= 16u) return (lo >> sh) & 0xFFFFu;
  return (lo >> 24) | ((W_BUF[(byte >> 2) + 1u] & 0xFFu) << 8);
}

uint W_FN(w_u32)(uint byte) {
  const uint sh = (byte & 3u) * 8u;
  const uint lo = W_BUF[byte >> 2];
  if (sh == 0u) return lo;
  return (lo >> sh) | (W_BUF[(byte >> 2) + 1u] << (32u - sh));
}

float W_FN(w_f16)(uint byte) { return unpackHalf2x16(W_FN(w_u16)(byte)).x; }

// The word at `byte`, which dequant8 reads at a multiple of 4 in the device layout: one load.
#ifdef W_DEVICE_LAYOUT
uint W_FN(w_word)(uint byte) { return W_BUF[byte >> 2]; }
#else
uint W_FN(w_word)(uint byte) { return W_FN(w_u32)(byte); }
#endif

// Byte `k` (0..3) of a word as a signed int (Q8_0 quants, Q6_K scales).
int W_FN(w_s8_of)(uint word, uint k) { return bitfieldExtract(int(word), int(k * 8u), 8); }

#if defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
// scale_min_k4 of the reference: 6-bit scale and min of sub-block j from the 12 packed
// bytes at `s`.
void W_FN(w_scale_min_k4)(uint s, uint j, out uint sc, out uint m) {
  if (j < 4u) {
    sc = W_FN(w_u8)(s + j) & 63u;
    m = W_FN(w_u8)(s + j + 4u) & 63u;
  } else {
    const uint hi = W_FN(w_u8)(s + j + 4u);
    sc = (hi & 0x0Fu) | ((W_FN(w_u8)(s + j - 4u) >> 6) << 4);
    m = (hi >> 4) | ((W_FN(w_u8)(s + j) >> 6) << 4);
  }
}
#endif

#if W_MORE
#include "weights_more.glsl"
#endif

// `precise` throughout: the reference is built without FMA contraction, so d1*q - m1 must
// round twice to stay bit-exact.

void W_FN(dequant8)(uint row_byte, uint i, out float v[8]) {
#if defined(WTYPE_F32)
  const uint b = row_byte + i * 4u;
  for (uint k = 0u; k < 8u; ++k) v[k] = uintBitsToFloat(W_FN(w_word)(b + k * 4u));
#elif defined(WTYPE_F16)
  const uint b = row_byte + i * 2u;
  for (uint k = 0u; k < 4u; ++k) {
    const vec2 h = unpackHalf2x16(W_FN(w_word)(b + k * 4u));
    v[2u * k] = h.x;
    v[2u * k + 1u] = h.y;
  }
#elif defined(WTYPE_BF16)
  const uint b = row_byte + i * 2u;
  for (uint k = 0u; k < 4u; ++k) {
    const uint u = W_FN(w_word)(b + k * 4u);
    v[2u * k] = uintBitsToFloat(u << 16);
    v[2u * k + 1u] = uintBitsToFloat(u & 0xFFFF0000u);
  }
#elif defined(WTYPE_Q8_0)
  const uint base = row_byte + (i >> 5) * uint(W_BLOCK_BYTES);
  const float d = W_FN(w_f16)(base);
  const uint qb = base + W_QS_AT + (i & 31u);
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
  for (uint k = 0u; k < 8u; ++k) {
    precise float r = d * float(W_FN(w_s8_of)(q[k >> 2], k & 3u));
    v[k] = r;
  }
#elif defined(WTYPE_Q4_0)
  // Elements j and j+16 share byte qs[j]: low nibble, then high.
  const uint base = row_byte + (i >> 5) * uint(W_BLOCK_BYTES);
  const float d = W_FN(w_f16)(base);
  const uint j = i & 31u;
  const uint qb = base + W_QS_AT + (j & 15u);
  const uint sh = (j >> 4) * 4u;
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
  for (uint k = 0u; k < 8u; ++k) {
    const int nib = int((q[k >> 2] >> ((k & 3u) * 8u + sh)) & 0xFu);
    precise float r = d * float(nib - 8);
    v[k] = r;
  }
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
  // 64-element chunk c: 32 bytes of quants, low nibbles for its first 32 elements (sub-block
  // 2c), high nibbles for the next 32 (sub-block 2c+1).
#if defined(WTYPE_Q4_K)
  const uint base = row_byte + (i >> 8) * 144u;
  const uint qs_at = 16u;
#else
  const uint base = row_byte + (i >> 8) * 176u;
  const uint qs_at = 48u;
#endif
  const uint e = i & 255u;
  const uint c = e >> 6;
  const uint hf = (e >> 5) & 1u;
  const uint l = e & 31u;
  const float d = W_FN(w_f16)(base);
  const float dmin = W_FN(w_f16)(base + 2u);
  uint sc, m;
  W_FN(w_scale_min_k4)(base + 4u, 2u * c + hf, sc, m);
  precise float d1 = d * float(sc);
  precise float m1 = dmin * float(m);
  const uint qb = base + qs_at + 32u * c + l;
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
#if defined(WTYPE_Q5_K)
  // Fifth bit of element l of sub-block s is bit s of qh[l].
  const uint hb = base + 16u + l;
  const uint qh[2] = uint[2](W_FN(w_word)(hb), W_FN(w_word)(hb + 4u));
  const uint bit = 2u * c + hf;
#endif
  for (uint k = 0u; k < 8u; ++k) {
    uint qv = (q[k >> 2] >> ((k & 3u) * 8u + 4u * hf)) & 0xFu;
#if defined(WTYPE_Q5_K)
    qv += ((qh[k >> 2] >> ((k & 3u) * 8u + bit)) & 1u) * 16u;
#endif
    precise float r = d1 * float(qv) - m1;
    v[k] = r;
  }
#elif defined(WTYPE_Q6_K)
  // 128-element halves n: ql[64], qh[32], scales[8]. Quarter qt (32 elements) of a half
  // takes the low (qt 0, 1) or high (qt 2, 3) nibble of ql[l + 32*(qt & 1)], bits 2qt..2qt+1
  // of qh[l], and scale sc[l/16 + 2qt].
  const uint base = row_byte + (i >> 8) * uint(W_BLOCK_BYTES);
  const uint e = i & 255u;
  const uint n = e >> 7;
  const uint qt = (e >> 5) & 3u;
  const uint l = e & 31u;
  const float d = W_FN(w_f16)(base + 208u);
  const uint scb = base + 192u + 8u * n + (l >> 4) + 2u * qt;
  const int scv = W_FN(w_s8_of)(W_FN(w_u8)(scb), 0u);
  precise float ds = d * float(scv);
  const uint lb = base + 64u * n + l + 32u * (qt & 1u);
  const uint hb = base + 128u + 32u * n + l;
  const uint ql[2] = uint[2](W_FN(w_word)(lb), W_FN(w_word)(lb + 4u));
  const uint qh[2] = uint[2](W_FN(w_word)(hb), W_FN(w_word)(hb + 4u));
  const uint lsh = 4u * (qt >> 1);
  const uint hsh = 2u * qt;
  for (uint k = 0u; k < 8u; ++k) {
    const uint bs = (k & 3u) * 8u;
    const int qv = int(((ql[k >> 2] >> (bs + lsh)) & 0xFu) | (((qh[k >> 2] >> (bs + hsh)) & 3u) << 4)) - 32;
    precise float r = ds * float(qv);
    v[k] = r;
  }
#else
  W_FN(dequant8_more)(row_byte, i, v);
#endif
}

float W_FN(dequant1)(uint row_byte, uint i) {
#if defined(WTYPE_F32)
  return uintBitsToFloat(W_FN(w_u32)(row_byte + i * 4u));
#elif defined(WTYPE_F16)
  return W_FN(w_f16)(row_byte + i * 2u);
#elif defined(WTYPE_BF16)
  return uintBitsToFloat(W_FN(w_u16)(row_byte + i * 2u) << 16);
#elif defined(WTYPE_Q8_0)
  const uint base = row_byte + (i >> 5) * uint(W_BLOCK_BYTES);
  precise float r =
      W_FN(w_f16)(base) * float(W_FN(w_s8_of)(W_FN(w_u8)(base + W_QS_AT + (i & 31u)), 0u));
  return r;
#else
  // Q4_0 and the K-quants: through the group decoder, so that each layout is written once
  // (these types are read one element at a time nowhere on a hot path; F32 to Q8_0, the KV
  // types, are decoded directly above because attention reads V that way).
  float v[8];
  W_FN(dequant8)(row_byte, i & ~7u, v);
  return v[i & 7u];
#endif
}
