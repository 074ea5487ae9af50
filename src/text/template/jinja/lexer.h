// Template source → tokens, the way @huggingface/jinja does it: first a textual pass
// (drop one trailing newline; lstrip_blocks; trim_blocks; remove transformers'
// `{% generation %}` tags), then a scan that splits text from tags and applies `{%-`,
// `-%}`, `{{-`, `-}}`, `{#-`, `-#}`. `{% raw %}…{% endraw %}` comes out as one text token.
// Every token remembers where it began in the original source, for error messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace duet::jinja {

enum class Tok : uint8_t {
  kText,       // template data between tags (value: the text)
  kRawText,    // the body of {% raw %} (value: the text)
  kComment,    // {# … #} (kept so the scanner knows text may follow)
  kOpenStmt,   // {%
  kCloseStmt,  // %}
  kOpenExpr,   // {{
  kCloseExpr,  // }}
  kName,       // identifiers and keywords
  kInteger,    // value: the digits
  kFloat,      // value: digits.digits
  kString,     // value: the decoded literal
  kOperator,   // value: ( ) [ ] { } , . : | = + - ~ * / // % ** == != < > <= >=
};

struct Token {
  Tok kind;
  std::string value;
  uint32_t offset;  // in the original source
};

// Line and column (1-based; the column counts characters) of a byte offset.
class SourceMap {
 public:
  explicit SourceMap(std::string_view source);
  std::string where(uint32_t offset) const;  // "line L, column C"
  uint32_t line(uint32_t offset) const;
  uint32_t column(uint32_t offset) const;

 private:
  std::string_view source_;
  std::vector<uint32_t> line_starts_;
};

// Tokens of a whole template; errors carry "line L, column C".
Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace duet::jinja
