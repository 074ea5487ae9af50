// Text that remembers where its bytes came from: the byte ranges the server wrote itself
// (a chat template's text and string literals, the options the server sets) are "trusted";
// every other byte is client text. The tokenizer matches added tokens (<|im_start|>,
// <think>, ...) only inside trusted ranges, so a client can never forge a turn or a tool
// call, whatever it writes and wherever the template puts it. Unlisted bytes count as
// client text: a range that is lost on the way fails safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace duet {

struct TextSpan {
  size_t begin = 0, end = 0;  // [begin, end) in bytes
};

// Sorted, non-empty and merged: no two spans touch, so bytes that are trusted one after
// another are always one span.
using TextSpans = std::vector<TextSpan>;

struct MarkedText {
  std::string text;
  TextSpans trusted;  // every byte outside these is client text

  // Appends bytes the server wrote.
  void append_trusted(std::string_view s);
  // Appends bytes a client sent.
  void append_client(std::string_view s) { text.append(s); }
  // Appends src.text[begin, end) with the provenance each of its bytes has in src.
  // O(log(src spans) + spans copied).
  void append(const MarkedText& src, size_t begin, size_t end);
  void append(const MarkedText& src) { append(src, 0, src.text.size()); }
};

// Whether every byte of [begin, end) is trusted (with merged spans: inside one span).
bool is_trusted(const TextSpans& spans, size_t begin, size_t end);

// Whether `spans` keeps the invariants above for a text of `size` bytes (for tests).
bool well_formed(const TextSpans& spans, size_t size);

}  // namespace duet
