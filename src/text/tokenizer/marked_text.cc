#include "text/tokenizer/marked_text.h"

#include <algorithm>

namespace duet {
namespace {

// Adds [begin, end) (positions in `spans`' own text) after every span already there.
void push_span(TextSpans& spans, size_t begin, size_t end) {
  if (begin >= end) return;
  if (!spans.empty() && spans.back().end == begin) {
    spans.back().end = end;
    return;
  }
  spans.push_back({begin, end});
}

// The first span that ends after `pos`.
TextSpans::const_iterator first_ending_after(const TextSpans& spans, size_t pos) {
  return std::upper_bound(spans.begin(), spans.end(), pos,
                          [](size_t p, const TextSpan& s) { return p < s.end; });
}

}  // namespace

void MarkedText::append_trusted(std::string_view s) {
  push_span(trusted, text.size(), text.size() + s.size());
  text.append(s);
}

void MarkedText::append(const MarkedText& src, size_t begin, size_t end) {
  end = std::min(end, src.text.size());
  if (begin >= end) return;
  const size_t offset = text.size();
  for (auto it = first_ending_after(src.trusted, begin); it != src.trusted.end(); ++it) {
    if (it->begin >= end) break;
    push_span(trusted, offset + std::max(it->begin, begin) - begin,
              offset + std::min(it->end, end) - begin);
  }
  text.append(src.text, begin, end - begin);
}

bool is_trusted(const TextSpans& spans, size_t begin, size_t end) {
  if (begin >= end) return true;
  const auto it = first_ending_after(spans, begin);
  return it != spans.end() && it->begin <= begin && end <= it->end;
}

bool well_formed(const TextSpans& spans, size_t size) {
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].begin >= spans[i].end || spans[i].end > size) return false;
    if (i > 0 && spans[i - 1].end >= spans[i].begin) return false;
  }
  return true;
}

}  // namespace duet
