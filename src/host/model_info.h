// What the listing routes (/v1/models, /api/tags, /api/show, /api/ps) say about the served
// model, worked out once at load from the file.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf_file.h"

namespace duet {

struct ModelInfo {
  std::string name;      // e.g. "qwen3-demo" (clients may add ":latest")
  bool demo = false;     // random weights: the output is noise
  std::string owned_by;  // "duet", or "duet-demo"
  std::string description;
  int64_t created = 0;  // unix seconds
  uint64_t size_bytes = 0;
  std::string digest;          // hex; identifies the file's header and size, not a checksum
  std::string parameter_size;  // "0.6B", "1.2M"
  std::string quantization;    // "Q8_0", "Q4_K"...
  int64_t context_length = 0;  // what one sequence may hold on this server
  std::string chat_template;   // the Jinja source the prompts are rendered with
  std::string architecture_summary;
};

// The name, description, size, digest, parameter count and main tensor type of the file at
// `path` (for the demo model: of its tensors; it has no file left). `name` empty: the file's
// stem. The context, chat template and architecture are the host's to fill.
ModelInfo describe_model(const GgufFile& file, const std::string& path, bool demo,
                         std::string name);

// "0.6B", "14.8B", "3.2M": Ollama's parameter_size spelling.
std::string format_parameter_count(uint64_t n);

}  // namespace duet
