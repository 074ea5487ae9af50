// `duet serve`: the whole server — listener, routes, model loading in the background,
// graceful drain on SIGTERM/SIGINT.
#pragma once

#include "server/serve_options.h"

namespace duet {

// Runs until a signal drains and stops the server. Returns the process exit code: 0 after
// a drain, 1 when the server cannot start (bad option, port taken, model fails to load).
int run_serve(const ServeOptions& options);

}  // namespace duet
