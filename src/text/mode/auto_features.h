// What the auto mode's multilingual classifier sees of a message: hashed, weighted features that
// need no vocabulary and no model, the same in every language. The trainer
// (tools/auto_mode_trainer.cc, run at build time) and the classifier (auto_mode.cc) both call
// extract_auto_features, so what was learnt is what is read.
//
//   text    the first 4 KiB and last 2 KiB of the message (as the rules read it), lowercased
//           (Unicode lowercase mapping, so Cyrillic, Greek and accented Latin lowercase too),
//           every digit written as 0, whitespace runs as one space
//   char n-grams of 1 to 4 code points over " text ", so that scripts without spaces (Chinese,
//           Japanese, Thai) are read as well as those with them
//   words   runs of letters and digits (a word of a spaced script, a whole clause of an unspaced
//           one)
//   shape   how much of the text is digits, operators, question marks, line breaks, and its
//           length, each as a bucketed token
// Each feature is hashed into kAutoFeatureBuckets and counts once (present or not), and the
// vector is scaled to unit length, so a long message is not "more" of anything than a short one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace duet {

inline constexpr uint32_t kAutoFeatureBuckets = 1u << 18;

struct AutoFeature {
  uint32_t index;
  float value;
};

// Each index once, in the order first seen.
std::vector<AutoFeature> extract_auto_features(std::string_view text);

// Moves `pos` back to the start of the UTF-8 sequence it is in: at most 3 bytes, so that a long
// run of stray continuation bytes cannot make a bounded end the whole text.
size_t utf8_floor(std::string_view s, size_t pos);

// In each file of the corpus (src/text/mode/auto_corpus), every fourth line is held out: the
// trainer never sees it, and the tests measure the classifier on it.
inline bool auto_corpus_held_out(size_t line_index) { return line_index % 4 == 3; }

// The text the rules and the classifier read of a long message: its first 4 KiB and its last
// 2 KiB (instructions sit at the ends of a pasted document), cut at character boundaries.
std::string_view bounded_head(std::string_view text);
std::string_view bounded_tail(std::string_view text);

}  // namespace duet
