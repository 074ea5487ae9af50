// Reading request bodies: strict, typed access to optional fields, with errors that name the
// field (never echo its value). JSON null counts as absent, as clients send null for "unset".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace duet {

using Json = nlohmann::ordered_json;

// Deeper bodies are refused before parsing: nlohmann's value tree (copy, dump, destroy) is
// recursive, so a 100,000-deep array would overflow the stack later. No real request comes
// near this.
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body that must be one JSON object. Errors: empty body, invalid JSON
// (including invalid UTF-8 and lone surrogates, which nlohmann rejects), too deep, not an
// object.
Result<Json> parse_request_body(std::string_view body);

// Parses JSON that a client sent inside a string of the body (a tool call's `arguments`):
// the same depth limit as the body, so that the value cannot be deeper once it is placed in
// the request (its size is bounded by the body's). `what` names the field in errors.
Result<Json> parse_embedded_json(std::string_view text, std::string_view what);

// The deepest nesting of [ and { outside strings (a scan, no parse).
int json_nesting_depth(std::string_view text);

// The field `name` of `obj` if present and not null.
const Json* find_field(const Json& obj, std::string_view name);

Result<std::optional<bool>> get_bool(const Json& obj, std::string_view name);
Result<std::optional<std::string>> get_string(const Json& obj, std::string_view name);
// A finite number.
Result<std::optional<double>> get_number(const Json& obj, std::string_view name);
// An integer in [lo, hi]; an integral float (2.0, 1e3) counts, 1.5 does not.
Result<std::optional<int64_t>> get_int(const Json& obj, std::string_view name, int64_t lo,
                                       int64_t hi);
// The same for a value (array element); `what` names it in errors.
Result<int64_t> as_int(const Json& v, std::string_view what, int64_t lo, int64_t hi);

// "field must be ..." with the field's name; for building errors elsewhere.
Status field_error(std::string_view name, std::string_view must_be);

}  // namespace duet
