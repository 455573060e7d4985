#include "consensus/options.h"

namespace tessera::consensus {

std::string Options::Validate() const {
  if (self == 0) return "self must be a non-zero replica id";
  if (tick_interval_us == 0) return "tick_interval_us must be positive";
  if (heartbeat_interval_us < tick_interval_us) return "heartbeat_interval_us < tick_interval_us";
  if (max_clock_drift_ppm >= 200'000) return "max_clock_drift_ppm must be below 20%";
  if (lease_duration_us < 4 * heartbeat_interval_us) {
    return "lease_duration_us must cover at least 4 heartbeats";
  }
  if (LeaderLeaseUs() < 2 * heartbeat_interval_us) {
    return "leader lease (after drift and tick margins) must cover 2 heartbeats";
  }
  if (election_timeout_min_us < lease_duration_us + heartbeat_interval_us) {
    return "election_timeout_min_us must be >= lease_duration_us + heartbeat_interval_us";
  }
  if (election_timeout_max_us <= election_timeout_min_us) {
    return "election_timeout_max_us must exceed election_timeout_min_us";
  }
  if (check_quorum_timeout_us > election_timeout_min_us ||
      check_quorum_timeout_us < 2 * heartbeat_interval_us) {
    return "check_quorum_timeout_us must lie in [2 heartbeats, election_timeout_min_us]";
  }
  return "";
}

TimeUs Options::LeaderLeaseUs() const {
  // Followers wait L on their clock from receipt; the leader counts from the
  // (earlier) send time on its clock. With rates within (1 +- rho) of each
  // other, L * (1 - rho) / (1 + rho) of leader time never outlasts the
  // followers' wait. One tick more covers a host whose `now` lags by a tick.
  const double rho = max_clock_drift_ppm / 1e6;
  const double scaled = static_cast<double>(lease_duration_us) * (1.0 - rho) / (1.0 + rho);
  const TimeUs lease = static_cast<TimeUs>(scaled);
  return lease > tick_interval_us ? lease - tick_interval_us : 0;
}

}  // namespace tessera::consensus
