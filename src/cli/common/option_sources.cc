#include "cli/common/option_sources.h"

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace duet::cli {
namespace {

// The options a config file or the environment may set: named ones with a long name.
bool settable(const CLI::Option* opt, const std::set<std::string>& skip) {
  if (!opt->nonpositional() || opt->get_lnames().empty()) return false;
  const std::string& name = opt->get_lnames().front();
  return name != "help" && skip.count(name) == 0;
}

bool is_flag(const CLI::Option* opt) { return opt->get_expected_max() == 0; }
bool takes_many(const CLI::Option* opt) { return opt->get_items_expected_max() > 1; }

// Adds `values` to an option the command line left unset and runs its checks and conversion.
Status set_from(CLI::Option* opt, const std::vector<std::string>& values,
                const std::string& source) {
  try {
    for (const std::string& v : values) opt->add_result(v);
    opt->run_callback();
  } catch (const CLI::Error& e) {
    return Status::error(source + ": --" + opt->get_lnames().front() + ": " + e.what());
  }
  return Status::ok();
}

bool looks_bare(const std::string& v) {
  if (v == "true" || v == "false") return true;
  if (v.empty()) return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end != nullptr && *end == '\0';
}

std::string toml_string(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string OptionSources::env_name(const std::string& option_name) {
  std::string env = "DUET_";
  for (char c : option_name)
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

Status OptionSources::apply(CLI::App& cmd, const std::string& config_path,
                            const std::set<std::string>& skip) {
  source_.clear();
  for (CLI::Option* opt : cmd.get_options()) {
    if (!settable(opt, skip)) continue;
    const std::string& name = opt->get_lnames().front();
    if (opt->count() > 0) {
      source_[name] = "command line";
      continue;
    }
    const std::string env = env_name(name);
    if (const char* value = std::getenv(env.c_str()); value != nullptr && *value != '\0') {
      DUET_TRY(set_from(opt, {value}, "environment " + env));
      source_[name] = "environment " + env;
    }
  }
  if (!config_path.empty()) {
    std::vector<CLI::ConfigItem> items;
    try {
      items = CLI::ConfigTOML().from_file(config_path);
    } catch (const CLI::Error& e) {
      return Status::error("config file " + config_path + ": " + e.what());
    }
    for (const CLI::ConfigItem& item : items) {
      if (item.name == "++" || item.name == "--") continue;  // section markers
      if (!item.parents.empty() && item.parents != std::vector<std::string>{cmd.get_name()})
        return Status::error("config file " + config_path + ": [" + item.parents.front() +
                             "] is not a section duet reads (keys go at the top or under [" +
                             cmd.get_name() + "])");
      std::string name = item.name;
      for (char& c : name)
        if (c == '_') c = '-';
      CLI::Option* opt = cmd.get_option_no_throw("--" + name);
      if (opt == nullptr || !settable(opt, skip))
        return Status::error("config file " + config_path + ": '" + item.name +
                             "' is not a flag of duet " + cmd.get_name() + " (see --help)");
      if (source_.count(name)) continue;  // the command line or the environment said
      DUET_TRY(set_from(opt, item.inputs, "config file " + config_path));
      source_[name] = "config file " + config_path;
    }
  }
  return Status::ok();
}

std::string OptionSources::print(CLI::App& cmd, const std::set<std::string>& skip) const {
  std::ostringstream os;
  os << "# duet " << cmd.get_name()
     << ": the effective flags (command line > environment > config file > default)\n";
  for (CLI::Option* opt : cmd.get_options()) {
    if (!settable(opt, skip)) continue;
    const std::string& name = opt->get_lnames().front();
    auto found = source_.find(name);
    const std::string source = found == source_.end() ? "default" : found->second;
    std::string value;
    if (secret_.count(name) != 0) {
      value = opt->count() > 0 ? "\"(hidden)\"" : "[]";
    } else if (is_flag(opt)) {
      value = opt->count() > 0 && opt->as<bool>() ? "true" : "false";
    } else if (takes_many(opt)) {
      value = "[";
      for (size_t i = 0; i < opt->results().size(); ++i)
        value += (i ? ", " : "") + toml_string(opt->results()[i]);
      value += "]";
    } else {
      std::string raw;
      if (opt->count() > 0) {
        raw = opt->results().back();
      } else {
        opt->capture_default_str();
        raw = opt->get_default_str();
      }
      value = looks_bare(raw) ? raw : toml_string(raw);
    }
    os << name << " = " << value << "  # " << source;
    if (source == "default" || source == "command line") os << " (" << env_name(name) << ")";
    os << "\n";
  }
  return os.str();
}

}  // namespace duet::cli
