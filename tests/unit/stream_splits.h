// Ways to cut a text into the pieces a streaming parser is fed: whole, every 2-piece cut, every
// 3-piece cut (short texts), one byte at a time, and seeded random cuts. Parsers must produce
// the same output for all of them.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

using Pieces = std::vector<std::string_view>;

inline std::vector<Pieces> all_splits(std::string_view text, int random_splits = 50,
                                      uint32_t seed = 1) {
  std::vector<Pieces> out;
  out.push_back({text});
  for (size_t i = 0; i <= text.size(); ++i) out.push_back({text.substr(0, i), text.substr(i)});
  if (text.size() <= 48) {
    for (size_t i = 0; i <= text.size(); ++i) {
      for (size_t j = i; j <= text.size(); ++j)
        out.push_back({text.substr(0, i), text.substr(i, j - i), text.substr(j)});
    }
  }
  Pieces bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  out.push_back(bytes);
  std::mt19937 rng(seed);
  for (int r = 0; r < random_splits; ++r) {
    Pieces p;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t len = std::uniform_int_distribution<size_t>(0, 6)(rng);  // empty pieces too
      p.push_back(text.substr(pos, len));
      pos += std::min(len, text.size() - pos);
    }
    out.push_back(p);
  }
  return out;
}

// A readable description of a split for failure messages.
inline std::string describe(const Pieces& pieces) {
  std::string s;
  for (std::string_view p : pieces) {
    s += s.empty() ? "[" : "|";
    s += p;
  }
  return s + "]";
}

}  // namespace duet::test
