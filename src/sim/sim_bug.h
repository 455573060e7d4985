// The host bugs the simulator can plant (docs/decisions.md D115), to show
// that its checkers catch them: `tessera sim --bug NAME`, and the tests
// that run each bug until a checker fails. HostSeedConfig::bug says how
// each is planted on the production host.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tessera::sim {

enum class SimBug {
  kNone,
  // The host acknowledges a write once its own copy of the entry is
  // durable, without waiting for the entry to be chosen.
  kAckBeforeQuorum,
  // Syncs of the write-ahead log make nothing durable, so a crash loses
  // promised or accepted state.
  kSkipFsync,
  // Clocks run far outside Options::max_clock_drift_ppm.
  kLeaseIgnoreDrift,
  // Gets are served from the asked replica's applied state, without a lease.
  kStaleRead,
  // S3 clients resend operations whose outcome is unknown (and some whose
  // answer they pretend was lost), as a router retrying blindly would.
  kS3RetryUnknown,
};
const char* SimBugName(SimBug bug);  // "none", "ack-before-quorum", ...
std::optional<SimBug> SimBugFromName(std::string_view name);
std::vector<SimBug> AllSimBugs();  // every bug except kNone

}  // namespace tessera::sim
