// One generation request from admission to the last byte: the queue bound (429), submit to
// the engine, then — on the connection's strand, woken by the engine after every token —
// decode, parse and write each event at once (SSE or NDJSON), or collect it for a single
// JSON answer. A client that goes away cancels the request at once.
#pragma once

#include <memory>

#include "api/prompt_builder.h"
#include "api/request_model.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace duet {

// Answers `ex` with the generation `request` asks for (the body was already validated, its
// mode decided and its prompt prepared: `prepared`, unused for a load-only request). Runs on
// the connection's strand.
void run_generation(ServerContext& ctx, const std::shared_ptr<Exchange>& ex, ApiRequest request,
                    PreparedRequest prepared);

}  // namespace duet
