// Status: the outcome of an operation that can fail for reasons of the world
// (bad input, lost disk, dead peer). Broken invariants are asserted instead.
//
// Thread safety: a Status is a value; distinct objects may be used freely.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tessera {

enum class StatusCode : uint8_t {
  kOk = 0,
  kNotFound,
  kNotLeader,      // message() may carry a leader hint; see leader_hint()
  kThrottled,      // a bounded queue or window is full: retry later
  kStaleEpoch,
  kCorruption,     // a checksum or format check failed
  kIOError,
  kTimeout,
  kInvalidArgument,
  kConflict,       // a precondition (version, ballot, CAS) did not hold
  kUnavailable,    // no quorum / not ready
  kAborted,
  kPermissionDenied,  // the caller's role or grant does not allow this
};

// The number of StatusCode values (the last one plus one).
inline constexpr size_t kStatusCodeCount = static_cast<size_t>(StatusCode::kPermissionDenied) + 1;

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, uint32_t leader_hint = 0)
      : code_(code), leader_hint_(leader_hint), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status NotLeader(uint32_t hint, std::string m = "not leader") {
    return {StatusCode::kNotLeader, std::move(m), hint};
  }
  static Status Throttled(std::string m) { return {StatusCode::kThrottled, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The replica id the caller should try instead; 0 when unknown.
  uint32_t leader_hint() const { return leader_hint_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  uint32_t leader_hint_ = 0;
  std::string message_;
};

}  // namespace tessera
