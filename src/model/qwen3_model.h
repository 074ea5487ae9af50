// Qwen3: a GGUF file bound to a backend, and its forward pass.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf_file.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"

namespace duet {

// Keys and values of one sequence, contiguous per layer: row p holds position p,
// [n_head_kv × head_dim] floats. Grows as positions are written.
class SequenceKv {
 public:
  SequenceKv(int64_t n_layer, int64_t row_width) : k_(n_layer), v_(n_layer), width_(row_width) {}
  int64_t length() const { return length_; }
  int64_t row_width() const { return width_; }
  // Makes room for positions [0, n) in every layer.
  void reserve_positions(int64_t n);
  void set_length(int64_t n) { length_ = n; }
  float* k(int64_t layer, int64_t pos) { return k_[layer].data() + pos * width_; }
  float* v(int64_t layer, int64_t pos) { return v_[layer].data() + pos * width_; }

 private:
  std::vector<std::vector<float>> k_, v_;
  int64_t width_;
  int64_t length_ = 0;
};

struct ModelLoadOptions {
  double yarn_factor = 0;        // > 0: turn YaRN on with this factor (the --rope-scaling flag)
  int64_t yarn_original_ctx = 0; // with yarn_factor: the original context (0: from the file)
};

class Qwen3Model {
 public:
  static Result<std::unique_ptr<Qwen3Model>> load(const std::string& path,
                                                  std::unique_ptr<Backend> backend,
                                                  const ModelLoadOptions& options = {});

  const Qwen3Config& config() const { return config_; }
  const GgufFile& gguf() const { return file_->gguf(); }
  Backend& backend() { return *backend_; }

  SequenceKv new_sequence() const { return SequenceKv(config_.n_layer, config_.kv_width()); }

  // Runs `tokens` at positions kv.length() .. kv.length()+n-1, appending their keys and
  // values to `kv`. Writes logits for every position ([n × n_vocab]) when all_logits,
  // else for the last position only ([n_vocab]).
  Status forward(std::span<const int32_t> tokens, SequenceKv& kv, bool all_logits,
                 std::vector<float>& logits);

 private:
  Qwen3Model() = default;
  void attention_block(const Qwen3Layer& layer, int64_t il, const std::vector<int32_t>& pos,
                       SequenceKv& kv, std::vector<float>& x);
  void ffn_block(const Qwen3Layer& layer, int64_t n, std::vector<float>& x);

  std::shared_ptr<GgufModelFile> file_;
  std::unique_ptr<Backend> backend_;
  Qwen3Config config_;
  Qwen3Weights weights_;
  RopeTables rope_;
};

}  // namespace duet
