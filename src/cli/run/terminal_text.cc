#include "cli/run/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace duet::cli {
namespace {

void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  out += buf;
}

void append_control(std::string& out, unsigned char c) {
  out += '^';
  out += c == 0x7f ? '?' : static_cast<char>(c + 0x40);
}

// The length of the UTF-8 sequence that starts with `lead`, or 0 when no sequence starts so.
int sequence_length(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;  // ASCII is handled apart; 0x80–0xc1 and 0xf5–0xff never start a sequence
}

// Whether `s[1..n)` may follow the lead byte s[0]: continuation bytes, with the first one
// narrowed where the lead allows overlong forms, surrogates or code points past U+10FFFF.
bool valid_tail(std::string_view s, int n) {
  const unsigned char lead = static_cast<unsigned char>(s[0]);
  for (int i = 1; i < n && i < static_cast<int>(s.size()); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    unsigned lo = 0x80, hi = 0xbf;
    if (i == 1) {
      if (lead == 0xe0) lo = 0xa0;  // overlong
      if (lead == 0xed) hi = 0x9f;  // surrogates
      if (lead == 0xf0) lo = 0x90;  // overlong
      if (lead == 0xf4) hi = 0x8f;  // past U+10FFFF
    }
    if (c < lo || c > hi) return false;
  }
  return true;
}

}  // namespace

std::string TerminalEscaper::feed(std::string_view bytes) {
  std::string in = pending_;
  in.append(bytes);
  pending_.clear();
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    if (c < 0x80) {
      if (c == '\r') {
        if (i + 1 == in.size()) {  // a \n may follow in the next piece
          pending_ = "\r";
          break;
        }
        if (in[i + 1] == '\n') {
          ++i;  // \r\n: the \n below ends the line
          continue;
        }
      }
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        append_control(out, c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    const int n = sequence_length(c);
    const std::string_view rest = std::string_view(in).substr(i);
    if (n == 0 || !valid_tail(rest, n)) {
      append_hex(out, "\\x", c, 2);
      ++i;
      continue;
    }
    if (static_cast<int>(rest.size()) < n) {  // complete so far: the rest comes next
      pending_ = std::string(rest);
      break;
    }
    // C1 controls are U+0080–U+009F: the two-byte sequences c2 80 … c2 9f.
    const unsigned char second = static_cast<unsigned char>(rest[1]);
    if (c == 0xc2 && second <= 0x9f)
      append_hex(out, "\\u", second, 4);
    else
      out.append(rest.substr(0, n));
    i += n;
  }
  return out;
}

std::string TerminalEscaper::flush() {
  std::string out;
  for (const char ch : pending_) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x80)
      append_control(out, c);  // only a \r is ever held back
    else
      append_hex(out, "\\x", c, 2);
  }
  pending_.clear();
  return out;
}

std::string escape_for_terminal(std::string_view text) {
  TerminalEscaper e;
  std::string out = e.feed(text);
  return out + e.flush();
}

}  // namespace duet::cli
