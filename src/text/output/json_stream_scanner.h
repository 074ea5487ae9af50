// An incremental syntax check of one JSON object, fed a byte at a time, that also reports where
// each top-level member's key and value lie in the bytes fed. The tool-call parser uses it to
// find the end of a {"name": …, "arguments": {…}} object without being fooled by braces or
// "</tool_call>" inside strings, and to stream the arguments while they are still being written.
//
// It checks the grammar (RFC 8259: strings with their escapes, numbers, literals, nesting) but
// not UTF-8 validity or surrogate pairing; the caller parses the finished object with
// nlohmann::json, which does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace duet {

class JsonObjectScanner {
 public:
  enum class Status { kNeedMore, kComplete, kError };

  // A top-level member; byte offsets into what was fed, [begin, end). value_end is kOpen while
  // the value is still being read.
  static constexpr size_t kOpen = SIZE_MAX;
  struct Member {
    size_t key_begin = 0, key_end = 0;  // the key with its quotes
    size_t value_begin = kOpen, value_end = kOpen;
  };

  // Deeper nesting is an error: bounded memory whatever the input.
  static constexpr size_t kMaxDepth = 256;

  // Leading whitespace is skipped; the first other byte must be '{'. Once the status is
  // kComplete or kError, further bytes change nothing.
  Status feed(char c);
  Status status() const { return status_; }
  size_t offset() const { return offset_; }  // bytes fed

  // The member being read (its key seen, its value possibly begun), if any.
  const Member* current_member() const { return in_member_ ? &current_ : nullptr; }
  // Members whose values are complete, in order.
  const std::vector<Member>& members() const { return members_; }

 private:
  enum class State : uint8_t {
    kStart,       // before the top-level '{'
    kKeyOrEnd,    // after '{': a key or '}'
    kKey,         // after ',' in an object: a key
    kColon,       // after a key
    kValue,       // a value
    kValueOrEnd,  // after '[': a value or ']'
    kAfterValue,  // ',' or the container's closer
    kString,      // inside a string (a key if in_key_)
    kEscape,      // after a backslash
    kUnicode,     // in the 4 hex digits of \uXXXX
    kMinus,       // number: after '-'
    kZero,        // number: a leading 0
    kInt,         // number: integer digits
    kDot,         // number: after '.'
    kFrac,        // number: fraction digits
    kExp,         // number: after 'e'
    kExpSign,     // number: after the exponent's sign
    kExpDigits,   // number: exponent digits
    kLiteral,     // true / false / null
    kDone,
  };
  Status step(char c);
  void begin_value(char c);
  void value_done(size_t end);  // a value ended; end is one past its last byte
  bool at_member_depth() const { return stack_.size() == 1; }

  State state_ = State::kStart;
  Status status_ = Status::kNeedMore;
  size_t offset_ = 0;
  std::vector<char> stack_;  // '{' or '[' per open container
  bool in_key_ = false;
  int hex_left_ = 0;
  const char* literal_ = nullptr;  // the rest of "true"/"false"/"null" still expected
  bool in_member_ = false;
  Member current_;
  std::vector<Member> members_;
};

}  // namespace duet
