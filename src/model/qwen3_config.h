// Qwen3 hyper-parameters, read from a GGUF file's `qwen3.*` metadata.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "kv/kv_shape.h"

namespace duet {

struct RopeScaling {
  enum class Kind { kNone, kYarn };
  Kind kind = Kind::kNone;
  double factor = 1.0;
  int64_t original_context = 0;  // the context the model was trained on
  double beta_fast = 32.0;       // YaRN ramp bounds, in rotations (Hugging Face defaults)
  double beta_slow = 1.0;
};

struct Qwen3Config {
  int64_t n_vocab = 0;  // rows of token_embd
  int64_t n_embd = 0;   // hidden size
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;     // attention.key_length; need not equal n_embd / n_head
  int64_t n_ff = 0;         // feed-forward (SwiGLU) width
  int64_t n_ctx_train = 0;  // context_length
  float rms_eps = 1e-6f;
  double rope_base = 1000000.0;
  RopeScaling rope_scaling;

  int64_t q_width() const { return n_head * head_dim; }
  int64_t kv_width() const { return n_head_kv * head_dim; }
  KvShape kv_shape() const { return {n_layer, n_head_kv, head_dim}; }
  // Longest context the model supports: the trained one, times the YaRN factor when on.
  int64_t max_context() const;
  std::string summary() const;
};

// Reads and validates the hyper-parameters. n_vocab is taken from token_embd.weight.
Result<Qwen3Config> read_qwen3_config(const GgufFile& f);

// Turns YaRN on (or changes its factor) regardless of the file: the `--rope-scaling yarn`
// flag. original_context 0 keeps the file's value or its trained context.
Status apply_yarn_override(Qwen3Config& cfg, double factor, int64_t original_context);

// RoPE frequencies for one head: inv_freq[i] for i < head_dim / 2, and the factor that
// cos and sin are multiplied by (YaRN's attention scaling; 1 without scaling). YaRN
// follows Hugging Face's `_compute_yarn_parameters`.
struct RopeTables {
  std::vector<double> inv_freq;
  double mscale = 1.0;
};
RopeTables compute_rope_tables(const Qwen3Config& cfg);

}  // namespace duet
