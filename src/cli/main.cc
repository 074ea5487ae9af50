// duet: one binary for serving and inspecting Qwen3 models. See docs/ARCHITECTURE.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common/build_info.h"
#include "cli/common/command_line.h"

namespace duet::cli {
int fail(const std::string& message) {
  std::fprintf(stderr, "duet: %s\n", message.c_str());
  return 1;
}
}  // namespace duet::cli

int main(int argc, char** argv) {
  CLI::App app{"duet: a server for Qwen3 models, with thinking and non-thinking modes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", duet::cli::version_text(),
                       "version, commit, build type, kernels and GPU backends, then exit");
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

  std::vector<std::string> args =
      duet::cli::rewrite_llama_spellings(std::vector<std::string>(argv, argv + argc));
  // An unknown command: say which one was meant ("duet serv" → serve) instead of CLI11's
  // "The following argument was not expected".
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-' &&
      std::find(names.begin(), names.end(), args[1]) == names.end()) {
    const std::string near = duet::cli::closest_name(args[1], names);
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "duet: '%s' is not a command%s\ncommands: %s (duet --help)\n",
                 args[1].c_str(), near.empty() ? "" : ("; did you mean '" + near + "'?").c_str(),
                 known.c_str());
    return 2;
  }
  std::vector<char*> rewritten;
  for (std::string& a : args) rewritten.push_back(a.data());
  CLI11_PARSE(app, static_cast<int>(rewritten.size()), rewritten.data());
  return run ? run() : 1;
}
