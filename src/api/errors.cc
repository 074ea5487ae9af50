#include "api/errors.h"

#include <nlohmann/json.hpp>

namespace duet {

Dialect dialect_for_path(std::string_view path) {
  return path.starts_with("/api/") ? Dialect::kOllama : Dialect::kOpenAI;
}

const char* openai_error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "service_unavailable_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string error_body(Dialect dialect, int status, std::string_view message) {
  nlohmann::json body;
  // error_handler_t::replace: a message is always valid UTF-8 JSON, even if some part of it
  // (a model name a client sent) was not.
  if (dialect == Dialect::kOllama) {
    body["error"] = message;
  } else {
    body["error"] = {{"message", message},
                     {"type", openai_error_type(status)},
                     {"param", nullptr},
                     {"code", status}};
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace duet
