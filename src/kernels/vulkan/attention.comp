#version 450
// Causal GQA attention of a step's tokens, each over its sequence's paged KV cache
// (ref::attention_paged): query head h of token t reads KV head h / (n_head / n_head_kv) at
// positions 0..position(t) inclusive through its sequence's block table; out =
// softmax(scale * q.k) . v. KV dtype by WTYPE_F32, _F16, _BF16 or _Q8_0.
//
// Bindings: 0 q            float [n_tokens x n_head x head_dim]
//           1 K cache      uint words
//           2 V cache      uint words
//           3 tables       int []: every sequence's block table, one after the other
//           4 tokens       int [n_tokens x 2]: token t's position, and where its
//                          sequence's block table starts in `tables`
//           5 out          float, like q
// Push (std430): uint n_tokens, n_head, n_head_kv, head_dim, block_size, block_stride,
//                head_stride, pos_stride; float scale.
//   Byte offset of (kv head, pos) in K and in V: table[pos / block_size] * block_stride
//   + head * head_stride + (pos % block_size) * pos_stride (as PagedKvView::offset).
// Dispatch: (n_head, n_tokens) workgroups. head_dim <= 256, a multiple of 8 (Q8_0: of 32).
//
// Flash-attention style: positions in tiles of 64, one score per thread, online softmax.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer QBuf { float q[]; };
layout(std430, binding = 1) readonly buffer KBuf { uint k_words[]; };
layout(std430, binding = 2) readonly buffer VBuf { uint v_words[]; };
layout(std430, binding = 3) readonly buffer TableBuf { int block_table[]; };
layout(std430, binding = 4) readonly buffer TokBuf { int tokens[]; };
layout(std430, binding = 5) writeonly buffer OutBuf { float outv[]; };

layout(push_constant, std430) uniform Push {
  uint n_tokens;
  uint n_head;
  uint n_head_kv;
  uint head_dim;
  uint block_size;
  uint block_stride;
  uint head_stride;
  uint pos_stride;
  float scale;
} pc;

#if !defined(WTYPE_F32) && !defined(WTYPE_F16) && !defined(WTYPE_BF16) && !defined(WTYPE_Q8_0)
#error "attention.comp: KV dtype must be WTYPE_F32, WTYPE_F16, WTYPE_BF16 or WTYPE_Q8_0"
#endif

#define W_BUF k_words
#define W_FN(n) k_##n
#include "weights.glsl"
#undef W_BUF
#undef W_FN
#define W_BUF v_words
#define W_FN(n) v_##n
#include "weights.glsl"

#define MAX_HEAD_DIM 256u
#define DIMS_PER_THREAD (MAX_HEAD_DIM / 64u)
// Stands in for -inf so the softmax never does arithmetic on infinities.
#define NEG_BIG (-3.402823466e38)

shared float q_s[MAX_HEAD_DIM];
shared float red_s[64];
shared float p_s[64];   // this tile's exp(score - running max), by position
shared uint off_s[64];  // this tile's KV byte offsets, by position

void main() {
  const uint h = gl_WorkGroupID.x;
  const uint t = gl_WorkGroupID.y;
  if (h >= pc.n_head || t >= pc.n_tokens) return;
  const uint tid = gl_LocalInvocationID.x;
  const uint hd = pc.head_dim;
  const uint kvh = h / (pc.n_head / pc.n_head_kv);
  const uint qbase = (t * pc.n_head + h) * hd;

  for (uint d = tid; d < hd; d += 64u) q_s[d] = q[qbase + d];
  barrier();

  const uint n_keys = uint(tokens[2u * t]) + 1u;
  const uint table = uint(tokens[2u * t + 1u]);
  float m = NEG_BIG;  // running max of the scores seen so far
  float l = 0.0;      // running sum of exp(score - m)
  float acc[DIMS_PER_THREAD];
  for (uint k = 0u; k < DIMS_PER_THREAD; ++k) acc[k] = 0.0;

  for (uint p0 = 0u; p0 < n_keys; p0 += 64u) {
    const uint p = p0 + tid;
    const bool valid = p < n_keys;
    float s = NEG_BIG;
    if (valid) {
      const uint off = uint(block_table[table + p / pc.block_size]) * pc.block_stride +
                       kvh * pc.head_stride + (p % pc.block_size) * pc.pos_stride;
      off_s[tid] = off;
      float dot = 0.0;
      for (uint g = 0u; g < hd; g += 8u) {
        float kv[8];
        k_dequant8(off, g, kv);
        for (uint j = 0u; j < 8u; ++j) dot += q_s[g + j] * kv[j];
      }
      s = dot * pc.scale;
    }

    red_s[tid] = s;
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1) {
      if (tid < st) red_s[tid] = max(red_s[tid], red_s[tid + st]);
      barrier();
    }
    // Position p0 is always valid, so the tile max is a real score.
    const float m_new = max(m, red_s[0]);
    barrier();

    const float e = valid ? exp(s - m_new) : 0.0;
    p_s[tid] = e;
    red_s[tid] = e;
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1) {
      if (tid < st) red_s[tid] += red_s[tid + st];
      barrier();
    }
    const float alpha = p0 == 0u ? 0.0 : exp(m - m_new);
    l = l * alpha + red_s[0];
    m = m_new;

    const uint nv = min(64u, n_keys - p0);
    for (uint k = 0u; k < DIMS_PER_THREAD; ++k) {
      const uint d = tid + 64u * k;
      if (d < hd) {
        float a = acc[k] * alpha;
        for (uint j = 0u; j < nv; ++j) a += p_s[j] * v_dequant1(off_s[j], d);
        acc[k] = a;
      }
    }
    barrier();  // p_s, off_s and red_s are rewritten by the next tile
  }

  for (uint k = 0u; k < DIMS_PER_THREAD; ++k) {
    const uint d = tid + 64u * k;
    if (d < hd) outv[qbase + d] = acc[k] / l;
  }
}
