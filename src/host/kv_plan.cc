#include "host/kv_plan.h"

#include <algorithm>
#include <cstdio>

namespace duet {
namespace {

int64_t blocks_for(int64_t tokens, int64_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

std::string tokens_text(int64_t n) { return std::to_string(n) + " tokens"; }

// Tokens in `blocks` blocks, saturating: an unbounded backend has INT64_MAX blocks.
int64_t tokens_in(int64_t blocks, int64_t block_size) {
  return blocks > INT64_MAX / block_size ? INT64_MAX : blocks * block_size;
}

}  // namespace

int64_t KvPlan::pool_tokens() const { return blocks * block_size; }

std::string format_bytes(size_t bytes) {
  char text[32];
  if (bytes >= (size_t{1} << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  else
    std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

Result<KvPlan> plan_kv(const KvPlanInput& in) {
  if (in.bytes_per_token == 0 || in.block_size < 1 || in.model_context < 1)
    return Status::error("the model's KV shape is empty");
  if (in.ctx_size < 0) return Status::error("-c must be >= 0 (0: the model's context)");
  if (in.parallel < 1) return Status::error("--parallel must be >= 1");
  if (in.kv_budget_mb < 0 || in.kv_budget_mb > (int64_t{1} << 30))
    return Status::error("--kv-budget-mb must be in [0, 2^30] (0: derived)");

  KvPlan plan;
  plan.block_size = in.block_size;
  plan.context = in.ctx_size > 0 ? in.ctx_size : in.model_context;
  if (plan.context < 2) return Status::error("-c must be at least 2 tokens");
  if (plan.context > in.model_context) {
    std::string why = "-c " + std::to_string(plan.context) + " is beyond the model's context of " +
                      tokens_text(in.model_context);
    if (in.model_context == in.trained_context)
      why +=
          " (--rope-scale 4 extends it with YaRN to " + tokens_text(4 * in.trained_context) + ")";
    if (!in.fit) return Status::error(why + "; lower -c, or add --fit to use the model's context");
    plan.adjustments.push_back("context " + std::to_string(plan.context) + " -> " +
                               tokens_text(in.model_context) + ": " + why + " (-c, --rope-scale)");
    plan.context = in.model_context;
  }

  const size_t per_block = in.bytes_per_token * static_cast<size_t>(in.block_size);
  const int64_t need = blocks_for(plan.context, in.block_size);
  // The most blocks the pool may have, and what sets that limit.
  int64_t cap = std::max<int64_t>(0, in.max_blocks);
  std::string cap_reason = "the backend's largest buffer holds " +
                           tokens_text(tokens_in(cap, in.block_size)) + " of KV per layer";
  std::string cap_flags = "-c, --kv-type";
  if (in.kv_budget_mb > 0) {
    const auto budget =
        static_cast<int64_t>((static_cast<size_t>(in.kv_budget_mb) << 20) / per_block);
    if (budget < cap) {
      cap = budget;
      cap_reason = "--kv-budget-mb " + std::to_string(in.kv_budget_mb) + " holds " +
                   tokens_text(tokens_in(budget, in.block_size));
      cap_flags = "-c, --kv-budget-mb, --kv-type";
    }
  } else if (in.free_bytes) {
    // Never more than 90 % of what is free: the rest is for activations and the OS.
    const auto usable = static_cast<int64_t>(*in.free_bytes / 10 * 9 / per_block);
    if (usable < cap) {
      cap = usable;
      cap_reason = format_bytes(*in.free_bytes) + " of memory is free, which holds " +
                   tokens_text(tokens_in(usable, in.block_size));
      cap_flags = "-c, --kv-type, --kv-budget-mb";
    }
  }

  if (need > cap) {
    const std::string needs = "a context of " + tokens_text(plan.context) + " needs " +
                              format_bytes(static_cast<size_t>(need) * per_block) +
                              " of KV cache and " + cap_reason;
    if (cap < 1) return Status::error(needs + "; no KV block fits");
    if (!in.fit)
      return Status::error(needs + "; lower -c, choose --kv-type q8_0, " +
                           (in.kv_budget_mb > 0 ? "raise --kv-budget-mb, " : "") +
                           "or add --fit to use the largest context that fits");
    const int64_t fitted = std::min(plan.context, tokens_in(cap, in.block_size));
    plan.adjustments.push_back("context " + std::to_string(plan.context) + " -> " +
                               tokens_text(fitted) + ": " + needs + " (" + cap_flags + ")");
    plan.context = fitted;
  }

  const int64_t full = blocks_for(plan.context, in.block_size);
  if (in.kv_budget_mb > 0) {
    plan.blocks = cap;
    plan.pool_reason = "--kv-budget-mb " + std::to_string(in.kv_budget_mb);
  } else {
    // A full context per sequence, within half the free memory, never below one context.
    const bool each_fits = full <= cap / in.parallel;  // full × parallel, without overflow
    const int64_t want = each_fits ? full * in.parallel : cap;
    const int64_t share = in.free_bytes
                              ? static_cast<int64_t>(*in.free_bytes / 2 / per_block)
                              : full * std::min<int64_t>(in.parallel, 4);  // unknown: stay modest
    plan.blocks = std::min(want, std::max(share, full));
    if (each_fits && plan.blocks == want)
      plan.pool_reason = "a full context for each of " + std::to_string(in.parallel) + " sequences";
    else if (plan.blocks == full)
      plan.pool_reason = "one full context, shared";
    else if (in.free_bytes)
      plan.pool_reason =
          "half of the " + format_bytes(*in.free_bytes) + " free, shared by the sequences";
    else
      plan.pool_reason = "four full contexts, shared by the sequences";
  }
  plan.bytes = static_cast<size_t>(plan.blocks) * per_block;
  return plan;
}

}  // namespace duet
