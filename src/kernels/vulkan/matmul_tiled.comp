#version 450
// y[t][r] = sum_c W[r][c] * x[t][c]  (ref::matmul) for many tokens at once (prefill): a
// tiled GEMM. Each workgroup computes a tile of TM rows x TN tokens, stepping through the
// columns TK at a time: the tile's weights are decoded once into shared memory and serve
// all TN tokens, the tokens' activations serve all TM rows. matmul.comp (one workgroup per
// row, tokens in tiles of 8) is the decode kernel; this one is for n_tokens >= 16.
//
// Bindings, push constants and the Y layout as matmul.comp.
// Dispatch: (ceil(rows / TM), ceil(n_tokens / TN)) workgroups of 256.

layout(local_size_x = 256) in;

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

#define TM 64u
#define TN 32u
#define TK 32u
#define PAD (TK + 1u)  // a row of a shared tile, padded against bank conflicts

shared float w_s[TM * PAD];
shared float x_s[TN * PAD];

void main() {
  const uint row0 = gl_WorkGroupID.x * TM;
  const uint tok0 = gl_WorkGroupID.y * TN;
  const uint tid = gl_LocalInvocationID.x;
  // This thread's outputs: rows tr + 16 i (i < 4), tokens tt + 16 j (j < 2).
  const uint tr = tid % 16u, tt = tid / 16u;
  precise float acc[4][2], comp[4][2];  // totals and their Kahan compensations
  for (uint i = 0u; i < 4u; ++i) acc[i][0] = acc[i][1] = comp[i][0] = comp[i][1] = 0.0;

  // The weight group this thread decodes at each step: row wr, columns wg * 8 .. + 8.
  const uint wr = tid / 4u, wg = tid % 4u;
  const bool w_row_in = row0 + wr < pc.rows;
  const uint w_row_byte = (row0 + wr) * pc.row_bytes;

  for (uint k0 = 0u; k0 < pc.cols; k0 += TK) {
    {
      float v[8];
      const uint c = k0 + wg * 8u;
      if (w_row_in && c + 8u <= pc.cols) {
        dequant8(w_row_byte, c, v);
      } else {  // past the last row, or a float row's last partial group
        for (uint k = 0u; k < 8u; ++k)
          v[k] = w_row_in && c + k < pc.cols ? dequant1(w_row_byte, c + k) : 0.0;
      }
      for (uint k = 0u; k < 8u; ++k) w_s[wr * PAD + wg * 8u + k] = v[k];
    }
    for (uint i = tid; i < TN * TK; i += 256u) {
      const uint t = i / TK, c = i % TK;
      x_s[t * PAD + c] = tok0 + t < pc.n_tokens && k0 + c < pc.cols
                             ? x[(tok0 + t) * pc.cols + k0 + c]
                             : 0.0;
    }
    barrier();
    // Summed as carefully as matmul.comp's tree reduction, so that prefill and decode
    // agree with the reference equally well: the step's products in runs of 8, the runs
    // added in pairs, and the steps into a compensated (Kahan) total.
    for (uint i = 0u; i < 4u; ++i)
      for (uint j = 0u; j < 2u; ++j) {
        const uint wb = (tr + 16u * i) * PAD, xb = (tt + 16u * j) * PAD;
        float run[4];
        for (uint g = 0u; g < 4u; ++g) {
          float s8 = 0.0;
          for (uint k = g * 8u; k < g * 8u + 8u; ++k) s8 += w_s[wb + k] * x_s[xb + k];
          run[g] = s8;
        }
        precise float add = ((run[0] + run[1]) + (run[2] + run[3])) - comp[i][j];
        precise float sum = acc[i][j] + add;
        comp[i][j] = (sum - acc[i][j]) - add;
        acc[i][j] = sum;
      }
    barrier();  // the tiles are rewritten by the next step
  }

  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 2u; ++j) {
      const uint r = row0 + tr + 16u * i, t = tok0 + tt + 16u * j;
      if (r < pc.rows && t < pc.n_tokens) y[t * pc.y_stride + pc.y_offset + r] = acc[i][j];
    }
}
