// What the user types in `duet run`: one input at a time, which may span several lines. On a
// terminal lines are read with libedit (editing, and history with the arrow keys, kept across
// runs); otherwise plain lines from stdin, with no prompt.
#pragma once

#include <optional>
#include <string>

namespace duet::cli {

// Joins lines into one input as `ollama run` does: a line ending in a backslash goes on on the
// next line (the backslash becomes a line break), and a block opened by """ at the start of a
// line runs until a line that ends with """ (the quotes are not part of the text).
class MultiLineJoiner {
 public:
  // One line (without its line break); the whole input once it is complete.
  std::optional<std::string> feed(const std::string& line);
  // At the end of input: what an unfinished input holds so far, if anything.
  std::optional<std::string> finish();
  bool in_progress() const { return started_; }

 private:
  std::string text_;
  bool started_ = false;
  bool in_block_ = false;
};

class LineInput {
 public:
  // `history_path`: where the terminal's history is kept ("" for none).
  LineInput(bool terminal, std::string history_path);
  ~LineInput();
  LineInput(const LineInput&) = delete;
  LineInput& operator=(const LineInput&) = delete;
  // The next input; nullopt at the end of input (Ctrl-D on a terminal).
  std::optional<std::string> next();

 private:
  std::optional<std::string> read_line(bool continuation);

  bool terminal_;
  std::string history_path_;
  MultiLineJoiner joiner_;
};

// $DUET_HOME/run_history, where DUET_HOME defaults to ~/.cache/duet; "" when there is no home.
std::string default_history_path();

}  // namespace duet::cli
