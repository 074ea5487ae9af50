#version 450
// y[t][r] = sum_c W[r][c] * x[t][c]  (ref::matmul), W in the GGUF type chosen by WTYPE_*.
//
// Bindings: 0 W  uint words, rows in the device layout (weight_layout.h), row r at byte
//              r * row_bytes
//           1 X  float [n_tokens x cols]
//           2 Y  float, row r of token t at t * y_stride + y_offset + r
// Push (std430): uint rows, cols, row_bytes, n_tokens, y_stride, y_offset. (A matrix larger
// than one buffer may hold is split into pieces of rows, each multiplied into its columns
// of Y: y_stride is the whole matrix's rows, y_offset the piece's first row.)
// Dispatch: one workgroup per output row, row = WorkGroupID.x + WorkGroupID.y * NumWorkGroups.x.
// cols % W_QK == 0 for block types; float types take any cols.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer WeightBuf { uint w_words[]; };
layout(std430, binding = 1) readonly buffer XBuf { float x[]; };
layout(std430, binding = 2) writeonly buffer YBuf { float y[]; };

layout(push_constant, std430) uniform Push {
  uint rows;
  uint cols;
  uint row_bytes;
  uint n_tokens;
  uint y_stride;
  uint y_offset;
} pc;

// Weights are uploaded in the device layout (backend/vulkan/weight_layout.h).
#define W_DEVICE_LAYOUT
#include "weights.glsl"

#define TILE 8u

shared float red[TILE * 64u];

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= pc.rows) return;  // the same for the whole group, so barriers stay uniform
  const uint tid = gl_LocalInvocationID.x;
  const uint cols = pc.cols;
  const uint rb = row * pc.row_bytes;
  const uint ngroups = cols / 8u;

  // Tokens in tiles of TILE so that each decoded weight group serves up to TILE tokens.
  for (uint t0 = 0u; t0 < pc.n_tokens; t0 += TILE) {
    const uint nt = min(TILE, pc.n_tokens - t0);
    float acc[TILE];
    for (uint tt = 0u; tt < TILE; ++tt) acc[tt] = 0.0;

    for (uint g = tid; g < ngroups; g += 64u) {
      float v[8];
      dequant8(rb, g * 8u, v);
      for (uint tt = 0u; tt < TILE; ++tt) {
        if (tt < nt) {
          const uint xb = (t0 + tt) * cols + g * 8u;
          float s = 0.0;
          for (uint k = 0u; k < 8u; ++k) s += v[k] * x[xb + k];
          acc[tt] += s;
        }
      }
    }
#if W_QK == 1
    // Float rows may end in a partial group: cols % 8 < 64 elements, one per thread.
    const uint c = ngroups * 8u + tid;
    if (c < cols) {
      const float wv = dequant1(rb, c);
      for (uint tt = 0u; tt < TILE; ++tt)
        if (tt < nt) acc[tt] += wv * x[(t0 + tt) * cols + c];
    }
#endif

    for (uint tt = 0u; tt < TILE; ++tt) red[tt * 64u + tid] = acc[tt];
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
      if (tid < s)
        for (uint tt = 0u; tt < TILE; ++tt) red[tt * 64u + tid] += red[tt * 64u + tid + s];
      barrier();
    }
    if (tid < nt) y[(t0 + tid) * pc.y_stride + pc.y_offset + row] = red[tid * 64u];
    barrier();  // red is rewritten by the next tile
  }
}
