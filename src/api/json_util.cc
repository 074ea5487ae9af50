#include "api/json_util.h"

#include <cmath>

namespace duet {

int json_nesting_depth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      max_depth = std::max(max_depth, ++depth);
    else if (c == ']' || c == '}')
      --depth;
  }
  return max_depth;
}

Result<Json> parse_embedded_json(std::string_view text, std::string_view what) {
  if (json_nesting_depth(text) > kMaxJsonDepth)
    return Status::error(std::string(what) + " is nested more than " +
                         std::to_string(kMaxJsonDepth) + " levels deep");
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::error(std::string(what) + " is not valid JSON (or not valid UTF-8)");
  return j;
}

Result<Json> parse_request_body(std::string_view body) {
  if (body.empty()) return Status::error("the request body is empty; expected a JSON object");
  DUET_ASSIGN(j, parse_embedded_json(body, "the request body"));
  if (!j.is_object()) return Status::error("the request body must be a JSON object");
  return j;
}

const Json* find_field(const Json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Status field_error(std::string_view name, std::string_view must_be) {
  return Status::error(std::string(name) + " must be " + std::string(must_be));
}

Result<std::optional<bool>> get_bool(const Json& obj, std::string_view name) {
  const Json* v = find_field(obj, name);
  if (!v) return std::optional<bool>();
  if (!v->is_boolean()) return field_error(name, "true or false");
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<std::string>> get_string(const Json& obj, std::string_view name) {
  const Json* v = find_field(obj, name);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return field_error(name, "a string");
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::optional<double>> get_number(const Json& obj, std::string_view name) {
  const Json* v = find_field(obj, name);
  if (!v) return std::optional<double>();
  if (!v->is_number()) return field_error(name, "a number");
  const double d = v->get<double>();
  if (!std::isfinite(d)) return field_error(name, "a finite number");
  return std::optional<double>(d);
}

Result<int64_t> as_int(const Json& v, std::string_view what, int64_t lo, int64_t hi) {
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || static_cast<int64_t>(u) < lo)
      return field_error(what, range);
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) return field_error(what, range);
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) ||
        d > static_cast<double>(hi))
      return field_error(what, range);
    return static_cast<int64_t>(d);
  }
  return field_error(what, range);
}

Result<std::optional<int64_t>> get_int(const Json& obj, std::string_view name, int64_t lo,
                                       int64_t hi) {
  const Json* v = find_field(obj, name);
  if (!v) return std::optional<int64_t>();
  auto r = as_int(*v, name, lo, hi);
  if (!r) return r.status();
  return std::optional<int64_t>(*r);
}

}  // namespace duet
