// Runs a benchmark: finds the model name when none is given (GET /v1/models, which also
// proves the server is there), sends the warm-up requests and waits for them, then releases
// the measured requests at their planned arrival times, holding any beyond --max-concurrency
// until a slot frees (vLLM's semantics: arrivals are planned, the semaphore delays sending).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "loadgen/record.h"
#include "loadgen/workload.h"

namespace duet::loadgen {

struct RunOptions {
  std::string url;
  std::string api_key;
  double timeout_s = 300;
  int max_concurrency = 0;    // 0: no limit
  bool progress = false;      // a live line on stderr
  bool progress_tty = false;  // rewrite it in place (\r) rather than print a line a second
  BodyOptions body;           // body.model empty: ask /v1/models
};

struct RunResult {
  std::string model;                   // the model name the requests carried
  std::vector<RequestRecord> records;  // warm-up first (warmup = true), then the measured ones
  double duration_s = 0;               // start of the measured run → its last completion
  int max_in_flight = 0;               // the most measured requests open at once
};

// Fails only when the run cannot begin (bad URL, unresolvable host, no model found);
// failures of single requests are in the records.
Result<RunResult> run_benchmark(const RunOptions& o, const std::vector<PlannedRequest>& warmup,
                                const std::vector<PlannedRequest>& plan);

}  // namespace duet::loadgen
