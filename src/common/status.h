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
  // The table's capacity (its partition's share or the node's budget) is
  // used up: answered, not applied; the client backs off and retries
  // (docs/admission.md). Not a sign the node is unwell: nothing retries it
  // on another replica.
  kThroughputExceeded,
  // The key (or an object's prefix) lies outside the range of the group
  // asked: the partition split (docs/partition-splits.md) and the caller's
  // route is stale. Answered before anything was proposed or read, so the
  // router re-resolves the key and resends; a client never sees it.
  kWrongPartition,
};

// The number of StatusCode values (the last one plus one).
inline constexpr size_t kStatusCodeCount = static_cast<size_t>(StatusCode::kWrongPartition) + 1;

// What a failed remote call's transport knows about whether its request
// reached the peer. Set by the rpc layer where the fact is known
// (rpc/channel.h, contract 3) and read by whoever decides whether a
// request that changes state may be sent again (router/kv_router.h): that
// decision reads this value, never the message text.
//
// kUnstated is what every other status carries, including one rebuilt from
// another's code and message: it must be read as "may have been sent", so
// that losing the fact can only make a caller more careful, never resend a
// request that was delivered.
enum class SendOutcome : uint8_t {
  kUnstated = 0,        // not a transport's verdict: the request may have been sent
  kNotSent,             // the request provably never left this process
  kSentOutcomeUnknown,  // it may have been written, and no answer came
  kAnswered,            // the peer answered: this status is its answer
};

std::string_view SendOutcomeName(SendOutcome outcome);

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
  static Status ThroughputExceeded(std::string m) {
    return {StatusCode::kThroughputExceeded, std::move(m)};
  }
  static Status WrongPartition(std::string m) { return {StatusCode::kWrongPartition, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The replica id the caller should try instead; 0 when unknown.
  uint32_t leader_hint() const { return leader_hint_; }
  // Whether a failed call's request reached the peer (see SendOutcome).
  // Copies and moves keep it; an OK status is always kUnstated.
  SendOutcome send_outcome() const { return send_outcome_; }
  // This status, stating `outcome`; an OK status stays as it is.
  Status WithSendOutcome(SendOutcome outcome) && {
    if (!ok()) send_outcome_ = outcome;
    return std::move(*this);
  }
  Status WithSendOutcome(SendOutcome outcome) const& { return Status(*this).WithSendOutcome(outcome); }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  SendOutcome send_outcome_ = SendOutcome::kUnstated;
  uint32_t leader_hint_ = 0;
  std::string message_;
};

}  // namespace tessera
