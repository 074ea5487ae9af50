#include "cli/common/host_flags.h"

#include <memory>
#include <optional>
#include <string>

namespace duet::cli {

void add_capacity_options(CLI::App* cmd, HostOptions* o) {
  cmd->add_option("-c,--ctx-size", o->ctx_size,
                  "tokens one sequence may hold, prompt and reply (default: the model's\n"
                  "trained context; with --rope-scale, the extended one)")
      ->check(CLI::NonNegativeNumber);
  // --kv-type and llama-server's per-side spellings: duet stores K and V in one type, so
  // when two of them are given they must agree.
  auto first = std::make_shared<std::optional<std::string>>();
  auto kv_type = [o, first](const char* flag) {
    return [o, first, flag](const std::string& v) {
      if (*first && **first != v)
        throw CLI::ValidationError(
            flag, "duet stores K and V in one type: " + **first + " and " + v + " differ");
      *first = v;
      o->kv_type = v;
    };
  };
  const auto types = CLI::IsMember({"f16", "bf16", "q8_0"});
  cmd->add_option_function<std::string>("--kv-type", kv_type("--kv-type"),
                                        "the KV cache's type: f16 (default), bf16 or q8_0\n"
                                        "(half the memory of f16, so twice the context)")
      ->check(types)
      ->default_str("f16");
  cmd->add_option_function<std::string>("--cache-type-k", kv_type("--cache-type-k"),
                                        "llama-server's spelling of --kv-type (also -ctk)")
      ->check(types);
  cmd->add_option_function<std::string>("--cache-type-v", kv_type("--cache-type-v"),
                                        "llama-server's spelling of --kv-type (also -ctv)")
      ->check(types);
  cmd->add_option("--parallel,--max-running", o->max_running,
                  "sequences decoded at once (default 64; also -np)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--kv-budget-mb", o->kv_budget_mb,
                  "memory for the KV cache, MiB (default: a full context for each of the\n"
                  "--parallel sequences, within half the free memory, at least one context)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--fit", o->fit,
                "when the context does not fit in the KV memory, shrink it to what fits\n"
                "(and log what changed) instead of refusing to start");
}

}  // namespace duet::cli
