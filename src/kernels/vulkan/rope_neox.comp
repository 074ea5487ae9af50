#version 450
// NeoX rotary embedding in place (ref::rope_neox): element i of each head turns with
// element i + head_dim/2 by the angle of pair i at the token's position.
//
// Bindings: 0 x  float [n_tokens x n_heads x head_dim], read and written
//           1 cs float [n_tokens x head_dim/2 x 2]: (cos * mscale, sin * mscale) of pair i
//                of token t at cs[(t * half + i) * 2 + 0 / 1], computed by the host in double
// Push (std430): uint n_tokens, n_heads, head_dim.
// Dispatch: one invocation per pair, n_tokens * n_heads * head_dim/2 in all, over y when
//   past 65535 groups; i = GlobalInvocationID.x + GlobalInvocationID.y * NumWorkGroups.x * 64.

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer CsBuf { float cs[]; };

layout(push_constant, std430) uniform Push {
  uint n_tokens;
  uint n_heads;
  uint head_dim;
} pc;

void main() {
  const uint idx = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * 64u);
  const uint half_dim = pc.head_dim / 2u;
  if (idx >= pc.n_tokens * pc.n_heads * half_dim) return;
  const uint i = idx % half_dim;
  const uint th = idx / half_dim;  // t * n_heads + h
  const uint t = th / pc.n_heads;
  const uint xb = th * pc.head_dim + i;
  const float c = cs[(t * half_dim + i) * 2u];
  const float s = cs[(t * half_dim + i) * 2u + 1u];
  const float x0 = x[xb], x1 = x[xb + half_dim];
  x[xb] = x0 * c - x1 * s;
  x[xb + half_dim] = x0 * s + x1 * c;
}
