// A parsed request to a running generation, the same for every caller: the server's routes
// (server/generation.cc) and `duet run` (cli/cmd_run.cc), so that the terminal shows exactly
// what an API client gets.
//
//   prepare_generation   decides the mode and renders and tokenizes the prompt (CPU work, on
//                        any thread; the server runs it off its I/O threads)
//   start_generation     submits it to the engine and sets up the output pipeline with every
//                        output option the request carries (stop strings, tool calls,
//                        reasoning format, logprobs, ...)
#pragma once

#include <memory>

#include "api/output_pipeline.h"
#include "api/prompt_builder.h"
#include "api/request_model.h"
#include "engine/request.h"
#include "host/model_host.h"

namespace duet {

// Decides `request.mode` (the host's default mode applies when the request names none) and,
// unless the request only loads the model, prepares its prompt. Errors are the client's (400).
Result<PreparedRequest> prepare_generation(const ModelHost& host, ApiRequest& request);

struct RunningGeneration {
  std::shared_ptr<RequestHandle> handle;   // the engine's events; cancel() ends it
  std::unique_ptr<OutputPipeline> output;  // each event's tokens → reasoning, content, calls
};

// Submits a prepared request. Fails when the engine refuses it (it is stopping, or the request
// cannot fit its cache).
Result<RunningGeneration> start_generation(ModelHost& host, const ApiRequest& request,
                                           const PreparedRequest& prepared);

}  // namespace duet
