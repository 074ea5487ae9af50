// What to send and when: the prompts (a seeded random dataset or a JSONL file), each
// request's output length and thinking mode, and the arrival times (fixed rate, Poisson or
// gamma-distributed gaps, or all at once). Everything is drawn from --seed, so two runs with
// the same flags send the same requests at the same offsets.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "loadgen/record.h"

namespace duet::loadgen {

// --think: one mode for every request, or "mix": a seeded split between on and off.
enum class ThinkPlan { kServerDefault, kOn, kOff, kAuto, kMix };

struct WorkloadOptions {
  std::string dataset_file;  // JSONL; empty = the random dataset
  int num_prompts = 100;     // <= 0 with a file: one request per line
  int input_len = 256;       // words of the random prompt
  int output_len = 128;      // max_tokens (a file's line may say otherwise)
  double range_ratio = 0;    // lengths drawn uniformly from [len·(1−r), len·(1+r)]
  ThinkPlan think = ThinkPlan::kServerDefault;
  double mix_thinking_fraction = 0.5;
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s
  bool poisson = true;                                            // false: exactly 1/rate apart
  double burstiness = 1.0;  // gamma shape; 1 = Poisson (exponential gaps)
  uint64_t seed = 0;
  int warmup = 0;  // extra requests before the measured run (same distributions)
};

// The measured requests (scheduled_s set) followed by nothing else; warm-up requests are
// planned separately so that the measured plan does not depend on --warmup.
Result<std::vector<PlannedRequest>> plan_requests(const WorkloadOptions& o);
Result<std::vector<PlannedRequest>> plan_warmup(const WorkloadOptions& o);

// Gaps between arrivals for `n` requests (n−1 gaps, then the times from 0).
std::vector<double> arrival_times(int n, double rate, bool poisson, double burstiness,
                                  uint64_t seed);

struct BodyOptions {
  std::string model;
  bool ignore_eos = false;  // also min_tokens = max_tokens: fixed output lengths
  nlohmann::json extra = nlohmann::json::object();  // merged into every body (--extra-body)
  double temperature = -1;                          // < 0: the server's default
};

// The JSON body for /v1/chat/completions. Thinking mode travels the way the OpenAI-style
// servers accept it (chat_template_kwargs.enable_thinking: vLLM, SGLang, llama.cpp, duet);
// "auto" is duet's own "mode":"auto", which other servers ignore (then their default holds).
std::string request_body(const PlannedRequest& p, const BodyOptions& b);

}  // namespace duet::loadgen
