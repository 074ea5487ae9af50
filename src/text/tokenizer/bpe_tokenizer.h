// Qwen2/Qwen3's tokenizer: byte-level BPE over pieces cut by the Qwen2 pre-tokenizer, with
// NFC normalization and "added tokens" (<|im_start|>, <think>, ...) matched in the text.
//
// encode: text -> added tokens split out -> NFC on the text between them -> pieces
// (text/pretokenizer.h) -> each piece's bytes mapped to GPT-2's byte tokens -> merges applied,
// lowest rank first (leftmost first on ties), as Hugging Face tokenizers does.
//
// Where added tokens may match is the caller's choice, by provenance: anywhere in text the
// server wrote (encode_template), nowhere in text a user wrote (encode_user), and in a
// rendered prompt only inside the bytes the template wrote (encode_marked).
//
// A Tokenizer is immutable once loaded, apart from a bounded, locked cache of piece -> ids;
// one instance may be shared by all threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "text/tokenizer/marked_text.h"

namespace duet {

class MergeTable;
class PieceCache;

// Which added tokens may match in client text (Tokenizer::encode_marked).
enum class ClientAddedTokens {
  kNone,  // none: every byte a client sent is plain text
  // The non-special ones (<think>, </think>, <tool_call>, <tool_response>, <|fim_prefix|>,
  // ... in Qwen3), as Hugging Face's tokenizer matches them in any text. Control tokens
  // (<|im_start|>, <|im_end|>, <|endoftext|>, ...) never match in client text.
  kNonSpecial,
};

class Tokenizer {
 public:
  // tokenizer.ggml.* of a GGUF file: model "gpt2" (byte-level BPE), tokens, token types and
  // merges. Token types 3 (CONTROL) and 4 (USER_DEFINED) are the added tokens; CONTROL ones
  // are "special". GGUF does not record the normalizer; NFC is applied, as Qwen's
  // tokenizer.json asks.
  static Result<Tokenizer> from_gguf(const GgufFile& file);
  // A Hugging Face tokenizer.json with a byte-level BPE model (model.vocab, model.merges as
  // "a b" or ["a", "b"], added_tokens). added_tokens with "special": true are CONTROL.
  static Result<Tokenizer> from_hf_json(std::string_view tokenizer_json);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text written by a user: no added token is matched. <|im_end|> and <think> typed by a
  // user are the characters "<|im_end|>" and "<think>": no user can open or close a turn,
  // or start reasoning or a tool call.
  std::vector<int32_t> encode_user(std::string_view text) const;
  // Text the server composed itself: every added token found in it becomes its id
  // (leftmost, then longest match), the text between them is encoded normally. Hugging
  // Face's tokenizer.encode(text) does the same.
  std::vector<int32_t> encode_template(std::string_view text) const;
  // A rendered prompt (MarkedText): an added token matches only where every byte of its
  // spelling is trusted — or, with kNonSpecial, a non-special one anywhere. The text between
  // two matches is encoded in one run, template and client bytes together, so the
  // pre-tokenizer and the merges cut it exactly as Hugging Face's tokenizer cuts the
  // rendered string: when the client's text holds no added-token spelling, the ids are
  // encode_template(text)'s. Linear in the size of the text.
  std::vector<int32_t> encode_marked(std::string_view text, const TextSpans& trusted,
                                     ClientAddedTokens client = ClientAddedTokens::kNone) const;

  // The bytes that `ids` stand for. Not necessarily valid UTF-8 (a character may be split
  // across tokens; see IncrementalDecoder). With `skip_special`, CONTROL tokens give "".
  // UNUSED tokens (type 5, e.g. padding up to the model's vocabulary size) always give "".
  // An id outside [0, n_vocab()) is an error: ids from outside must be validated.
  Result<std::string> decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // The bytes of one token ("" for ids outside the vocabulary and for UNUSED tokens).
  std::string_view token_bytes(int32_t id) const;
  // The token as the vocabulary spells it: byte-level form for ordinary tokens ("Ġthe" for
  // " the"), the literal text for added tokens. "" for ids outside the vocabulary.
  std::string_view token_text(int32_t id) const;
  int32_t n_vocab() const { return static_cast<int32_t>(types_.size()); }
  // The id of the token whose bytes are exactly `text` (an added token when one matches).
  std::optional<int32_t> find_token(std::string_view text) const;
  // CONTROL tokens (<|im_start|>, <|im_end|>, <|endoftext|>, ...). <think>, </think>,
  // <tool_call>, <tool_response> and their closers are not control tokens in Qwen3.
  bool is_control(int32_t id) const;
  bool is_added(int32_t id) const;

 private:
  struct AddedToken {
    std::string text;
    int32_t id;
    bool control;
  };
  struct Scratch;
  Tokenizer();

  static Result<Tokenizer> build(std::vector<std::string> texts, std::vector<int32_t> types,
                                 std::vector<std::pair<std::string, std::string>> merges, bool nfc);
  // `trusted` null: every byte is trusted.
  std::vector<int32_t> encode(std::string_view text, const TextSpans* trusted,
                              bool non_special_in_client) const;
  void encode_text(std::string_view text, std::vector<int32_t>* out, Scratch* scratch) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>* out, Scratch* scratch) const;
  void merge_piece(std::string_view piece, std::vector<int32_t>* out, Scratch* scratch) const;

  std::vector<std::string> texts_;                  // id -> vocabulary spelling
  std::vector<std::string> bytes_;                  // id -> decoded bytes
  std::vector<int32_t> types_;                      // id -> GGUF token type
  int32_t byte_ids_[256] = {};                      // byte -> id of its single-byte token
  std::vector<AddedToken> added_;                   // longest first
  std::vector<uint16_t> added_by_first_byte_[256];  // indices into added_, longest first
  bool nfc_ = true;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<PieceCache> cache_;
};

// Turns a stream of token ids into text that is always valid UTF-8: a character split across
// tokens is held back until its last byte arrives. Bytes that cannot become a character
// (a stray continuation byte, a sequence broken off) come out as U+FFFD, one per maximal
// ill-formed subpart (as Python's and Rust's lossy decoders do). Ids outside the vocabulary
// are skipped (they give ""); the caller that accepts ids from outside validates them first.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special = false)
      : tokenizer_(tokenizer), skip_special_(skip_special) {}

  // The text that `id` completes (possibly "" while a character is incomplete).
  std::string push(int32_t id);
  // The end of the stream: any held bytes, as U+FFFD.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::string pending_;  // bytes of an incomplete character (at most 3)
};

}  // namespace duet
