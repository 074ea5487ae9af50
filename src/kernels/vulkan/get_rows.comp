#version 450
// out[t] = decode(table row ids[t])  (ref::get_rows), table in the type chosen by WTYPE_*.
//
// Bindings: 0 table  uint words, rows in the device layout (weight_layout.h), row r at
//                  byte r * row_bytes
//           1 ids    int [n]; a negative id leaves its output row alone (a table split into
//                    pieces of rows is read one piece at a time, ids outside it negative)
//           2 out    float [n x cols]
// Push (std430): uint cols, row_bytes, n.
// Dispatch: one workgroup per id, t = WorkGroupID.x + WorkGroupID.y * NumWorkGroups.x.
// cols % W_QK == 0 for block types; float types take any cols.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer WeightBuf { uint w_words[]; };
layout(std430, binding = 1) readonly buffer IdBuf { int ids[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float outv[]; };

layout(push_constant, std430) uniform Push {
  uint cols;
  uint row_bytes;
  uint n;
} pc;

// Weights are uploaded in the device layout (backend/vulkan/weight_layout.h).
#define W_DEVICE_LAYOUT
#include "weights.glsl"

void main() {
  const uint t = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (t >= pc.n) return;
  const uint tid = gl_LocalInvocationID.x;
  const uint cols = pc.cols;
  const int id = ids[t];
  if (id < 0) return;  // the same for the whole group, and there is no barrier below
  const uint rb = uint(id) * pc.row_bytes;
  const uint ob = t * cols;
  const uint ngroups = cols / 8u;

  for (uint g = tid; g < ngroups; g += 64u) {
    float v[8];
    dequant8(rb, g * 8u, v);
    for (uint k = 0u; k < 8u; ++k) outv[ob + g * 8u + k] = v[k];
  }
#if W_QK == 1
  const uint c = ngroups * 8u + tid;
  if (c < cols) outv[ob + c] = dequant1(rb, c);
#endif
}
