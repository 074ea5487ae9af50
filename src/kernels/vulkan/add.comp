#version 450
// x += y  (ref::add_inplace).
//
// Bindings: 0 x float [n] (read and written)   1 y float [n]
// Push (std430): uint n.
// Dispatch: ceil(n / 64) workgroups, over y when past 65535;
//   i = GlobalInvocationID.x + GlobalInvocationID.y * NumWorkGroups.x * 64.

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer YBuf { float y[]; };

layout(push_constant, std430) uniform Push {
  uint n;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * 64u);
  if (i >= pc.n) return;
  x[i] += y[i];
}
