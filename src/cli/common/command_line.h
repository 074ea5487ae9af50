// What main() does to the command line before CLI11 reads it: llama-server's multi-letter
// single-dash spellings become duet's long flags, and an unknown command gets a suggestion.
#pragma once

#include <string>
#include <vector>

namespace duet::cli {

// -ctk, -ctv and -np (which CLI11 would read as bundled one-letter flags) become
// --cache-type-k, --cache-type-v and --parallel; "-ctk=q8_0" keeps its value.
std::vector<std::string> rewrite_llama_spellings(std::vector<std::string> args);

// The name in `names` closest to `word`: a prefix of it, or at most two edits away (the
// nearest wins); empty when none is.
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace duet::cli
