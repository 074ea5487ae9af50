// Qwen3: a GGUF file bound to a backend, and its forward pass over a batch of sequence
// chunks (prefill pieces and decode tokens of many sequences in one pass, so each weight
// is read once per step).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf_file.h"
#include "kv/kv_storage.h"
#include "model/qwen3_config.h"
#include "model/qwen3_weights.h"

namespace duet {

enum class LogitsFor { kNone, kLast, kAll };

// New tokens of one sequence in a batch. They sit at positions start_pos … start_pos+n-1;
// the sequence's keys and values for positions below start_pos are already in the cache.
struct ForwardChunk {
  std::span<const int32_t> tokens;
  int64_t start_pos = 0;
  std::span<const int32_t> block_table;  // must cover positions [0, start_pos + n)
  LogitsFor logits = LogitsFor::kLast;
};

class Qwen3Model;

// One sequence with a private, contiguous KV cache sized for the model's whole context
// (reserved, paged in as used): for `duet logits`, tests and one-off evaluation.
class SequenceKv {
 public:
  int64_t length() const { return length_; }

 private:
  friend class Qwen3Model;
  std::shared_ptr<KvStorage> storage_;
  std::vector<int32_t> block_table_;
  int64_t length_ = 0;
};

struct ModelLoadOptions {
  double yarn_factor = 0;         // > 0: turn YaRN on with this factor (the --rope-scale flag)
  int64_t yarn_original_ctx = 0;  // with yarn_factor: the original context (0: from the file)
  // When set and true, the load stops between matrices and fails with kLoadCancelled (a
  // server told to stop while it loads).
  const std::atomic<bool>* cancel = nullptr;
  // Called after each matrix is prepared for the backend (packed, or copied to a GPU), with
  // how many of how many are done: a command shows it as progress (base/progress.h).
  std::function<void(int64_t done, int64_t total)> progress;
};

inline constexpr std::string_view kLoadCancelled = "the load was cancelled";

class Qwen3Model {
 public:
  static Result<std::unique_ptr<Qwen3Model>> load(const std::string& path,
                                                  std::unique_ptr<Backend> backend,
                                                  const ModelLoadOptions& options = {});

  const Qwen3Config& config() const { return config_; }
  const GgufFile& gguf() const { return file_->gguf(); }
  Backend& backend() { return *backend_; }

  // Runs every chunk in one pass, writing their keys and values into `kv`. `logits` gets
  // one row of n_vocab per requested position, in chunk order (kLast: one row, kAll: one
  // per token).
  Status forward_batch(std::span<const ForwardChunk> chunks, KvStorage& kv,
                       std::vector<float>& logits);

  // A KV cache in this model's backend's memory, for n_blocks blocks of block_size positions.
  Result<std::unique_ptr<KvStorage>> new_kv_storage(int64_t n_blocks, int64_t block_size,
                                                    GgmlType dtype);

  // Bytes of weights read from the mapped file (no backend copy): they must stay resident,
  // though the kernel counts them as reclaimable page cache.
  size_t mapped_weight_bytes() const { return mapped_weight_bytes_; }

  // Bytes of weights one decode step reads: every matrix once, one embedding row.
  size_t weight_bytes_read_per_token() const;

  // Single-sequence convenience over forward_batch.
  SequenceKv new_sequence() const { return SequenceKv(); }
  Status forward(std::span<const int32_t> tokens, SequenceKv& seq, bool all_logits,
                 std::vector<float>& logits);

 private:
  Qwen3Model() = default;
  struct BatchLayout;
  Status lay_out(std::span<const ForwardChunk> chunks, const KvStorage& kv, BatchLayout& b);
  Status size_workspace(int64_t n_tokens, int64_t n_rows);
  void attention_block(const Qwen3Layer& layer, const KvLayer& kv, const BatchLayout& b);
  void ffn_block(const Qwen3Layer& layer, int64_t n);

  std::shared_ptr<GgufModelFile> file_;
  std::unique_ptr<Backend> backend_;
  Qwen3Config config_;
  Qwen3Weights weights_;
  size_t mapped_weight_bytes_ = 0;
  RopeTables rope_;
  // One pass's activations, in buffers of the backend (device memory on a GPU, where a
  // step's values stay between operations), kept between passes so that a decode step
  // allocates nothing; a buffer grows to the largest pass seen.
  struct ActivationBuffer {
    std::unique_ptr<BackendBuffer> buffer;
    Status reserve(Backend& backend, size_t bytes);
    BackendBuffer& operator*() const { return *buffer; }
  };
  struct Workspace {
    ActivationBuffer x, h, q, k, v, att, gate, up;  // [n_tokens × width]
    ActivationBuffer picked, normed;                // the rows whose logits are wanted
  };
  Workspace ws_;
};

}  // namespace duet
