//===- Status.h - Error values without exceptions ---------------*- C++ -*-===//
//
// Below the MLIR line there are no LLVM headers, so no llvm::Error/Expected.
// The library never throws across its boundary: every fallible call returns a
// Status or an Expected<T> whose message follows the LLVM style (lowercase,
// no trailing period, expected and actual values named).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_STATUS_H
#define FP8_CODEGEN_STATUS_H

#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace fp8 {

/// The outcome of an operation that returns nothing: success, or an error with
/// a human-readable message.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  /// An error with the given message.
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  /// Success.
  static Status ok() { return Status(); }

  /// True on success.
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  /// The error message ("" on success).
  const std::string &message() const { return message_; }

  /// Prefixes the message with context ("while compiling gemm_x: ...").
  Status &withContext(const std::string &context) {
    if (failed_)
      message_ = context + ": " + message_;
    return *this;
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value of type T, or the Status explaining why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : storage_(std::move(value)) {}
  Expected(Status error) : storage_(std::move(error)) {
    assert(!std::get<Status>(storage_).isOk() &&
           "an Expected built from a Status must hold an error");
  }

  /// True when a value is held.
  bool isOk() const { return storage_.index() == 0; }
  explicit operator bool() const { return isOk(); }

  /// The held value; only valid when isOk().
  T &value() & { return std::get<T>(storage_); }
  const T &value() const & { return std::get<T>(storage_); }
  T &&value() && { return std::get<T>(std::move(storage_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  /// The error; Status::ok() when a value is held.
  Status status() const {
    return isOk() ? Status::ok() : std::get<Status>(storage_);
  }
  /// The error message ("" when a value is held).
  std::string message() const { return status().message(); }

private:
  std::variant<T, Status> storage_;
};

/// Builds an error Status from streamed parts:
///   return errorf("expected K (", k, ") to be a multiple of ", b);
template <typename... Parts> Status errorf(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Status::error(os.str());
}

} // namespace fp8

/// Returns from the enclosing function when `expr` (a Status) is an error.
#define FP8_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::fp8::Status fp8_status_ = (expr);                                        \
    if (!fp8_status_.isOk())                                                   \
      return fp8_status_;                                                      \
  } while (false)

#endif // FP8_CODEGEN_STATUS_H
