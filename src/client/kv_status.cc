// KvCode names and KvStatus text (include/tessera/kv_client.h).
#include "tessera/kv_client.h"

namespace tessera {

const char* KvCodeName(KvCode code) {
  switch (code) {
    case KvCode::kOk: return "OK";
    case KvCode::kNotFound: return "NotFound";
    case KvCode::kNotLeader: return "NotLeader";
    case KvCode::kThrottled: return "Throttled";
    case KvCode::kStaleEpoch: return "StaleEpoch";
    case KvCode::kCorruption: return "Corruption";
    case KvCode::kIOError: return "IOError";
    case KvCode::kTimeout: return "Timeout";
    case KvCode::kInvalidArgument: return "InvalidArgument";
    case KvCode::kConflict: return "Conflict";
    case KvCode::kUnavailable: return "Unavailable";
    case KvCode::kAborted: return "Aborted";
    case KvCode::kUnauthenticated: return "Unauthenticated";
    case KvCode::kPermissionDenied: return "PermissionDenied";
    case KvCode::kThroughputExceeded: return "ThroughputExceeded";
  }
  return "Unknown";
}

std::string KvStatus::ToString() const {
  if (ok()) return "OK";
  return std::string(KvCodeName(code_)) + ": " + message_;
}

}  // namespace tessera
