#include "cli/run/reply_printer.h"

#include <unistd.h>

namespace duet::cli {

void ReplyPrinter::write(std::string_view text) {
  if (tty_) {
    const std::string safe = escaper_.feed(text);
    std::fwrite(safe.data(), 1, safe.size(), out_);
  } else {
    std::fwrite(text.data(), 1, text.size(), out_);
  }
  std::fflush(out_);
}

void ReplyPrinter::reasoning(std::string_view text) {
  if (text.empty()) return;
  if (!in_reasoning_) {
    std::fputs(tty_ ? "\x1b[2m" : "[thinking]\n", out_);
    in_reasoning_ = true;
  }
  write(text);
}

void ReplyPrinter::content(std::string_view text) {
  if (text.empty()) return;
  close_reasoning();
  write(text);
}

void ReplyPrinter::tool_call(const std::string& name, const std::string& arguments) {
  close_reasoning();
  const std::string line = "\n[tool call] " + name + " " + arguments + "\n";
  write(line);
}

void ReplyPrinter::flush_escaper() {
  if (!tty_) return;
  const std::string rest = escaper_.flush();
  std::fwrite(rest.data(), 1, rest.size(), out_);
}

void ReplyPrinter::close_reasoning() {
  if (!in_reasoning_) return;
  flush_escaper();  // what the reasoning held back ends inside the dimmed part
  std::fputs(tty_ ? "\x1b[0m\n" : "\n[/thinking]\n", out_);
  in_reasoning_ = false;
}

void ReplyPrinter::end() {
  close_reasoning();
  flush_escaper();
  std::fputs("\n", out_);
  std::fflush(out_);
}

void print_note(const std::string& text) {
  static const bool tty = ::isatty(STDERR_FILENO) == 1;
  if (tty)
    std::fprintf(stderr, "\x1b[2m%s\x1b[0m\n", escape_for_terminal(text).c_str());
  else
    std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace duet::cli
