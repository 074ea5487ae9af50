// UTF-8 helpers for the template engine. Whitespace follows JavaScript's `\s` / trim()
// set, because templates are held byte-for-byte to @huggingface/jinja, whose lexer and
// string methods use it. Invalid UTF-8 never stops anything: a stray byte counts as one
// character.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace duet::jinja {

// Byte length of the whitespace character starting at s[i], or 0.
size_t space_at(std::string_view s, size_t i);
// Byte length of the whitespace character ending just before s[end], or 0.
size_t space_before(std::string_view s, size_t end);
// Byte length of a JavaScript line terminator (\n \r U+2028 U+2029) at s[i], or 0.
size_t line_terminator_at(std::string_view s, size_t i);

std::string_view trim_start(std::string_view s);
std::string_view trim_end(std::string_view s);
inline std::string_view trim(std::string_view s) { return trim_end(trim_start(s)); }

// Decodes the code point at s[i] and advances i; an invalid sequence yields U+FFFD and
// advances one byte.
uint32_t decode_utf8(std::string_view s, size_t& i);
void append_utf8(std::string& out, uint32_t cp);
size_t count_code_points(std::string_view s);
// Byte offset of every code point, plus s.size() at the end.
std::vector<size_t> code_point_offsets(std::string_view s);

// ASCII-only case mapping (non-ASCII text passes through unchanged).
std::string ascii_upper(std::string_view s);
std::string ascii_lower(std::string_view s);

}  // namespace duet::jinja
