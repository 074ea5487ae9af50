#include "text/output/json_stream_scanner.h"

namespace duet {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

JsonObjectScanner::Status JsonObjectScanner::feed(char c) {
  if (status_ != Status::kNeedMore) return status_;
  status_ = step(c);
  ++offset_;
  return status_;
}

void JsonObjectScanner::value_done(size_t end) {
  if (at_member_depth() && in_member_) {
    current_.value_end = end;
    members_.push_back(current_);
    in_member_ = false;
  }
  state_ = State::kAfterValue;
}

void JsonObjectScanner::begin_value(char c) {
  if (at_member_depth() && in_member_) current_.value_begin = offset_;
  switch (c) {
    case '"':
      in_key_ = false;
      state_ = State::kString;
      return;
    case '{':
    case '[':
      if (stack_.size() >= kMaxDepth) {
        state_ = State::kDone;
        status_ = Status::kError;
        return;
      }
      stack_.push_back(c);
      state_ = c == '{' ? State::kKeyOrEnd : State::kValueOrEnd;
      return;
    case '-':
      state_ = State::kMinus;
      return;
    case '0':
      state_ = State::kZero;
      return;
    case 't':
      literal_ = "rue";
      state_ = State::kLiteral;
      return;
    case 'f':
      literal_ = "alse";
      state_ = State::kLiteral;
      return;
    case 'n':
      literal_ = "ull";
      state_ = State::kLiteral;
      return;
    default:
      if (c >= '1' && c <= '9') {
        state_ = State::kInt;
        return;
      }
      state_ = State::kDone;
      status_ = Status::kError;
  }
}

JsonObjectScanner::Status JsonObjectScanner::step(char c) {
  constexpr Status kMore = Status::kNeedMore, kError = Status::kError;
  const size_t pos = offset_;
  // Ends a number at a byte that is not part of it; the byte then goes on as if after a value.
  const auto end_number = [&]() {
    value_done(pos);
    return step(c);
  };
  // Closes the innermost container at this byte.
  const auto close = [&]() {
    stack_.pop_back();
    if (stack_.empty()) {
      state_ = State::kDone;
      return Status::kComplete;
    }
    value_done(pos + 1);
    return kMore;
  };
  const auto start_key = [&]() {
    in_key_ = true;
    if (at_member_depth()) {
      in_member_ = true;
      current_ = Member{.key_begin = pos};
    }
    state_ = State::kString;
    return kMore;
  };

  switch (state_) {
    case State::kStart:
      if (is_ws(c)) return kMore;
      if (c != '{') return kError;
      stack_.push_back('{');
      state_ = State::kKeyOrEnd;
      return kMore;
    case State::kKeyOrEnd:
      if (is_ws(c)) return kMore;
      if (c == '"') return start_key();
      if (c == '}') return close();
      return kError;
    case State::kKey:
      if (is_ws(c)) return kMore;
      if (c == '"') return start_key();
      return kError;
    case State::kColon:
      if (is_ws(c)) return kMore;
      if (c != ':') return kError;
      state_ = State::kValue;
      return kMore;
    case State::kValueOrEnd:
      if (is_ws(c)) return kMore;
      if (c == ']') return close();
      begin_value(c);
      return status_ == kError ? kError : kMore;
    case State::kValue:
      if (is_ws(c)) return kMore;
      begin_value(c);
      return status_ == kError ? kError : kMore;
    case State::kAfterValue:
      if (is_ws(c)) return kMore;
      if (c == ',') {
        state_ = stack_.back() == '{' ? State::kKey : State::kValue;
        return kMore;
      }
      if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) return close();
      return kError;
    case State::kString:
      if (c == '"') {
        if (in_key_) {
          in_key_ = false;
          if (at_member_depth()) current_.key_end = pos + 1;
          state_ = State::kColon;
        } else {
          value_done(pos + 1);
        }
        return kMore;
      }
      if (c == '\\') state_ = State::kEscape;
      if (static_cast<unsigned char>(c) < 0x20) return kError;  // raw control characters
      return kMore;
    case State::kEscape:
      if (c == 'u') {
        hex_left_ = 4;
        state_ = State::kUnicode;
        return kMore;
      }
      if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
          c == 't') {
        state_ = State::kString;
        return kMore;
      }
      return kError;
    case State::kUnicode:
      if (!is_hex(c)) return kError;
      if (--hex_left_ == 0) state_ = State::kString;
      return kMore;
    case State::kMinus:
      if (c == '0')
        state_ = State::kZero;
      else if (is_digit(c))
        state_ = State::kInt;
      else
        return kError;
      return kMore;
    case State::kZero:
    case State::kInt:
      if (is_digit(c) && state_ == State::kInt) return kMore;
      if (is_digit(c)) return kError;  // 01
      if (c == '.')
        state_ = State::kDot;
      else if (c == 'e' || c == 'E')
        state_ = State::kExp;
      else
        return end_number();
      return kMore;
    case State::kDot:
      if (!is_digit(c)) return kError;
      state_ = State::kFrac;
      return kMore;
    case State::kFrac:
      if (is_digit(c)) return kMore;
      if (c == 'e' || c == 'E') {
        state_ = State::kExp;
        return kMore;
      }
      return end_number();
    case State::kExp:
      if (c == '+' || c == '-')
        state_ = State::kExpSign;
      else if (is_digit(c))
        state_ = State::kExpDigits;
      else
        return kError;
      return kMore;
    case State::kExpSign:
      if (!is_digit(c)) return kError;
      state_ = State::kExpDigits;
      return kMore;
    case State::kExpDigits:
      if (is_digit(c)) return kMore;
      return end_number();
    case State::kLiteral:
      if (c != *literal_) return kError;
      if (*++literal_ == '\0') value_done(pos + 1);
      return kMore;
    case State::kDone:
      return status_;
  }
  return kError;
}

}  // namespace duet
