// Each subcommand registers its flags on the app and returns the exit code when run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "backend/select/backend_select.h"

namespace duet {
struct HostOptions;
}

namespace duet::cli {

// Sets `*run` to the subcommand's action when the subcommand is chosen.
using Action = std::function<int()>;
void add_logits_command(CLI::App& app, Action* run);
void add_info_command(CLI::App& app, Action* run);
void add_forge_command(CLI::App& app, Action* run);
void add_quantize_command(CLI::App& app, Action* run);
// `adjust` edits the options after parsing (a test binary sets what is not a flag).
void add_serve_command(CLI::App& app, Action* run, std::function<void(HostOptions&)> adjust = {});
void add_run_command(CLI::App& app, Action* run, std::function<void(HostOptions&)> adjust = {});
void add_tokenize_command(CLI::App& app, Action* run);
void add_render_command(CLI::App& app, Action* run);
void add_bench_command(CLI::App& app, Action* run);
// `duet bench serve`, a subcommand of `bench` (cmd_bench_serve.cc).
void add_bench_serve_command(CLI::App& bench, Action* run);

// --backend (backend/select/backend_select.h), checked when parsed.
inline CLI::Option* add_backend_option(CLI::App* cmd, std::string* backend) {
  return cmd->add_option("--backend", *backend, kBackendHelp)->check([](const std::string& v) {
    const Status s = check_backend_spec(v);
    return s ? std::string() : s.message();
  });
}

// Prints "duet: <message>" to stderr and returns the exit code for bad input.
int fail(const std::string& message);

}  // namespace duet::cli
