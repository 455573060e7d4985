// Tunables of one Multi-Paxos replica. Every timeout derives from the lease
// (the failover budget) in the table below; Validate() enforces the relations.
//
//   lease_duration_us          L     followers refuse promises for L after
//                                    hearing a leader (their clock)
//   leader lease (derived)     L' =  L * (1 - drift) / (1 + drift) - tick
//                                    the leader's own view, from send time
//   heartbeat_interval_us      H     << L: several heartbeats per lease
//   election_timeout_min_us    E     >= L + H: an election can only start
//                                    after every lease it could break expired
//   election_timeout_max_us    E2    > E, randomised in [E, E2) per replica
//   check_quorum_timeout_us    Q     leader steps down when no quorum heard
//                                    within Q (Q <= E: step down before the
//                                    followers elect another)
#pragma once

#include <cstdint>
#include <string>

namespace tessera::consensus {

using TimeUs = uint64_t;  // host-supplied monotonic time, microseconds
using ReplicaId = uint32_t;
using Slot = uint64_t;

struct Options {
  ReplicaId self = 0;
  uint64_t group_id = 0;
  uint64_t random_seed = 1;  // election jitter; the core owns no randomness

  // Defaults sized for a leader failover well under a second on a LAN or
  // loopback (fsync ~0.2 ms, RTT ~0.1 ms): after a leader dies, a new one
  // is elected between E and E2 after its last heartbeat.
  TimeUs tick_interval_us = 10'000;  // the host ticks at least this often
  TimeUs heartbeat_interval_us = 40'000;
  TimeUs lease_duration_us = 400'000;
  TimeUs election_timeout_min_us = 450'000;
  TimeUs election_timeout_max_us = 800'000;
  TimeUs check_quorum_timeout_us = 450'000;
  // Bound on relative clock-rate difference between any two replicas, in
  // parts per million. Leases stay safe while real drift stays within it.
  uint32_t max_clock_drift_ppm = 10'000;

  // Returns an empty string when consistent, else what is wrong.
  std::string Validate() const;
  // The leader's lease length measured on its own clock from a quorum-acked
  // send time (L' in the table above).
  TimeUs LeaderLeaseUs() const;
};

}  // namespace tessera::consensus
