#version 450
// A step's keys and values into one layer of the paged KV cache, stored as the reference
// quantizer stores them (ref::quantize_row): token t's K and V heads go to cache row
// slots[t] (= block * block_size + offset). KV dtype by WTYPE_F32, _F16, _BF16 or _Q8_0.
//
// Bindings: 0 k        float [n_tokens x n_head_kv x head_dim]
//           1 v        float, like k
//           2 slots    int [n_tokens]
//           3 K cache  uint words
//           4 V cache  uint words
// Push (std430): uint n_tokens, n_head_kv, head_dim, block_size, block_stride, head_stride,
//                pos_stride.
//   Byte offset of (kv head h, slot s): (s / block_size) * block_stride + h * head_stride
//   + (s % block_size) * pos_stride, as PagedKvView::offset.
// Dispatch: one invocation per (token, K or V, head): n_tokens * 2 * n_head_kv of them.
//
// F32, F16 and BF16 rows are whole 32-bit words (head_dim is even); a Q8_0 row is 34 bytes
// per 32 values, so its bytes may share a word with a neighbouring row that another
// invocation writes: those go through atomics.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer KIn { float k_in[]; };
layout(std430, binding = 1) readonly buffer VIn { float v_in[]; };
layout(std430, binding = 2) readonly buffer Slots { int slots[]; };
layout(std430, binding = 3) buffer KCache { uint k_words[]; };
layout(std430, binding = 4) buffer VCache { uint v_words[]; };

layout(push_constant, std430) uniform Push {
  uint n_tokens;
  uint n_head_kv;
  uint head_dim;
  uint block_size;
  uint block_stride;
  uint head_stride;
  uint pos_stride;
} pc;

#if !defined(WTYPE_F32) && !defined(WTYPE_F16) && !defined(WTYPE_BF16) && !defined(WTYPE_Q8_0)
#error "kv_store.comp: KV dtype must be WTYPE_F32, WTYPE_F16, WTYPE_BF16 or WTYPE_Q8_0"
#endif

float value(bool is_v, uint i) { return is_v ? v_in[i] : k_in[i]; }

void put_word(bool is_v, uint word, uint w) {
  if (is_v) v_words[word] = w; else k_words[word] = w;
}

// One byte at byte address `at`, leaving the word's other bytes as they are.
void put_byte(bool is_v, uint at, uint b) {
  const uint word = at >> 2, shift = (at & 3u) * 8u;
  const uint keep = ~(0xFFu << shift), set = (b & 0xFFu) << shift;
  if (is_v) {
    atomicAnd(v_words[word], keep);
    atomicOr(v_words[word], set);
  } else {
    atomicAnd(k_words[word], keep);
    atomicOr(k_words[word], set);
  }
}

// float → bfloat16 bits, rounding to nearest even (NaN stays a quiet NaN), as base/half.h.
uint to_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (x >> 16) | 0x40u;
  x += 0x7FFFu + ((x >> 16) & 1u);
  return x >> 16;
}

void main() {
  const uint id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  const uint per_token = 2u * pc.n_head_kv;
  if (id >= pc.n_tokens * per_token) return;
  const uint t = id / per_token;
  const bool is_v = (id % per_token) >= pc.n_head_kv;
  const uint h = (id % per_token) % pc.n_head_kv;
  const uint slot = uint(slots[t]);
  const uint at = (slot / pc.block_size) * pc.block_stride + h * pc.head_stride +
                  (slot % pc.block_size) * pc.pos_stride;
  const uint src = (t * pc.n_head_kv + h) * pc.head_dim;
#if defined(WTYPE_F32)
  for (uint i = 0u; i < pc.head_dim; ++i)
    put_word(is_v, at / 4u + i, floatBitsToUint(value(is_v, src + i)));
#elif defined(WTYPE_F16)
  for (uint i = 0u; i < pc.head_dim; i += 2u)
    put_word(is_v, at / 4u + i / 2u,
             packHalf2x16(vec2(value(is_v, src + i), value(is_v, src + i + 1u))));
#elif defined(WTYPE_BF16)
  for (uint i = 0u; i < pc.head_dim; i += 2u)
    put_word(is_v, at / 4u + i / 2u,
             to_bf16(value(is_v, src + i)) | (to_bf16(value(is_v, src + i + 1u)) << 16));
#else  // Q8_0: per 32 values, an f16 scale d = max|x| / 127, then round(x / d) as int8
  for (uint b = 0u; b < pc.head_dim / 32u; ++b) {
    const uint base = src + b * 32u;
    float amax = 0.0;
    for (uint j = 0u; j < 32u; ++j) amax = max(amax, abs(value(is_v, base + j)));
    const float d = amax / 127.0;
    const float inv = d != 0.0 ? 1.0 / d : 0.0;
    const uint block_at = at + b * 34u;
    const uint d_bits = packHalf2x16(vec2(d, 0.0)) & 0xFFFFu;
    put_byte(is_v, block_at, d_bits);
    put_byte(is_v, block_at + 1u, d_bits >> 8);
    for (uint j = 0u; j < 32u; ++j) {
      const float x = value(is_v, base + j) * inv;
      // lround: halves away from zero
      const int q = int(sign(x) * floor(abs(x) + 0.5));
      put_byte(is_v, block_at + 2u + j, uint(q) & 0xFFu);
    }
  }
#endif
}
