// A table row for the Jinja unit tests, and how a row is rendered: fixed date, default limits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "text/template/jinja/jinja.h"

namespace duet::jinja {

struct Case {
  const char* name;
  const char* source;
  const char* context;  // JSON
  const char* want;
};

// The rendered text, or "parse error: …" / "render error: …" so a table row can expect errors.
inline std::string render(const Case& c) {
  auto t = Template::parse(c.source);
  if (!t) return "parse error: " + t.message();
  const auto context = nlohmann::ordered_json::parse(c.context);
  auto out = (*t)->render(context, RenderLimits{}, DateTime{2026, 11, 29, 13, 5, 9});
  if (!out) return "render error: " + out.message();
  return *out;
}

}  // namespace duet::jinja
