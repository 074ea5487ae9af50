// The pre-tokenizer of Qwen2 and Qwen3: the text is cut into pieces, each encoded by BPE on
// its own. tokenizer.json spells the cut as a regex (a Split with behavior "Isolated"):
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
//
// Here it is a small hand-written matcher over code points with the same meaning as in
// Hugging Face tokenizers (Oniguruma): at each position the first alternative that matches
// wins, each greedy as far as the rest allows. Every character is matched by some
// alternative, so the pieces tile the text. Two consequences worth knowing:
//   - `\s+(?!\S)` takes a run of whitespace but leaves its last character when a
//     non-space follows, so " " attaches to the next word (" world", " (").
//   - `(?i:...)` is case-insensitive with Unicode simple case folding, so 'S and 'ſ
//     (U+017F LATIN SMALL LETTER LONG S, which folds to s) are contractions too.
// A byte that is not well-formed UTF-8 counts as one "other" character (like punctuation).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace duet {

// The regex as tokenizer.json spells it, to check that a file uses this pre-tokenizer.
inline constexpr std::string_view kQwen2SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The end (exclusive byte offset) of the piece that starts at text[pos]; pos < text.size().
size_t pretoken_end(std::string_view text, size_t pos);

// All pieces of `text`, in order; they concatenate to `text`.
std::vector<std::string_view> split_pretokens(std::string_view text);

}  // namespace duet
