// Test helpers for GroupHost-level tests (group_host_test.cc,
// snapshot_transfer_test.cc): consensus timings fast enough for tests and
// an in-process message router with per-replica faults.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "node/group_host.h"

namespace tessera::node::testing {

// About ten times faster than production: elections in 250..500 ms.
inline consensus::Options FastOptions(consensus::ReplicaId self, uint64_t group_id, uint64_t seed) {
  consensus::Options o;
  o.self = self;
  o.group_id = group_id;
  o.random_seed = seed;
  o.tick_interval_us = 2'000;
  o.heartbeat_interval_us = 20'000;
  o.lease_duration_us = 200'000;
  o.election_timeout_min_us = 250'000;
  o.election_timeout_max_us = 500'000;
  o.check_quorum_timeout_us = 250'000;
  return o;
}

// Routes messages to the host registered under `to`. A "down" replica
// neither sends nor receives; a "muted" one receives, but everything it
// sends is lost.
class LoopbackSender : public MessageSender {
 public:
  void Send(pb::Message m) override {
    std::shared_ptr<GroupHost> target;
    {
      std::lock_guard lock(mu_);
      if (down_.count(m.to()) || down_.count(m.from()) || muted_.count(m.from())) return;
      auto it = hosts_.find(m.to());
      if (it == hosts_.end()) return;
      target = it->second;
    }
    target->Deliver(std::move(m));
  }
  void Register(consensus::ReplicaId id, std::shared_ptr<GroupHost> host) {
    std::lock_guard lock(mu_);
    hosts_[id] = std::move(host);
  }
  void SetDown(consensus::ReplicaId id, bool down) {
    std::lock_guard lock(mu_);
    if (down) {
      down_.insert(id);
    } else {
      down_.erase(id);
    }
  }
  void SetMuted(consensus::ReplicaId id, bool muted) {
    std::lock_guard lock(mu_);
    if (muted) {
      muted_.insert(id);
    } else {
      muted_.erase(id);
    }
  }
  void Clear() {
    std::lock_guard lock(mu_);
    hosts_.clear();
  }

 private:
  std::mutex mu_;
  std::map<consensus::ReplicaId, std::shared_ptr<GroupHost>> hosts_;
  std::set<consensus::ReplicaId> down_, muted_;
};

}  // namespace tessera::node::testing
