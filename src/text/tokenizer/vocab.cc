#include "text/tokenizer/vocab.h"

namespace duet {
namespace {

constexpr int32_t kTypeByte = 6;

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

Result<int32_t> optional_id(const GgufFile& f, const char* key, int64_t n_tokens) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return -1;
  auto id = v->as_int();
  if (!id || *id < 0 || *id >= n_tokens)
    return Status::error(std::string(key) + " is not a token id of this vocabulary");
  return static_cast<int32_t>(*id);
}

}  // namespace

int64_t Vocab::count_of_type(int32_t type) const {
  int64_t n = 0;
  for (int32_t t : types) n += t == type;
  return n;
}

Result<Vocab> read_vocab(const GgufFile& f) {
  Vocab v;
  const GgufValue* model = f.find("tokenizer.ggml.model");
  if (model == nullptr || !model->as_string())
    return Status::error("no tokenizer in the file (tokenizer.ggml.model)");
  v.model = std::string(*model->as_string());
  if (const GgufValue* pre = f.find("tokenizer.ggml.pre"); pre && pre->as_string())
    v.pre = std::string(*pre->as_string());

  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->type != GgufValueType::ARRAY)
    return Status::error("tokenizer.ggml.tokens is missing or not an array");
  auto toks = tokens->arr.strings();
  if (!toks) return toks.status().with_context("tokenizer.ggml.tokens");
  v.tokens = std::move(toks.value());
  if (v.tokens.empty()) return Status::error("tokenizer.ggml.tokens is empty");

  if (const GgufValue* types = f.find("tokenizer.ggml.token_type")) {
    if (types->type != GgufValueType::ARRAY)
      return Status::error("tokenizer.ggml.token_type is not an array");
    auto t = types->arr.ints();
    if (!t) return t.status().with_context("tokenizer.ggml.token_type");
    if (t->size() != v.tokens.size())
      return Status::error("tokenizer.ggml.token_type has " + std::to_string(t->size()) +
                           " entries for " + std::to_string(v.tokens.size()) + " tokens");
    v.types.reserve(t->size());
    for (int64_t x : *t) {
      if (x < 1 || x > 6)
        return Status::error("token type " + std::to_string(x) + " is not a GGUF token type");
      v.types.push_back(static_cast<int32_t>(x));
    }
  } else {
    v.types.assign(v.tokens.size(), 1);
  }
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    if (v.types[id] != kTypeByte) continue;
    const std::string_view t = v.tokens[id];
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || !is_hex(t[3]) || !is_hex(t[4]) || t[5] != '>')
      return Status::error("byte token " + std::to_string(id) + " is '" +
                           std::string(t.substr(0, 16)) + "', expected <0xHH>");
  }
  if (const GgufValue* merges = f.find("tokenizer.ggml.merges")) {
    if (merges->type != GgufValueType::ARRAY)
      return Status::error("tokenizer.ggml.merges is not an array");
    auto m = merges->arr.strings();
    if (!m) return m.status().with_context("tokenizer.ggml.merges");
    v.merges = std::move(m.value());
    for (size_t i = 0; i < v.merges.size(); ++i) {
      const auto sp = v.merges[i].find(' ');
      if (sp == std::string_view::npos || sp == 0 || sp + 1 == v.merges[i].size())
        return Status::error("merge " + std::to_string(i) +
                             " is not two tokens separated by a space");
    }
  }
  const int64_t n = static_cast<int64_t>(v.tokens.size());
  auto bos = optional_id(f, "tokenizer.ggml.bos_token_id", n);
  if (!bos) return bos.status();
  auto eos = optional_id(f, "tokenizer.ggml.eos_token_id", n);
  if (!eos) return eos.status();
  auto pad = optional_id(f, "tokenizer.ggml.padding_token_id", n);
  if (!pad) return pad.status();
  v.bos_id = *bos, v.eos_id = *eos, v.pad_id = *pad;
  v.has_chat_template = f.find("tokenizer.chat_template") != nullptr;
  return v;
}

}  // namespace duet
