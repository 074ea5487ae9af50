// Qwen3 weights bound by name from a GGUF file, each checked against the shape and the
// types the model expects. Matrices stay in the mapped file; only the small norm vectors
// are decoded to float at load (a few KiB per layer).
#pragma once

#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/qwen3_config.h"

namespace duet {

struct Qwen3Layer {
  std::vector<float> attn_norm;  // [n_embd]
  WeightMatrix wq;               // [q_width rows × n_embd]
  WeightMatrix wk;               // [kv_width × n_embd]
  WeightMatrix wv;               // [kv_width × n_embd]
  std::vector<float> q_norm;     // [head_dim], applied per head
  std::vector<float> k_norm;     // [head_dim]
  WeightMatrix wo;               // [n_embd × q_width]
  std::vector<float> ffn_norm;   // [n_embd]
  WeightMatrix w_gate;           // [n_ff × n_embd]
  WeightMatrix w_up;             // [n_ff × n_embd]
  WeightMatrix w_down;           // [n_embd × n_ff]
};

struct Qwen3Weights {
  WeightMatrix token_embd;         // [n_vocab × n_embd]
  std::vector<Qwen3Layer> layers;  // [n_layer]
  std::vector<float> output_norm;  // [n_embd]
  WeightMatrix output;             // [n_vocab × n_embd]; token_embd when tied
  bool tied_output = false;
};

// Binds every tensor; an error names the tensor and its expected and actual shape/type.
Result<Qwen3Weights> bind_qwen3_weights(const GgufFile& f, const Qwen3Config& cfg);

}  // namespace duet
