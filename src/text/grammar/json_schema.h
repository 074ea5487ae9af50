// JSON Schema → GBNF: the grammar of the JSON texts a schema accepts, as far as a grammar can
// say it; a keyword it cannot enforce is an error naming the keyword and where it is, never
// silently ignored.
//
// Enforced: type (one or a list; `nullable`), properties / required / additionalProperties
// (false by default when properties are listed: a model should not invent fields), items,
// prefixItems, minItems / maxItems, enum, const, anyOf, oneOf (when no value can match two of
// its branches; otherwise refused), allOf (merged), $ref into the document ($defs,
// definitions, "#"), recursion included, string minLength / maxLength / pattern (see regex.h) /
// format (date, time, date-time, uuid, email, ipv4), integer and number bounds (minimum,
// maximum, the exclusive forms; a decimal bound such as 0.1 is exact, to 32 places),
// uniqueItems when at most one item is allowed.
// Annotations (title, description, default, examples, $schema, $id, $comment…) are ignored.
//
// Properties come in the schema's order. Whitespace between tokens is bounded (one space, or
// one newline and up to 20 spaces or tabs of indentation), numbers have at most 16 digits
// before and after the point, so a model cannot loop on spaces or digits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace duet::grammar {

// The GBNF of every JSON text the schema accepts, with its start rule named root.
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema);

// Any JSON object (OpenAI's json_object, Ollama's format "json").
std::string json_object_gbnf();
// Any JSON value.
std::string json_value_gbnf();

}  // namespace duet::grammar
