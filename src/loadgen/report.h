// The results, for people (a summary table like vLLM's) and for machines (--json: the
// configuration, every summary metric in milliseconds, errors by kind, and one record per
// request with its arrival times).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "loadgen/runner.h"
#include "loadgen/stats.h"

namespace duet::loadgen {

struct ReportContext {
  std::string url;
  nlohmann::json config = nlohmann::json::object();  // the flags that shaped the run
};

std::string summary_table(const RunResult& run, const BenchSummary& s, const ReportContext& c);
nlohmann::json report_json(const RunResult& run, const BenchSummary& s, const ReportContext& c);

}  // namespace duet::loadgen
