// duet: one binary for serving and inspecting Qwen3 models. See docs/ARCHITECTURE.md.
#include <cstdio>

#include "cli/commands.h"

namespace duet::cli {
int fail(const std::string& message) {
  std::fprintf(stderr, "duet: %s\n", message.c_str());
  return 1;
}
}  // namespace duet::cli

int main(int argc, char** argv) {
  CLI::App app{"duet: a server for Qwen3 models, with thinking and non-thinking modes"};
  app.require_subcommand(1);
  duet::cli::Action run;
  duet::cli::add_logits_command(app, &run);
  duet::cli::add_info_command(app, &run);
  duet::cli::add_forge_command(app, &run);
  duet::cli::add_quantize_command(app, &run);
  duet::cli::add_serve_command(app, &run);
  duet::cli::add_run_command(app, &run);
  duet::cli::add_tokenize_command(app, &run);
  duet::cli::add_render_command(app, &run);
  duet::cli::add_bench_command(app, &run);
  CLI11_PARSE(app, argc, argv);
  return run ? run() : 1;
}
