// Which type each tensor of a model gets when it is quantized to a llama.cpp file type
// ("Q4_K_M", "IQ4_XS", ...): the same choices llama.cpp's quantizer makes for a dense Qwen3
// model, so that a duet-quantized file is the file people expect under that name. A mixture
// type keeps the tensors that matter most in more bits: output.weight in Q6_K, and for
// Q4_K_M / Q5_K_M about half of the layers' attn_v and ffn_down in Q6_K.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gguf/ggml_type.h"

namespace duet {

struct QuantPreset {
  std::string name;    // as llama.cpp names it: "Q4_K_M"
  GgmlType base;       // the type of the tensors no rule changes
  uint32_t file_type;  // general.file_type (llama.cpp's LLAMA_FTYPE_MOSTLY_*)
};

// Case-insensitive; nothing for a name duet does not make.
std::optional<QuantPreset> quant_preset(std::string_view name);
// "Q8_0, Q6_K, …", for usage and error messages.
std::string quant_preset_names();

// What the rules read about the model.
struct QuantModelShape {
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  bool has_output = true;  // false: the output projection is tied to token_embd
};

// The type for one tensor; nothing when the tensor stays as it is (not a 2-D weight).
// `ne0` is its row length: a type whose block does not divide it falls back to a 32-element
// type as llama.cpp's does (Q4_K → Q5_0, Q6_K → Q8_0, ...), and to F16 if even that fails.
// Norms ("*_norm.weight") are never quantized, whatever their shape.
std::optional<GgmlType> quant_tensor_type(const QuantPreset& preset, const std::string& name,
                                          int n_dims, int64_t ne0, const QuantModelShape& model);

}  // namespace duet
