#include "cli/common/command_line.h"

#include <algorithm>
#include <utility>

namespace duet::cli {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> rewrite_llama_spellings(std::vector<std::string> args) {
  static const std::pair<const char*, const char*> kSpellings[] = {
      {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-np", "--parallel"}};
  for (std::string& arg : args) {
    if (arg == "--") break;  // what follows is not a flag
    for (const auto& [from, to] : kSpellings) {
      const std::string short_form = from;
      if (arg == short_form)
        arg = to;
      else if (arg.rfind(short_form + "=", 0) == 0)
        arg = to + arg.substr(short_form.size());
    }
  }
  return args;
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& name : names) {
    if (word.size() >= 2 && name.rfind(word, 0) == 0) return name;
    const size_t d = edit_distance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

}  // namespace duet::cli
