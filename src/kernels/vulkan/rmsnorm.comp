#version 450
// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w  (ref::rmsnorm: eps inside the root).
//
// Bindings: 0 x float [rows x dim]   1 w float [dim]   2 y float [rows x dim]
// Push (std430): uint rows, dim; float eps.
// Dispatch: one workgroup per row, row = WorkGroupID.x + WorkGroupID.y * NumWorkGroups.x.
// y may be the same buffer as x: each thread reads only the elements it later writes, and
// the reduction's barriers separate every read of the sum pass from every write.

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };
layout(std430, binding = 2) buffer YBuf { float y[]; };

layout(push_constant, std430) uniform Push {
  uint rows;
  uint dim;
  float eps;
} pc;

shared float red[64];

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= pc.rows) return;
  const uint tid = gl_LocalInvocationID.x;
  const uint base = row * pc.dim;

  float ss = 0.0;
  for (uint i = tid; i < pc.dim; i += 64u) {
    const float v = x[base + i];
    ss += v * v;
  }
  red[tid] = ss;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    barrier();
  }
  const float inv = 1.0 / sqrt(red[0] / float(pc.dim) + pc.eps);

  for (uint i = tid; i < pc.dim; i += 64u) {
    // The reference rounds x * inv to float before multiplying by w.
    precise float v = x[base + i] * inv;
    precise float r = v * w[i];
    y[base + i] = r;
  }
}
