// Status-or-value: what every call of rung's C++ layer (rung/engine.h) returns,
// and the vocabulary of its internals. Stable, with rung/rung.h and rung/engine.h:
// it needs nothing but the standard library.
//
// An Error is also an exception: value() on a Result that holds one throws it,
// so a caller who skips the check still gets rung's code and message (what(),
// exit_code()), never std::bad_variant_access.
#pragma once

#include <exception>
#include <string>
#include <utility>
#include <variant>

namespace rung {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something unusable
  kNotFound,         // a file, directory or name that is not there
  kPermission,       // refused for safety (e.g. a library others can write to)
  kLoadFailed,       // dlopen or symbol lookup failed
  kUnsupported,      // the runtime or platform cannot do it
  kRuntime,          // ONNX Runtime returned an error
  kIo,               // reading or writing a file failed
  kNoRuntime,        // no usable ONNX Runtime build: none found, none loads, or not the one asked for
};

struct Error : std::exception {
  Error(ErrorCode c, std::string m) : code(c), message(std::move(m)) {}
  ErrorCode code;
  std::string message;
  const char* what() const noexcept override { return message.c_str(); }
  int exit_code() const;  // below: exit_code_of(code)
};

// The exit code a failure of this kind gives, the same for the command line and
// the C ABI's rung_status_exit_code: 2 bad input (arguments, files, names), 3 no
// usable ONNX Runtime, 1 when the work ran and could not be done.
constexpr int exit_code_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound: return 2;
    case ErrorCode::kNoRuntime: return 3;
    case ErrorCode::kPermission:
    case ErrorCode::kLoadFailed:
    case ErrorCode::kUnsupported:
    case ErrorCode::kRuntime:
    case ErrorCode::kIo: return 1;
  }
  return 1;
}

inline int Error::exit_code() const { return exit_code_of(code); }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The value; on an error, throws that Error.
  T& value() & {
    if (!ok()) throw error();
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) throw error();
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) throw error();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A Result with no value: ok, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }
  // Nothing when ok; else throws the Error (as Result::value() does).
  void value() const {
    if (failed_) throw error_;
  }

 private:
  Error error_{ErrorCode::kInvalidArgument, {}};
  bool failed_ = false;
};

}  // namespace rung
