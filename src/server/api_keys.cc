#include "server/api_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/guard.h"

namespace duet {
namespace {

// A key file is a few lines; anything larger is not one (and is not read whole).
constexpr size_t kMaxKeyFileBytes = 1 << 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool valid_key(std::string_view key) {
  return std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

constexpr const char* kKeyRule = "a key must be printable ASCII without spaces";

void add_unique(std::vector<std::string>& keys, std::string_view key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.emplace_back(key);
}

}  // namespace

Result<std::vector<std::string>> parse_api_key_values(const std::vector<std::string>& values) {
  std::vector<std::string> keys;
  for (const std::string& value : values) {
    std::string_view rest = value;
    for (;;) {
      const size_t comma = rest.find(',');
      const std::string_view key = trim(rest.substr(0, comma));
      if (!key.empty()) {
        if (!valid_key(key))
          return Status::error(std::string("--api-key (or DUET_API_KEY): ") + kKeyRule +
                               " (several are separated by commas)");
        add_unique(keys, key);
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return keys;
}

Result<std::vector<std::string>> parse_api_key_file(std::string_view text, std::string_view path) {
  std::vector<std::string> keys;
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    if (!valid_key(line))
      return Status::error("--api-key-file " + std::string(path) + ", line " +
                           std::to_string(line_number) + ": " + kKeyRule);
    add_unique(keys, line);
  }
  if (keys.empty())
    return Status::error("--api-key-file " + std::string(path) +
                         ": the file holds no key (one per line; # starts a comment)");
  return keys;
}

Result<std::vector<std::string>> load_api_keys(const std::vector<std::string>& values,
                                               const std::string& file) {
  DUET_ASSIGN(keys, parse_api_key_values(values));
  if (file.empty()) return keys;
  const std::string where = "--api-key-file " + file;
  // O_NONBLOCK: a FIFO is refused below instead of waiting for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::error(where + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(where + ": not a regular file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxKeyFileBytes) {
    ::close(fd);
    return Status::error(where + ": larger than 1 MiB, not a key file");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::error(where + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  DUET_ASSIGN(from_file, parse_api_key_file(text, file));
  for (const std::string& key : from_file) add_unique(keys, key);
  return keys;
}

bool api_key_accepted(std::string_view given, const std::vector<std::string>& keys) {
  bool accepted = false;
  for (const std::string& key : keys) accepted = constant_time_equals(given, key) || accepted;
  return accepted;
}

}  // namespace duet
