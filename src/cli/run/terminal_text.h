// Model text on its way to a terminal. A model can write any byte, and a terminal obeys the
// control characters among them: ESC sequences move the cursor, clear the screen, retitle the
// window, and some terminals answer queries by typing into the input. So `duet run` on a TTY
// shows every control character as a visible escape, and only its own styling (the dimmed
// reasoning) reaches the terminal as escape sequences. Piped output is never passed through here.
#pragma once

#include <string>
#include <string_view>

namespace duet::cli {

// Escapes a stream of UTF-8 text that arrives in pieces cut anywhere (a piece may end inside a
// multi-byte character, or between the \r and \n of a line end). What comes out is safe to write
// to a terminal:
//   C0 controls other than \n and \t   ^@ … ^_ (ESC is ^[), as `cat -v` shows them
//   \r\n                               \n (a Windows line end is a line end, not a control)
//   DEL                                ^?
//   C1 controls U+0080–U+009F          \u0080 … \u009f (an 8-bit CSI is U+009B)
//   a byte that is not valid UTF-8     \x80 … \xff
// Everything else, all printable Unicode included, passes unchanged.
class TerminalEscaper {
 public:
  // The safe text for `bytes`; a trailing incomplete character (or a lone \r) is held back
  // until the next piece shows how it ends.
  std::string feed(std::string_view bytes);
  // At the end of the text: what was held back, escaped as the bytes it is.
  std::string flush();

 private:
  std::string pending_;  // held back: a partial UTF-8 sequence or a trailing \r
};

// All of `text` at once (a tool call's name or arguments, a note).
std::string escape_for_terminal(std::string_view text);

}  // namespace duet::cli
