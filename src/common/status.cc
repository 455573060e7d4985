#include "common/status.h"

namespace tessera {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kNotLeader: return "NotLeader";
    case StatusCode::kThrottled: return "Throttled";
    case StatusCode::kStaleEpoch: return "StaleEpoch";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kTimeout: return "Timeout";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kConflict: return "Conflict";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kAborted: return "Aborted";
    case StatusCode::kPermissionDenied: return "PermissionDenied";
    case StatusCode::kThroughputExceeded: return "ThroughputExceeded";
    case StatusCode::kWrongPartition: return "WrongPartition";
  }
  return "Unknown";
}

std::string_view SendOutcomeName(SendOutcome outcome) {
  switch (outcome) {
    case SendOutcome::kUnstated: return "unstated";
    case SendOutcome::kNotSent: return "not_sent";
    case SendOutcome::kSentOutcomeUnknown: return "sent_outcome_unknown";
    case SendOutcome::kAnswered: return "answered";
  }
  return "unknown";
}

std::string Status::ToString() const {
  std::string out(StatusCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  if (code_ == StatusCode::kNotLeader && leader_hint_ != 0) {
    out += " (leader hint " + std::to_string(leader_hint_) + ")";
  }
  return out;
}

}  // namespace tessera
