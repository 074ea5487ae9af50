// Every flag of a subcommand also from the environment and from a TOML config file, with the
// command line first, then the environment (DUET_CTX_SIZE for --ctx-size), then the file,
// then the default; and, for --print-config, where each value came from.
//
// CLI11 reads the command line. After that, in the subcommand's callback, apply() fills each
// option the command line left unset: its value is added as CLI11 would have added it (so
// its checks and conversions run), and its source is recorded.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <set>
#include <string>

#include "base/status.h"

namespace duet::cli {

class OptionSources {
 public:
  // `secret` options are never printed (their values are replaced by a count).
  explicit OptionSources(std::set<std::string> secret = {}) : secret_(std::move(secret)) {}

  // Fills unset options of `cmd` from the environment and then from `config_path` (empty:
  // none). The options named in `skip` (e.g. "config") are left alone. A config key that names
  // no option, a value an option refuses, or an unreadable file is an error naming the source.
  Status apply(CLI::App& cmd, const std::string& config_path, const std::set<std::string>& skip);

  // The effective values as a TOML file, one `name = value  # source` line per option.
  std::string print(CLI::App& cmd, const std::set<std::string>& skip) const;

  // "DUET_CTX_SIZE" for the option named "ctx-size".
  static std::string env_name(const std::string& option_name);

 private:
  std::set<std::string> secret_;
  std::map<std::string, std::string> source_;  // option name → where its value came from
};

}  // namespace duet::cli
