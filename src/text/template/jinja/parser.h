// Tokens → Program. Operator precedence follows @huggingface/jinja (which follows Jinja2):
// ternary < or < and < not < comparison/in < + - ~ < * / // % < ** < is < | < unary ± <
// call, attribute, subscript.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "text/template/jinja/ast.h"

namespace duet::jinja {

// Nesting of expressions and blocks beyond this is refused: each level costs stack.
constexpr int kMaxParseNesting = 200;

Result<std::unique_ptr<Program>> parse_program(std::string_view source);

}  // namespace duet::jinja
