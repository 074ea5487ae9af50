// A small Jinja interpreter for chat templates (the Jinja that model files ship in
// `tokenizer.chat_template`), held byte-for-byte to @huggingface/jinja 0.5.11: the same
// whitespace handling (trim_blocks and lstrip_blocks on, one trailing newline dropped,
// `{%-`/`-%}` strip Unicode whitespace), the same printing of values (`true`, JSON-style
// lists, nothing for none), the same `tojson` format. Where that library rejects a
// construct Jinja2 accepts (iterating undefined, string comparison, `map('upper')`...),
// this follows Jinja2; where it has a plain bug (`strip('\n')` ignoring its argument,
// JavaScript's `%` sign, `"1" == 1`, containers compared by identity), this follows Jinja2
// too. See README notes in chat_template.h for what is left out.
//
// Output knows its provenance (render_marked): the bytes the template wrote itself — its
// text, its string literals, trusted context values, and the parts of them that string
// operations carry along — are marked trusted; everything else is client text.
//
// Rendering is bounded: nested macro calls, total output, and evaluation steps are
// limited, so a hostile template fails with a Status instead of hanging or crashing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "text/tokenizer/marked_text.h"

namespace duet::jinja {

struct RenderLimits {
  int max_depth = 64;                  // nested macro calls
  size_t max_output_bytes = 8u << 20;  // the rendered text, and any one string built
  uint64_t max_steps = 10'000'000;     // evaluation steps (nodes, loop turns, bytes/16)
};

// The moment `strftime_now` formats. Unset: the local time of this machine.
struct DateTime {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0;
};

struct Program;  // the parsed template (ast.h)

class Template {
 public:
  // Parse errors name the line and column (1-based, in characters) of the source.
  static Result<std::unique_ptr<Template>> parse(std::string_view source);
  ~Template();

  // `context` must be an object; its members become the template's variables. An ordered
  // JSON keeps key order, which `tojson` and `items()` expose.
  Result<std::string> render(const nlohmann::ordered_json& context, const RenderLimits& limits = {},
                             const std::optional<DateTime>& now = std::nullopt) const;

  // The same, with provenance. Both contexts must be objects; a name in both takes the
  // client's value. Strings of `trusted_context` are trusted (the server's own settings:
  // add_generation_prompt, bos_token...); strings of `client_context` are client text.
  // What stays trusted through string operations: concatenation (+, ~), join, slices,
  // indexing, split, strip/lstrip/rstrip/trim, replace, upper/lower/title/capitalize,
  // `string`, iteration over characters, set blocks and macro output. Anything made
  // otherwise — tojson, indent, escape, numbers, dict keys, dates — is client text.
  Result<MarkedText> render_marked(const nlohmann::ordered_json& trusted_context,
                                   const nlohmann::ordered_json& client_context,
                                   const RenderLimits& limits = {},
                                   const std::optional<DateTime>& now = std::nullopt) const;

 private:
  explicit Template(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

}  // namespace duet::jinja
