// LogAgreement: agreement per slot and per request id, checked on what the
// replicas' disks hold. Each observation is one replica's durable log as a
// restart would recover it (consensus::RecoveredState); its applied
// entries (log_start <= slot <= applied_index) are chosen, so:
//   1. no two observations (of any replicas, at any instants) hold
//      different entries at the same applied slot (type, command,
//      membership, proposer and request id; the ballot may differ, as a
//      later leader re-proposes a slot under its own);
//   2. a proposal (proposer, request id) is applied at one slot at most:
//      a host proposes each request id once, so a second slot with it is a
//      command applied twice.
// The first violation is kept; later observations add nothing.
//
// Thread safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "consensus/replica.h"

namespace tessera::sim {

class LogAgreement {
 public:
  // Records the applied entries of `state`, the durable log of `replica`.
  // Returns the first violation seen so far (empty: none).
  const std::string& Observe(uint32_t replica, const consensus::RecoveredState& state);
  const std::string& violation() const { return violation_; }
  // Applied slots seen on some replica, and observations made.
  size_t slots() const { return by_slot_.size(); }
  uint64_t observations() const { return observations_; }

 private:
  struct Seen {
    std::string fingerprint;
    uint32_t replica = 0;  // the first to hold it
  };
  std::map<uint64_t, Seen> by_slot_;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> slot_of_request_;  // (proposer, id) -> slot
  uint64_t observations_ = 0;
  std::string violation_;
};

}  // namespace tessera::sim
