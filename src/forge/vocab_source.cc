#include "forge/vocab_source.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace duet {
namespace {

std::string utf8_of(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

Result<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::error(path + " is not valid JSON");
  return j;
}

// Qwen3's added tokens that the template and parsers treat as markers (special or not).
const char* const kQwenExtraTokens[] = {"<|endoftext|>",    "<|im_start|>", "<|im_end|>",
                                        "<tool_call>",      "</tool_call>", "<tool_response>",
                                        "</tool_response>", "<think>",      "</think>"};

std::string string_field(const nlohmann::json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

const std::vector<std::string>& byte_to_unicode() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? utf8_of(static_cast<uint32_t>(b))
                       : utf8_of(256u + static_cast<uint32_t>(n++));
    }
    return t;
  }();
  return table;
}

ForgeVocab make_byte_vocab() {
  ForgeVocab v;
  for (const auto& s : byte_to_unicode()) {
    v.tokens.push_back(s);
    v.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  for (const char* t : kQwenExtraTokens) {
    const std::string s(t);
    const bool control = s.rfind("<|", 0) == 0;
    v.tokens.push_back(s);
    v.types.push_back(
        static_cast<int32_t>(control ? TokenType::kControl : TokenType::kUserDefined));
  }
  v.pad_id = v.bos_id = 256;  // <|endoftext|>
  v.eos_id = 258;             // <|im_end|>
  return v;
}

Result<ForgeVocab> load_hf_vocab(const std::string& dir, int64_t n_vocab) {
  auto tok = read_json(dir + "/tokenizer.json");
  if (!tok) return tok.status();
  auto cfg = read_json(dir + "/tokenizer_config.json");
  if (!cfg) return cfg.status();
  if (!tok->is_object() || !cfg->is_object())
    return Status::error("tokenizer.json and tokenizer_config.json must hold JSON objects");
  const nlohmann::json& model = (*tok)["model"];
  if (!model.is_object() || string_field(model, "type", "") != "BPE" ||
      !model["vocab"].is_object() || !model["merges"].is_array())
    return Status::error("tokenizer.json: expected a BPE model with a vocab");

  std::vector<std::string> tokens(static_cast<size_t>(n_vocab));
  std::vector<int32_t> types(static_cast<size_t>(n_vocab),
                             static_cast<int32_t>(TokenType::kUnused));
  std::vector<bool> set(static_cast<size_t>(n_vocab), false);
  auto place = [&](int64_t id, const std::string& text, TokenType type) -> Status {
    if (id < 0 || id >= n_vocab)
      return Status::error("tokenizer id " + std::to_string(id) + " does not fit a vocabulary of " +
                           std::to_string(n_vocab));
    tokens[id] = text;
    types[id] = static_cast<int32_t>(type);
    set[id] = true;
    return Status::ok();
  };
  for (const auto& [text, id] : model["vocab"].items()) {
    if (!id.is_number_integer()) return Status::error("tokenizer.json: non-integer id");
    DUET_TRY(place(id.get<int64_t>(), text, TokenType::kNormal));
  }
  const nlohmann::json& added_tokens = (*tok)["added_tokens"];
  if (!added_tokens.is_array())
    return Status::error("tokenizer.json: added_tokens is not an array");
  for (const auto& added : added_tokens) {
    if (!added.is_object() || !added["id"].is_number_integer() || !added["content"].is_string())
      return Status::error("tokenizer.json: malformed added_tokens entry");
    const bool special = added["special"].is_boolean() && added["special"].get<bool>();
    DUET_TRY(place(added["id"].get<int64_t>(), added["content"].get<std::string>(),
                   special ? TokenType::kControl : TokenType::kUserDefined));
  }
  ForgeVocab v;
  for (int64_t id = 0; id < n_vocab; ++id)
    if (!set[id]) tokens[id] = "[PAD" + std::to_string(id) + "]";
  v.tokens = std::move(tokens);
  v.types = std::move(types);
  for (const auto& m : model["merges"]) {
    if (m.is_string())
      v.merges.push_back(m.get<std::string>());
    else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
      v.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    else
      return Status::error("tokenizer.json: merge entry is neither \"a b\" nor [\"a\", \"b\"]");
  }
  if (cfg->contains("chat_template") && (*cfg)["chat_template"].is_string())
    v.chat_template = (*cfg)["chat_template"].get<std::string>();
  auto id_of = [&](const std::string& s) -> int32_t {
    for (int64_t id = n_vocab - 1; id >= 0; --id)
      if (v.tokens[id] == s) return static_cast<int32_t>(id);
    return -1;
  };
  v.eos_id = id_of(string_field(*cfg, "eos_token", "<|im_end|>"));
  v.pad_id = id_of(string_field(*cfg, "pad_token", "<|endoftext|>"));
  v.bos_id = id_of("<|endoftext|>");
  return v;
}

}  // namespace duet
