#include "text/grammar/token_trie.h"

#include <algorithm>

#include "text/tokenizer/bpe_tokenizer.h"

namespace duet::grammar {

TokenTrie::TokenTrie(int32_t n_vocab, std::vector<Token> tokens) : n_vocab_(n_vocab) {
  bytes_by_id_.resize(static_cast<size_t>(std::max(n_vocab, 0)));
  std::erase_if(tokens, [&](const Token& t) {
    return t.bytes.empty() || t.id < 0 || t.id >= n_vocab || t.bytes.size() > 0xFFFF;
  });
  std::sort(tokens.begin(), tokens.end(), [](const Token& a, const Token& b) {
    return a.bytes != b.bytes ? a.bytes < b.bytes : a.id < b.id;
  });
  // Sorted strings give the trie in depth-first order: each string shares a prefix with the
  // previous one, closes the nodes below that prefix and opens new ones.
  byte_.push_back(0);
  depth_.push_back(0);
  end_.push_back(0);
  std::vector<uint32_t> path{0};      // node at each depth along the current string
  std::vector<uint32_t> id_count{0};  // tokens ending at each node, filled as nodes are made
  std::string prev;
  for (Token& t : tokens) {
    size_t common = 0;
    while (common < prev.size() && common < t.bytes.size() && prev[common] == t.bytes[common])
      ++common;
    while (path.size() > common + 1) {
      end_[path.back()] = static_cast<uint32_t>(byte_.size());
      path.pop_back();
    }
    for (size_t d = common; d < t.bytes.size(); ++d) {
      path.push_back(static_cast<uint32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(t.bytes[d]));
      depth_.push_back(static_cast<uint16_t>(d + 1));
      end_.push_back(0);
      id_count.push_back(0);
    }
    max_depth_ = std::max(max_depth_, t.bytes.size());
    id_count[path.back()]++;
    ids_.push_back(t.id);
    bytes_by_id_[t.id] = t.bytes;
    prev = std::move(t.bytes);
  }
  while (!path.empty()) {
    end_[path.back()] = static_cast<uint32_t>(byte_.size());
    path.pop_back();
  }
  // Token ids per node: sorted strings reach their nodes in node order, so `ids_` is already
  // grouped by node.
  first_id_.assign(byte_.size() + 1, 0);
  for (size_t i = 0; i < byte_.size(); ++i) first_id_[i + 1] = first_id_[i] + id_count[i];
}

std::string_view TokenTrie::bytes(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < bytes_by_id_.size()
             ? std::string_view(bytes_by_id_[id])
             : std::string_view();
}

std::shared_ptr<const TokenTrie> text_token_trie(const Tokenizer& tokenizer,
                                                 std::span<const int32_t> excluded) {
  std::vector<TokenTrie::Token> tokens;
  tokens.reserve(static_cast<size_t>(tokenizer.n_vocab()));
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    if (tokenizer.is_control(id) ||
        std::find(excluded.begin(), excluded.end(), id) != excluded.end())
      continue;
    tokens.push_back({id, std::string(tokenizer.token_bytes(id))});
  }
  return std::make_shared<const TokenTrie>(tokenizer.n_vocab(), std::move(tokens));
}

}  // namespace duet::grammar
