// Status and Result<T>: the one error type for bad input (files, requests, flags).
// Assertions are kept for the program's own invariants; anything that comes from
// outside the process is reported through these instead.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace duet {

class Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }
  bool is_ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& message() const { return message_; }
  // Prefixes context ("loading x: ") so an error names where it happened.
  Status with_context(const std::string& context) const {
    return ok_ ? *this : error(context + ": " + message_);
  }

 private:
  bool ok_ = true;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {
    assert(!std::get<Status>(v_).is_ok());
  }  // NOLINT
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<1>(v_); }
  const std::string& message() const {
    static const std::string kEmpty;
    return is_ok() ? kEmpty : std::get<1>(v_).message();
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace duet

// Early return on error, for functions returning Status or Result<U>.
#define DUET_TRY(expr)                            \
  do {                                            \
    ::duet::Status duet_try_s_ = (expr);          \
    if (!duet_try_s_.is_ok()) return duet_try_s_; \
  } while (0)

// Evaluates a Result-returning expression; returns its Status on error, else binds the value.
#define DUET_ASSIGN(var, expr)           \
  auto var##_r = (expr);                 \
  if (!var##_r) return var##_r.status(); \
  auto var = std::move(var##_r.value())
