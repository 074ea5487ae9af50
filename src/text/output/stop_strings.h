// Stop strings over streamed text: text is released the moment no stop string can begin in
// it, and generation stops at the earliest occurrence of any stop string.
//
// "Earliest" means the smallest start position in the whole output, so the result does not
// depend on how the text was cut into pieces: with stops "abcd" and "c", the text "abcd" stops
// before "a" even if "abc" arrived first. While a longer stop that started earlier is still
// possible, the matcher waits (holding at most the longest stop's length in bytes).
//
// Matching is an Aho–Corasick automaton over bytes, so each byte costs amortized O(1) however
// many stop strings there are. Stop strings are whole UTF-8 strings, so a cut never falls
// inside a character.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace duet {

// What a request may ask for. OpenAI accepts 4 stop strings, vLLM and Ollama have no limit;
// 64 of up to 1024 bytes covers every client configuration seen in the wild while keeping a
// 10,000-entry or 1 MB request out (it becomes a 400).
struct StopStringLimits {
  size_t max_count = 64;
  size_t max_bytes = 1024;
};

// Errors for too many stop strings, an empty one, or one that is too long.
Status validate_stop_strings(const std::vector<std::string>& stops, StopStringLimits limits = {});

struct StopResult {
  std::string text;      // safe to emit now
  bool stopped = false;  // a stop string was found; nothing more will be emitted
  int stop_index = -1;   // which stop string (its index in the constructor's list), if stopped
};

class StopStringMatcher {
 public:
  // Empty strings in `stops` are ignored (validate_stop_strings rejects them earlier).
  explicit StopStringMatcher(const std::vector<std::string>& stops);

  // Feeds the next piece of output.
  StopResult push(std::string_view piece);
  // The output ended: releases what was held, or stops at a match that was waiting for a
  // longer, earlier-starting stop string that never completed.
  StopResult finish();

  bool stopped() const { return stopped_; }
  size_t held_bytes() const { return pending_.size(); }

 private:
  struct Node {
    int fail = 0;
    int depth = 0;
    int match_len = 0;     // the longest stop string that ends here (0 = none)
    int match_index = -1;  // its index in the constructor's list
  };
  int child(int node, uint8_t byte) const;
  int step(int node, uint8_t byte) const;
  StopResult stop_now();

  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int> edges_;  // (node << 8 | byte) -> child

  int state_ = 0;
  std::string pending_;               // output after what has been released
  uint64_t released_ = 0;             // absolute offset of pending_[0]
  uint64_t consumed_ = 0;             // absolute offset just past the last byte pushed
  uint64_t best_start_ = UINT64_MAX;  // earliest start of a complete match seen so far
  int best_index_ = -1;
  bool stopped_ = false;
};

}  // namespace duet
