// What `duet --version` prints: the version, the commit and build type it was built from,
// and the CPU kernel paths and GPU backends compiled in (and which of them this CPU runs).
#pragma once

#include <string>

namespace duet::cli {

std::string version_text();

}  // namespace duet::cli
