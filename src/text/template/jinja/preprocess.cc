// The textual pass @huggingface/jinja makes before lexing (its `preprocess`), reproduced
// step for step because it decides every whitespace byte of a chat prompt. Each output
// byte keeps the offset of the source byte it came from.
#include "text/template/jinja/preprocess.h"

#include "text/template/jinja/text_util.h"

namespace duet::jinja {
namespace {

// A string under edit, with the source offset of every byte.
struct Mapped {
  std::string text;
  std::vector<uint32_t> origin;

  void push(const Mapped& from, size_t i) {
    text.push_back(from.text[i]);
    origin.push_back(from.origin[i]);
  }
};

bool opens_tag_for_lstrip(const std::string& s, size_t i) {
  return i + 1 < s.size() && s[i] == '{' && (s[i + 1] == '#' || s[i + 1] == '%' || s[i + 1] == '-');
}

// lstrip_blocks: spaces and tabs from the start of a line up to `{#`, `{%` (or `{-`).
Mapped lstrip_blocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  bool line_start = true;
  for (size_t i = 0; i < s.size();) {
    if (line_start) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j > i && opens_tag_for_lstrip(s, j)) i = j;  // drop the indentation
      line_start = false;
      if (i >= s.size()) break;
    }
    const size_t term = line_terminator_at(s, i);
    const size_t n = term > 0 ? term : 1;
    for (size_t k = 0; k < n; ++k) out.push(in, i + k);
    i += n;
    if (term > 0) line_start = true;
  }
  return out;
}

// trim_blocks: the newline right after `#}`, `%}` (or `-}`).
Mapped trim_blocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  for (size_t i = 0; i < s.size(); ++i) {
    out.push(in, i);
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      out.push(in, i + 1);
      i += 2;  // skip the newline
    }
  }
  return out;
}

// If a `{% generation %}` / `{% endgeneration %}` tag starts at s[i], its end.
size_t generation_tag_end(const std::string& s, size_t i, bool& strip_before, bool& strip_after) {
  if (s.compare(i, 2, "{%") != 0) return 0;
  size_t j = i + 2;
  strip_before = j < s.size() && s[j] == '-';
  if (strip_before) ++j;
  while (size_t n = space_at(s, j)) j += n;
  if (s.compare(j, 3, "end") == 0 && s.compare(j + 3, 10, "generation") == 0) j += 3;
  if (s.compare(j, 10, "generation") != 0) return 0;
  j += 10;
  while (size_t n = space_at(s, j)) j += n;
  strip_after = j < s.size() && s[j] == '-';
  if (strip_after) ++j;
  if (s.compare(j, 2, "%}") != 0) return 0;
  return j + 2;
}

// transformers' `{% generation %}` marks assistant text for training masks; rendering
// drops the tag (and, with `-`, the whitespace on that side).
Mapped remove_generation_tags(const Mapped& in) {
  const std::string& s = in.text;
  if (s.find("generation") == std::string::npos) return in;
  Mapped out;
  size_t run_start = 0;  // start of the whitespace run that precedes position i
  for (size_t i = 0; i < s.size();) {
    bool strip_before = false, strip_after = false;
    if (size_t end = generation_tag_end(s, i, strip_before, strip_after)) {
      if (strip_before) {
        out.text.resize(out.text.size() - (i - run_start));
        out.origin.resize(out.text.size());
      }
      size_t after = end;
      while (size_t n = space_at(s, after)) after += n;
      if (!strip_after)
        for (size_t k = end; k < after; ++k) out.push(in, k);
      i = after;
      run_start = i;
      continue;
    }
    const size_t n = space_at(s, i);
    if (n == 0) {
      out.push(in, i);
      ++i;
      run_start = i;
    } else {
      for (size_t k = 0; k < n; ++k) out.push(in, i + k);
      i += n;
    }
  }
  return out;
}

}  // namespace

Preprocessed preprocess(std::string_view source) {
  Mapped m;
  m.text.assign(source);
  m.origin.resize(source.size());
  for (size_t i = 0; i < source.size(); ++i) m.origin[i] = static_cast<uint32_t>(i);
  if (!m.text.empty() && m.text.back() == '\n') {
    m.text.pop_back();
    m.origin.pop_back();
  }
  m = trim_blocks(lstrip_blocks(m));
  m = remove_generation_tags(m);
  m.origin.push_back(static_cast<uint32_t>(source.size()));  // the end, for errors there
  return Preprocessed{std::move(m.text), std::move(m.origin)};
}

}  // namespace duet::jinja
