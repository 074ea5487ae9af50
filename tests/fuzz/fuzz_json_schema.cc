// libFuzzer target: JSON Schemas through the schema compiler. Beyond "no crash, no sanitizer
// report, no hang", it traps when the compiler accepts a schema but writes GBNF that the GBNF
// parser refuses (the compiler's output must always be a valid grammar), or when a refusal does
// not say where in the schema it is.
//
// Input: JSON text (invalid JSON is skipped).
//
//   build-fuzz/fuzz_json_schema -max_total_time=60 <corpus copy>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema.h"

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto schema = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (schema.is_discarded()) return 0;
  auto gbnf = duet::grammar::json_schema_to_gbnf(schema);
  if (!gbnf) {
    check(gbnf.status().message().find("JSON schema at") != std::string::npos);
    return 0;
  }
  auto g = duet::grammar::parse_gbnf(gbnf.value());
  check(g.is_ok() || g.status().message().find("too large") != std::string::npos ||
        g.status().message().find("above") != std::string::npos);
  if (!g) return 0;
  duet::grammar::ByteAutomaton a(g.value());
  int32_t s = a.start();
  for (char c : std::string("{\"a\": [1, \"x\", null], \"b\": true}")) {
    if (s == duet::grammar::ByteAutomaton::kDead) break;
    s = a.next(s, static_cast<uint8_t>(c));
  }
  return 0;
}
