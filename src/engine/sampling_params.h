// SamplingParams: how one sequence picks its next token, and validate(), which turns a bad value
// from a request into a clear error (the server answers it with 400).
// Stop conditions (stop strings, stop ids, max tokens) live with the request, not here.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace duet {

struct SamplingParams {
  float temperature = 1;         // 0 (or below 1e-5) means greedy
  float top_p = 1;               // nucleus mass in (0, 1]; 1 = off
  int top_k = 0;                 // 0 = off
  float min_p = 0;               // drop tokens below min_p × the top probability; 0 = off
  float presence_penalty = 0;    // subtracted once from tokens the model generated
  float frequency_penalty = 0;   // subtracted per occurrence in the generated tokens
  float repetition_penalty = 1;  // divides (>0 logits) or multiplies (<0) prompt+generated tokens
  // Added to the logits before anything else; entries for the same token add up.
  std::vector<std::pair<int32_t, float>> logit_bias;
  std::optional<uint64_t> seed;  // unset: the engine picks a random seed for the Sampler
  bool logprobs = false;         // report the chosen token's log-probability
  int top_logprobs = 0;          // also report the N most likely tokens (implies logprobs)
};

namespace sampling_detail {

inline std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "name must be <range>, got v" — the value is a number we parsed, never raw request text.
inline Status check_range(const char* name, double v, double lo, double hi, bool lo_open,
                          const char* range_text) {
  if (!std::isfinite(v)) return Status::error(std::string(name) + " must be a finite number");
  const bool low_ok = lo_open ? v > lo : v >= lo;
  if (!low_ok || v > hi) {
    return Status::error(std::string(name) + " must be " + range_text + ", got " +
                         format_number(v));
  }
  return Status::ok();
}

}  // namespace sampling_detail

// Checks every field against the ranges OpenAI and vLLM accept. n_vocab bounds logit_bias ids.
inline Status validate(const SamplingParams& p, int64_t n_vocab) {
  using sampling_detail::check_range;
  using sampling_detail::format_number;
  constexpr double kInf = HUGE_VAL;
  DUET_TRY(check_range("temperature", p.temperature, 0, 100, false, "in [0, 100]"));
  DUET_TRY(check_range("top_p", p.top_p, 0, 1, true, "in (0, 1]"));
  if (p.top_k < 0) {
    return Status::error("top_k must be >= 0 (0 disables it), got " + std::to_string(p.top_k));
  }
  DUET_TRY(check_range("min_p", p.min_p, 0, 1, false, "in [0, 1]"));
  DUET_TRY(check_range("presence_penalty", p.presence_penalty, -2, 2, false, "in [-2, 2]"));
  DUET_TRY(check_range("frequency_penalty", p.frequency_penalty, -2, 2, false, "in [-2, 2]"));
  DUET_TRY(check_range("repetition_penalty", p.repetition_penalty, 0, kInf, true, "> 0"));
  for (const auto& [token, bias] : p.logit_bias) {
    if (token < 0 || token >= n_vocab) {
      return Status::error("logit_bias token " + std::to_string(token) +
                           " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    }
    if (!std::isfinite(bias) || bias < -100 || bias > 100) {
      return Status::error("logit_bias for token " + std::to_string(token) +
                           (std::isfinite(bias)
                                ? " must be in [-100, 100], got " + format_number(bias)
                                : std::string(" must be a finite number")));
    }
  }
  if (p.top_logprobs < 0 || p.top_logprobs > 20) {
    return Status::error("top_logprobs must be in [0, 20], got " + std::to_string(p.top_logprobs));
  }
  return Status::ok();
}

}  // namespace duet
