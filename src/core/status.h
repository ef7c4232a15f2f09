// Errors are values: every fallible library call returns Status or Result<T>.
// Nothing throws across library boundaries (the injection library's C ABI in
// particular); the CLI turns an Error into one line and an exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace magneton {

enum class ErrorCode {
  kInvalidArgument,  // bad usage or bad value from the caller
  kNotFound,         // missing file or entity
  kCorrupt,          // not a run file, truncated, or inconsistent content
  kUnsupported,      // e.g. a newer schema major version
  kUnavailable,      // a sensor or library that this machine lacks
  kIo,               // the OS refused a read or write
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  // one line, names the input and the problem
};

class Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT: implicit by design
  static Status Ok() { return {}; }
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }
  const std::string& message() const { return error_->message; }

 private:
  std::optional<Error> error_;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT
  Result(Error e) : v_(std::move(e)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status::Ok() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

inline Error MakeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace magneton

// Propagate a failed Status/Result from an expression.
#define MAGNETON_RETURN_IF_ERROR(expr)            \
  do {                                            \
    auto _mg_st = (expr);                         \
    if (!_mg_st.ok()) return _mg_st.error();      \
  } while (0)
