// The two dialects' error bodies. OpenAI clients read {"error":{"message","type","code"}};
// Ollama clients read {"error":"message"}. Messages are written by duet (never raw input
// or file paths), so a client can show them as they are.
#pragma once

#include <string>
#include <string_view>

namespace duet {

enum class Dialect { kOpenAI, kOllama };

// Ollama's routes live under /api/; everything else speaks OpenAI's shape.
Dialect dialect_for_path(std::string_view path);

// OpenAI's error type for an HTTP status ("invalid_request_error", "authentication_error",
// "rate_limit_error", ...).
const char* openai_error_type(int status);

// The JSON text of an error body.
std::string error_body(Dialect dialect, int status, std::string_view message);

}  // namespace duet
