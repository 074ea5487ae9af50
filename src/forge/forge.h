// `duet forge`: synthetic Qwen3 GGUF files of any shape with seeded random weights, for
// tests and benchmarks that need a model of a real shape without downloading one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "forge/vocab_source.h"
#include "gguf/ggml_type.h"

namespace duet {

struct ForgeShape {
  int64_t n_layer = 2;
  int64_t n_embd = 128;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t head_dim = 32;
  int64_t n_ff = 256;
  int64_t n_vocab = 0;  // 0: the vocabulary's size
  int64_t n_ctx = 40960;
  bool tied_output = true;
  double rope_base = 1000000.0;
  float rms_eps = 1e-6f;
  double yarn_factor = 0;  // > 0: write YaRN scaling metadata
  int64_t yarn_original_ctx = 0;
};

// The published Qwen3 shapes: qwen3-0.6b, -1.7b, -4b, -8b, -14b.
std::optional<ForgeShape> forge_preset(const std::string& name);

struct ForgeOptions {
  ForgeShape shape;
  GgmlType type = GgmlType::Q8_0;  // matrices; norms stay F32
  uint64_t seed = 1;
  std::string name = "duet-forged";
  // Called after each tensor is written, with how many of how many are done.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Writes the model to `out_path` (atomically: a complete file or none).
Status forge_model(const ForgeOptions& options, const ForgeVocab& vocab,
                   const std::string& out_path);

}  // namespace duet
