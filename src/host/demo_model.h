// The built-in demo model: a small Qwen3 with random weights, forged at start so that a new user
// sees the whole system work before downloading gigabytes.
#pragma once

#include <string>

#include "base/status.h"

namespace duet {

// Writes the demo model to a private temporary file and returns its path; the caller removes
// the file once it is mapped (nothing is left behind, and two servers starting at once never
// share a half-written file).
Result<std::string> forge_demo_model();

}  // namespace duet
