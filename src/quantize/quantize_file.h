// `duet quantize`: a GGUF model written again with its matrices in a quantized type, the
// tensor choices of quant_plan.h, every metadata key carried over and general.file_type set.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "base/status.h"
#include "quantize/quant_plan.h"

namespace duet {

struct QuantizeOptions {
  QuantPreset preset;
  int threads = 0;                // 0: every core
  bool allow_requantize = false;  // the input may already be quantized
  // After each tensor: how many are done, of how many, and the one just written.
  std::function<void(size_t done, size_t total, const std::string& tensor, GgmlType type)> progress;
};

struct QuantizeSummary {
  size_t tensors = 0;
  size_t quantized = 0;                  // tensors whose type changed
  uint64_t bytes_in = 0, bytes_out = 0;  // tensor data
};

// Writes `out_path` atomically (a complete file or none).
Result<QuantizeSummary> quantize_gguf(const std::string& in_path, const std::string& out_path,
                                      const QuantizeOptions& options);

}  // namespace duet
