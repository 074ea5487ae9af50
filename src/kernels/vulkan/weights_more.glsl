// dequant8 for the formats published Qwen3 files also use: Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K,
// Q3_K and IQ4_XS. Included by weights.glsl (after its readers, with its W_BUF / W_FN
// naming), never on its own; the contract is weights.glsl's:
//   void dequant8_more(uint row_byte, uint i, out float v[8])  elements i..i+7 (i % 8 == 0)
// bit-exact with src/kernels/ref/dequantize.cc. In the device layout (weight_layout.h) every
// group of eight codes starts on a word, so the quants are read as whole words.

#if defined(WTYPE_IQ4_NL) || defined(WTYPE_IQ4_XS)
// kIq4nlValues of src/kernels/ref/quant_blocks.h.
const int W_FN(w_iq4nl)[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53,
                                      69, 89, 113);
#endif

#if defined(WTYPE_Q4_1) || defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1) || defined(WTYPE_IQ4_NL)
// 32-element blocks: element j in the low nibble of qs[j] (j < 16) or the high nibble of
// qs[j - 16]; Q5_0 / Q5_1 add bit j of the qh word as a fifth bit.
void W_FN(dequant8_more)(uint row_byte, uint i, out float v[8]) {
  const uint base = row_byte + (i >> 5) * uint(W_BLOCK_BYTES);
  const float d = W_FN(w_f16)(base);
#if defined(WTYPE_Q4_1) || defined(WTYPE_Q5_1)
  const float m = W_FN(w_f16)(base + 2u);
#endif
  const uint j = i & 31u;
  const uint qb = base + W_QS_AT + (j & 15u);
  const uint sh = (j >> 4) * 4u;
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
#if defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
  const uint qh = W_FN(w_word)(base + W_QH_AT);
#endif
  for (uint k = 0u; k < 8u; ++k) {
    const int nib = int((q[k >> 2] >> ((k & 3u) * 8u + sh)) & 0xFu);
#if defined(WTYPE_Q4_1)
    precise float r = float(nib) * d + m;
#elif defined(WTYPE_Q5_0)
    const int code = nib | int(((qh >> (j + k)) & 1u) << 4);
    precise float r = float(code - 16) * d;
#elif defined(WTYPE_Q5_1)
    const int code = nib | int(((qh >> (j + k)) & 1u) << 4);
    precise float r = float(code) * d + m;
#else  // IQ4_NL
    precise float r = d * float(W_FN(w_iq4nl)[nib]);
#endif
    v[k] = r;
  }
}
#endif

#if defined(WTYPE_Q2_K) || defined(WTYPE_Q3_K)
// 256-element super-blocks of 16 sub-blocks of 16 (element e in sub-block e / 16). Element
// e = 128h + 32j + l keeps its two low bits at bits 2j of qs[32h + l].
//   Q2_K  84 bytes: scales[16] (scale low nibble, min high), qs[64], d, dmin;
//         value = d·sc·q − dmin·m
//   Q3_K 110 bytes (112 on the device): hmask[32], qs[64], scales[12], d; the third bit is
//         bit 4h + j of hmask[l] and value = d·sc·(q − 4) unless it is set, then d·sc·q
void W_FN(dequant8_more)(uint row_byte, uint i, out float v[8]) {
  const uint base = row_byte + (i >> 8) * uint(W_BLOCK_BYTES);
  const uint e = i & 255u;
  const uint h = e >> 7;
  const uint j = (e >> 5) & 3u;
  const uint l = e & 31u;
  const uint sub = e >> 4;
#if defined(WTYPE_Q2_K)
  const uint sc = W_FN(w_u8)(base + sub);
  precise float dl = W_FN(w_f16)(base + 80u) * float(sc & 0xFu);
  precise float ml = W_FN(w_f16)(base + 82u) * float(sc >> 4);
  const uint qb = base + 16u + 32u * h + l;
#else
  // unpack_q3_k_scales of the reference: low four bits in byte sub % 8 (low nibble for
  // sub < 8), top two in bits 2·(sub / 4) of byte 8 + sub % 4, biased by 32.
  const uint lo = (W_FN(w_u8)(base + 96u + (sub & 7u)) >> (4u * (sub >> 3))) & 0xFu;
  const uint hi = (W_FN(w_u8)(base + 104u + (sub & 3u)) >> (2u * (sub >> 2))) & 3u;
  precise float dl = W_FN(w_f16)(base + 108u) * float(int(lo | (hi << 4)) - 32);
  const uint qb = base + 32u + 32u * h + l;
  const uint hm[2] = uint[2](W_FN(w_word)(base + l), W_FN(w_word)(base + l + 4u));
  const uint hbit = 4u * h + j;
#endif
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
  for (uint k = 0u; k < 8u; ++k) {
    const uint bs = (k & 3u) * 8u;
    const int low = int((q[k >> 2] >> (bs + 2u * j)) & 3u);
#if defined(WTYPE_Q2_K)
    precise float r = dl * float(low) - ml;
#else
    const int high = int((hm[k >> 2] >> (bs + hbit)) & 1u);
    precise float r = dl * float(low - (high != 0 ? 0 : 4));
#endif
    v[k] = r;
  }
}
#endif

#if defined(WTYPE_IQ4_XS)
// 136 bytes: d, scales_h (bits 2k..2k+1: top of sub-block k's scale), scales_l[4] (low four
// bits, two sub-blocks per byte), qs[128] (16 bytes per 32-element sub-block, as IQ4_NL's);
// value = d·(scale − 32)·grid[code].
void W_FN(dequant8_more)(uint row_byte, uint i, out float v[8]) {
  const uint base = row_byte + (i >> 8) * 136u;
  const uint e = i & 255u;
  const uint sub = e >> 5;
  const uint j = e & 31u;
  const uint lo = (W_FN(w_u8)(base + 4u + (sub >> 1)) >> (4u * (sub & 1u))) & 0xFu;
  const uint hi = (W_FN(w_u16)(base + 2u) >> (2u * sub)) & 3u;
  precise float dl = W_FN(w_f16)(base) * float(int(lo | (hi << 4)) - 32);
  const uint qb = base + 8u + 16u * sub + (j & 15u);
  const uint sh = (j >> 4) * 4u;
  const uint q[2] = uint[2](W_FN(w_word)(qb), W_FN(w_word)(qb + 4u));
  for (uint k = 0u; k < 8u; ++k) {
    const uint nib = (q[k >> 2] >> ((k & 3u) * 8u + sh)) & 0xFu;
    precise float r = dl * float(W_FN(w_iq4nl)[nib]);
    v[k] = r;
  }
}
#endif
