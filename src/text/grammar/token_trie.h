// TokenTrie: the bytes of every token a constraint may pick, as a trie laid out in depth-first
// order, so that computing a mask is one forward scan that skips a whole subtree as soon as
// the automaton refuses its first byte.
//
// Which tokens are in it is the caller's choice: the host puts in every token that stands for
// text (normal, byte and user-defined added tokens) and leaves out control tokens and the
// think tags, which a grammar never spells. End tokens are handled by the engine (allowed
// exactly where the grammar may end).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet {
class Tokenizer;
}

namespace duet::grammar {

class TokenTrie {
 public:
  struct Token {
    int32_t id = 0;
    std::string bytes;
  };
  // `n_vocab` sizes the masks; tokens with empty bytes are left out.
  TokenTrie(int32_t n_vocab, std::vector<Token> tokens);

  int32_t n_vocab() const { return n_vocab_; }
  size_t n_words() const { return static_cast<size_t>(n_vocab_ + 63) / 64; }
  size_t n_nodes() const { return byte_.size(); }
  // The bytes of a token in the trie ("" for one that is not).
  std::string_view bytes(int32_t id) const;

  // Node i (i ≥ 1; node 0 is the root): the byte on the edge from its parent, its depth (1 for
  // the root's children), one past the last node of its subtree, and the tokens that end here.
  uint8_t byte(size_t i) const { return byte_[i]; }
  uint16_t depth(size_t i) const { return depth_[i]; }
  uint32_t subtree_end(size_t i) const { return end_[i]; }
  std::span<const int32_t> tokens_at(size_t i) const {
    return {ids_.data() + first_id_[i], first_id_[i + 1] - first_id_[i]};
  }
  size_t max_depth() const { return max_depth_; }

 private:
  int32_t n_vocab_;
  std::vector<uint8_t> byte_;
  std::vector<uint16_t> depth_;
  std::vector<uint32_t> end_;
  std::vector<uint32_t> first_id_;  // n_nodes + 1 entries into ids_
  std::vector<int32_t> ids_;
  std::vector<std::string> bytes_by_id_;
  size_t max_depth_ = 0;
};

// The trie of every token of `tokenizer` that stands for text: control tokens and `excluded`
// (end tokens, think tags) are left out.
std::shared_ptr<const TokenTrie> text_token_trie(const Tokenizer& tokenizer,
                                                 std::span<const int32_t> excluded);

}  // namespace duet::grammar
