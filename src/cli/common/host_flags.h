// The flags that size what a model host holds, shared by `duet serve` and `duet run`:
// -c/--ctx-size, --kv-type (llama-server's --cache-type-k / --cache-type-v and -ctk / -ctv
// too), --parallel, --kv-budget-mb and --fit. host/kv_plan.h says what they decide.
#pragma once

#include <CLI/CLI.hpp>

#include "host/host_options.h"

namespace duet::cli {

void add_capacity_options(CLI::App* cmd, HostOptions* o);

}  // namespace duet::cli
