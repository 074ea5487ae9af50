#version 450
// out = silu(gate) * up = gate / (1 + exp(-gate)) * up  (ref::swiglu).
//
// Bindings: 0 gate float [n]   1 up float [n]   2 out float [n] (may be gate's buffer)
// Push (std430): uint n.
// Dispatch: ceil(n / 64) workgroups, over y when past 65535;
//   i = GlobalInvocationID.x + GlobalInvocationID.y * NumWorkGroups.x * 64.

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer GateBuf { float gate[]; };
layout(std430, binding = 1) readonly buffer UpBuf { float up[]; };
layout(std430, binding = 2) buffer OutBuf { float outv[]; };

layout(push_constant, std430) uniform Push {
  uint n;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * 64u);
  if (i >= pc.n) return;
  const float g = gate[i];
  outv[i] = g / (1.0 + exp(-g)) * up[i];
}
