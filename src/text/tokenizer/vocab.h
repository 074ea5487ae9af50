// The vocabulary stored in a GGUF file (tokenizer.ggml.*), validated: every token has a
// type, byte tokens spell a real byte, special ids point inside the vocabulary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"

namespace duet {

struct Vocab {
  std::string model;                     // tokenizer.ggml.model, e.g. "gpt2"
  std::string pre;                       // tokenizer.ggml.pre, e.g. "qwen2"
  std::vector<std::string_view> tokens;  // into the mapped file
  std::vector<int32_t> types;            // GGUF token types (1 normal, 3 control, ...)
  std::vector<std::string_view> merges;
  int32_t bos_id = -1, eos_id = -1, pad_id = -1;
  bool has_chat_template = false;

  int64_t count_of_type(int32_t type) const;
};

Result<Vocab> read_vocab(const GgufFile& f);

}  // namespace duet
