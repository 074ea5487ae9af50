// libFuzzer target: GBNF text (llama.cpp's `grammar` field) through the parser and the byte
// automaton. Beyond "no crash, no sanitizer report, no hang", it traps when a grammar that
// parsed cannot be printed, or when the automaton disagrees with itself: walking a text byte
// by byte and all at once must reach the same state.
//
// Input: the grammar text, then (after a NUL byte, if any) bytes to walk through it.
//
//   build-fuzz/fuzz_gbnf -max_total_time=60 <corpus copy>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view text = in.substr(0, nul);
  const std::string_view walk = nul == std::string_view::npos ? text : in.substr(nul + 1);
  duet::grammar::GbnfLimits limits;
  limits.max_rules = 2000;  // keeps one input's work small; the limits themselves are tested
  limits.max_elems = 20000;
  auto g = duet::grammar::parse_gbnf(text, "root", limits);
  if (!g) return 0;
  check(!duet::grammar::to_string(g.value()).empty());
  duet::grammar::ByteAutomaton a(g.value());
  int32_t step = a.start();
  for (char c : walk.substr(0, 256)) {
    if (step == duet::grammar::ByteAutomaton::kDead) break;
    step = a.next(step, static_cast<uint8_t>(c));
  }
  duet::grammar::ByteAutomaton b(g.value());
  const int32_t whole = b.walk(b.start(), walk.substr(0, 256));
  check((step == duet::grammar::ByteAutomaton::kDead) ==
        (whole == duet::grammar::ByteAutomaton::kDead));
  if (step != duet::grammar::ByteAutomaton::kDead) check(a.key(step) == b.key(whole));
  return 0;
}
