#include "cli/run/line_input.h"

// libedit's readline interface (BSD-licensed, from Debian's libedit-dev).
#include <editline/readline.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace duet::cli {
namespace {

constexpr const char* kBlockQuote = R"(""")";
constexpr int kHistoryEntries = 1000;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::optional<std::string> MultiLineJoiner::feed(const std::string& raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF file
  const auto complete = [&] {
    std::string out = std::move(text_);
    text_.clear();
    started_ = in_block_ = false;
    return std::optional<std::string>(std::move(out));
  };
  if (in_block_) {
    if (ends_with(line, kBlockQuote)) {
      text_ += line.substr(0, line.size() - 3);
      // A closing """ on a line of its own ends the text on the line before it.
      if (line.size() == 3 && !text_.empty() && text_.back() == '\n') text_.pop_back();
      return complete();
    }
    text_ += line + "\n";
    return std::nullopt;
  }
  if (!started_ && line.rfind(kBlockQuote, 0) == 0) {
    const std::string rest = line.substr(3);
    started_ = true;
    if (rest.size() >= 3 && ends_with(rest, kBlockQuote)) {  // """one line"""
      text_ = rest.substr(0, rest.size() - 3);
      return complete();
    }
    in_block_ = true;
    text_ = rest.empty() ? "" : rest + "\n";
    return std::nullopt;
  }
  if (!line.empty() && line.back() == '\\') {
    text_ += line.substr(0, line.size() - 1) + "\n";
    started_ = true;
    return std::nullopt;
  }
  text_ += line;
  return complete();
}

std::optional<std::string> MultiLineJoiner::finish() {
  if (!started_) return std::nullopt;
  std::string out = std::move(text_);
  text_.clear();
  started_ = in_block_ = false;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string default_history_path() {
  std::string home;
  if (const char* d = std::getenv("DUET_HOME"); d != nullptr && *d != '\0') {
    home = d;
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    home = std::string(h) + "/.cache/duet";
  } else {
    return "";
  }
  return home + "/run_history";
}

LineInput::LineInput(bool terminal, std::string history_path)
    : terminal_(terminal), history_path_(std::move(history_path)) {
  if (!terminal_) return;
  // libedit reads multi-byte characters by the locale's encoding; in the "C" locale typed
  // Chinese, Cyrillic or "é" would arrive mangled. duet's text is UTF-8 whatever the environment
  // says, so a C or POSIX locale (no LANG set, as under systemd or in a container) becomes
  // C.UTF-8. Only LC_CTYPE: numbers stay as they are.
  const char* chosen = std::setlocale(LC_CTYPE, "");
  const std::string name = chosen ? chosen : "C";
  if (name == "C" || name == "POSIX") std::setlocale(LC_CTYPE, "C.UTF-8");
  using_history();
  stifle_history(kHistoryEntries);
  if (!history_path_.empty()) read_history(history_path_.c_str());  // absent the first time
}

LineInput::~LineInput() {
  if (!terminal_ || history_path_.empty()) return;
  // The folder may not exist yet. A history that cannot be kept is not worth an error.
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(history_path_).parent_path(), ignored);
  write_history(history_path_.c_str());
}

std::optional<std::string> LineInput::read_line(bool continuation) {
  if (!terminal_) {
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }
  char* raw = readline(continuation ? "... " : ">>> ");
  if (raw == nullptr) return std::nullopt;
  std::string line(raw);
  std::free(raw);
  return line;
}

std::optional<std::string> LineInput::next() {
  for (;;) {
    auto line = read_line(joiner_.in_progress());
    if (!line) return joiner_.finish();
    if (auto input = joiner_.feed(*line)) {
      if (terminal_ && input->find_first_not_of(" \t\n") != std::string::npos)
        add_history(input->c_str());
      return input;
    }
  }
}

}  // namespace duet::cli
