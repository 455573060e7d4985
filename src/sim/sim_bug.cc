#include "sim/sim_bug.h"

namespace tessera::sim {

const char* SimBugName(SimBug bug) {
  switch (bug) {
    case SimBug::kNone: return "none";
    case SimBug::kAckBeforeQuorum: return "ack-before-quorum";
    case SimBug::kSkipFsync: return "skip-fsync";
    case SimBug::kLeaseIgnoreDrift: return "lease-ignore-drift";
    case SimBug::kStaleRead: return "stale-read";
    case SimBug::kS3RetryUnknown: return "s3-retry-unknown";
  }
  return "?";
}

std::optional<SimBug> SimBugFromName(std::string_view name) {
  for (SimBug bug : {SimBug::kNone, SimBug::kAckBeforeQuorum, SimBug::kSkipFsync,
                     SimBug::kLeaseIgnoreDrift, SimBug::kStaleRead, SimBug::kS3RetryUnknown}) {
    if (name == SimBugName(bug)) return bug;
  }
  return std::nullopt;
}

std::vector<SimBug> AllSimBugs() {
  return {SimBug::kAckBeforeQuorum, SimBug::kSkipFsync, SimBug::kLeaseIgnoreDrift,
          SimBug::kStaleRead, SimBug::kS3RetryUnknown};
}

}  // namespace tessera::sim
