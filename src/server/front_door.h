// Every request passes here before its route: Host check (DNS rebinding), Origin check and
// CORS, the API key (not for /health and the chat page's files), then the route table (404 unknown
// path, 405 wrong method).
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/router.h"
#include "server/server_context.h"

namespace duet {

void handle_request(ServerContext& ctx, const Router& router, const std::shared_ptr<Exchange>& ex);

// An error response in the dialect of the request's path.
HttpResponse error_response(std::string_view path, int status, const std::string& message);
void respond_error(Exchange& ex, int status, const std::string& message);

// A JSON response.
HttpResponse json_response(int status, std::string body);

}  // namespace duet
