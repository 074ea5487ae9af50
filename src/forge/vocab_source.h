// Vocabularies that `duet forge` writes into a synthetic model: Qwen3's real one, read
// from a Hugging Face tokenizer.json (+ tokenizer_config.json for the chat template), or a
// small byte-level one that needs no files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace duet {

// GGUF token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

struct ForgeVocab {
  std::vector<std::string> tokens;  // id -> text, in GPT-2 byte-to-unicode form
  std::vector<int32_t> types;       // TokenType per id
  std::vector<std::string> merges;  // "left right", best first
  std::string chat_template;        // empty: none
  int32_t eos_id = -1;              // <|im_end|>
  int32_t pad_id = -1;              // <|endoftext|>
  int32_t bos_id = -1;              // <|endoftext|> (Qwen3 adds no BOS)
};

// Reads `dir`/tokenizer.json and `dir`/tokenizer_config.json. Ids beyond the tokenizer's
// size up to `n_vocab` are filled with unused "[PAD<id>]" tokens, as the model's embedding
// table is larger than its tokenizer.
Result<ForgeVocab> load_hf_vocab(const std::string& dir, int64_t n_vocab);

// 256 byte tokens, no merges, then Qwen3's control and tool/think tokens.
ForgeVocab make_byte_vocab();

// The byte -> printable-code-point mapping of GPT-2 byte-level BPE, as UTF-8 strings.
const std::vector<std::string>& byte_to_unicode();

}  // namespace duet
