// Result<T>: a value or a non-OK Status.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "common/status.h"

namespace tessera {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(data_).ok() && "Result from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { assert(ok()); return std::get<T>(data_); }
  const T& value() const& { assert(ok()); return std::get<T>(data_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace tessera

// Propagates a non-OK Status from the enclosing function.
#define TESSERA_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::tessera::Status tessera_status_ = (expr);  \
    if (!tessera_status_.ok()) return tessera_status_; \
  } while (0)
