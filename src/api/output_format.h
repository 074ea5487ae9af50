// Structured output: every request field that constrains what the model writes, read into one
// compiled grammar.
//
//   OpenAI       response_format {"type":"json_object"} / {"type":"json_schema","json_schema":
//                {name, schema, strict}}; tool_choice "required" / {"type":"function",...}
//   Ollama       format "json" / format {a JSON Schema}
//   llama.cpp    grammar (GBNF), json_schema
//   vLLM         guided_json, guided_regex, guided_choice, guided_grammar, structured_outputs
//                {json, regex, choice, grammar, json_object}
//
// At most one may be given. Compiled grammars are cached by their source text, so a client
// that sends the same schema with every request compiles it once.
#pragma once

#include <memory>
#include <string>

#include "api/json_util.h"
#include "base/status.h"
#include "text/grammar/grammar_constraint.h"

namespace duet {

struct OutputFormat {
  std::shared_ptr<const grammar::CompiledGrammar> grammar;  // null: free text
  std::string field;                                        // the field it came from, for logs
};

namespace request_detail {
// Reads the structured-output fields of a body (the dialect's and the engines' extensions).
// The forced-tool-call form is built by tool_call_format().
Status read_output_format(const Json& body, OutputFormat& out);
// A reply of Qwen3 <tool_call> blocks, each naming `function` (any of `tools` when empty) with
// arguments that satisfy its parameters: one call, or with `several` one or more.
Status tool_call_format(const Json& tools, const std::string& function, bool several,
                        OutputFormat& out);
}  // namespace request_detail

// The compiled grammar of GBNF text (through the cache). Errors name the problem.
Result<std::shared_ptr<const grammar::CompiledGrammar>> compile_output_grammar(
    const std::string& gbnf);

}  // namespace duet
