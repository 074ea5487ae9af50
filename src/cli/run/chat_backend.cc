#include "cli/run/chat_backend.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace duet::cli {

bool is_context_overflow(std::string_view message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("context") != std::string::npos &&
         (lower.find("token") != std::string::npos || lower.find("exceed") != std::string::npos ||
          lower.find("length") != std::string::npos);
}

}  // namespace duet::cli
