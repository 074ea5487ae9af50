// The textual pass before lexing (see preprocess.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace duet::jinja {

struct Preprocessed {
  std::string text;
  std::vector<uint32_t> origin;  // source offset of each byte of `text`, then one for the end
};

// Drops one trailing newline, applies lstrip_blocks and trim_blocks, and removes
// `{% generation %}` tags — in that order, as @huggingface/jinja does.
Preprocessed preprocess(std::string_view source);

}  // namespace duet::jinja
