// How a reply looks in `duet run`. On a terminal reasoning is dimmed (ANSI faint) and every
// control character the model writes is shown escaped (terminal_text.h): duet's dimming is the
// only escape sequence that reaches the terminal. Piped, the bytes are the model's, exactly,
// and reasoning sits between [thinking] and [/thinking] lines so that a reader (or a test) can
// tell it from the answer.
#pragma once

#include <cstdio>
#include <string>

#include "cli/run/chat_backend.h"
#include "cli/run/terminal_text.h"

namespace duet::cli {

class ReplyPrinter : public ReplySink {
 public:
  ReplyPrinter(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  void reasoning(std::string_view text) override;
  void content(std::string_view text) override;
  void tool_call(const std::string& name, const std::string& arguments) override;
  // After the reply: closes the reasoning, ends the line.
  void end();

 private:
  void write(std::string_view text);
  void close_reasoning();
  void flush_escaper();

  std::FILE* out_;
  bool tty_;
  bool in_reasoning_ = false;
  TerminalEscaper escaper_;
};

// A line of duet's own (a note, the reply's statistics) on stderr: dimmed on a terminal.
void print_note(const std::string& text);

}  // namespace duet::cli
