// How a KV workload records the outcome of a write that did not succeed
// (the Jepsen convention, history.h): kFail only when the answer
// guarantees that nothing happened, kInfo (unknown) otherwise.
//
// Thread safety: pure functions.
#pragma once

#include "experiment/history.h"
#include "tessera/kv_client.h"

namespace tessera::experiment {

// Answers that guarantee a write had no effect: refused before it was
// proposed, or a condition that did not hold. A timeout, a lost
// connection, Unavailable or Aborted may still take effect.
inline bool CertainlyNoEffect(KvCode code) {
  switch (code) {
    case KvCode::kThrottled:
    case KvCode::kInvalidArgument:
    case KvCode::kNotFound:
    case KvCode::kUnauthenticated:
    case KvCode::kPermissionDenied:
    case KvCode::kThroughputExceeded:
    case KvCode::kConflict:
      return true;
    default:
      return false;
  }
}

inline void SetWriteOutcome(OpRecord& op, const KvStatus& status) {
  op.outcome = CertainlyNoEffect(status.code()) ? OpOutcome::kFail : OpOutcome::kInfo;
  op.error = status.ToString();
}

}  // namespace tessera::experiment
