// How long a sequence may be and how much KV cache the engine gets, from the flags a
// deployer gave (-c, --kv-type, --parallel, --kv-budget-mb, --fit), the model's trained
// context and the memory that is free once the weights are loaded. A pure function, so every
// rule is unit-tested without a model (tests/unit/kv_plan_test.cc).
//
// The rules:
// - The context is -c, or the model's trained context (times the YaRN factor with
//   --rope-scale). A -c beyond that is refused.
// - The KV pool is --kv-budget-mb when given. Otherwise it holds a full context for each of
//   the --parallel sequences, within half the free memory, and never less than one full
//   context: paged blocks are shared, so many shorter requests fit where one long one would.
// - When one full context does not fit (the budget, the free memory, or the backend's
//   largest buffer), duet says so and exits; with --fit it shrinks the context to what fits
//   and each change is reported with the flag that controls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace duet {

struct KvPlanInput {
  int64_t model_context = 0;         // the trained context (with YaRN: extended)
  int64_t trained_context = 0;       // before YaRN; the same when it is off
  int64_t ctx_size = 0;              // -c; 0: model_context
  size_t bytes_per_token = 0;        // KV bytes of one cached token, all layers, K and V
  int64_t block_size = 16;           // tokens per KV block
  int64_t parallel = 1;              // sequences at once
  int64_t kv_budget_mb = 0;          // --kv-budget-mb; 0: derived
  std::optional<size_t> free_bytes;  // memory free for the KV cache; nullopt: unknown
  int64_t max_blocks = INT64_MAX;    // what the backend's largest buffer holds
  bool fit = false;                  // --fit: shrink instead of refusing
};

struct KvPlan {
  int64_t context = 0;  // tokens one sequence may hold (prompt + output)
  int64_t blocks = 0;   // KV blocks in the pool
  size_t bytes = 0;     // the pool's size
  int64_t pool_tokens() const;
  // What --fit changed, each naming the flag that controls it (empty without --fit).
  std::vector<std::string> adjustments;
  // Why the pool has the size it has (for the startup summary).
  std::string pool_reason;
  int64_t block_size = 16;
};

Result<KvPlan> plan_kv(const KvPlanInput& in);

// "1.5 GiB", "640 MiB": sizes in the startup summary and in errors.
std::string format_bytes(size_t bytes);

}  // namespace duet
