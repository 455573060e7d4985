// S3Result<T> / S3Status: the S3 layer's value-or-S3Error shapes. They
// mirror common/result.h, but carry an s3::S3Error (code + message as
// S3 would answer) instead of a Status, because every failure here is
// answered to an S3 client as is.
//
// Thread safety: values; distinct objects may be used freely.
#pragma once

#include <optional>
#include <utility>
#include <variant>

#include "common/check.h"
#include "s3/protocol/s3_error.h"

namespace tessera::s3 {

// OK, or the S3 error to answer.
class [[nodiscard]] S3Status {
 public:
  S3Status() = default;  // OK
  S3Status(S3Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  S3Status(S3ErrorCode code, std::string message = {})   // NOLINT
      : error_(S3Error(code, std::move(message))) {}

  static S3Status Ok() { return S3Status(); }
  bool ok() const { return !error_.has_value(); }
  // Precondition: !ok().
  const S3Error& error() const {
    TESSERA_CHECK(error_.has_value());
    return *error_;
  }

 private:
  std::optional<S3Error> error_;
};

// A value, or the S3 error to answer.
template <typename T>
class [[nodiscard]] S3Result {
 public:
  S3Result(T value) : data_(std::move(value)) {}          // NOLINT: implicit by design
  S3Result(S3Error error) : data_(std::move(error)) {}    // NOLINT
  S3Result(S3ErrorCode code, std::string message = {})   // NOLINT
      : data_(S3Error(code, std::move(message))) {}
  // Precondition: !status.ok().
  S3Result(const S3Status& status) : data_(status.error()) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(data_); }
  // Precondition: !ok().
  const S3Error& error() const {
    TESSERA_CHECK(!ok());
    return std::get<S3Error>(data_);
  }
  S3Status status() const { return ok() ? S3Status() : S3Status(error()); }
  T& value() & {
    TESSERA_CHECK(ok());
    return std::get<T>(data_);
  }
  const T& value() const& {
    TESSERA_CHECK(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    TESSERA_CHECK(ok());
    return std::get<T>(std::move(data_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, S3Error> data_;
};

}  // namespace tessera::s3

// Propagates a failed S3Status (or the error of an S3Result via .status())
// from the enclosing function.
#define TESSERA_S3_RETURN_IF_ERROR(expr)                  \
  do {                                                    \
    ::tessera::s3::S3Status tessera_s3_status_ = (expr);  \
    if (!tessera_s3_status_.ok()) return tessera_s3_status_.error(); \
  } while (0)
