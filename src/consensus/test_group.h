// TestGroup: a test-only host for a few Replicas with instant, in-order
// delivery and synchronous persistence, for unit tests that drive exact
// message sequences. Messages can be intercepted (held, dropped, inspected)
// before delivery. Not for production use.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "consensus/replica.h"

namespace tessera::consensus::testing {

inline pb::Membership Voters(std::vector<ReplicaId> ids) {
  pb::Membership m;
  for (ReplicaId id : ids) m.add_voters(id);
  return m;
}

inline Options TestOptions(ReplicaId self) {
  Options o;
  o.self = self;
  o.group_id = 7;
  o.random_seed = 42;
  o.tick_interval_us = 1'000;
  o.heartbeat_interval_us = 10'000;
  o.lease_duration_us = 100'000;
  o.election_timeout_min_us = 150'000;
  o.election_timeout_max_us = 300'000;
  o.check_quorum_timeout_us = 150'000;
  o.max_clock_drift_ppm = 10'000;
  return o;
}

struct TestNode {
  std::unique_ptr<Replica> replica;
  std::vector<pb::Entry> applied;  // committed entries, in order
  std::map<Slot, pb::Entry> durable_log;
  pb::HardState durable_hard_state;
  pb::LogBase durable_log_base;
  bool up = true;
};

class TestGroup {
 public:
  // Replicas 1..n, all voters, bootstrapped at time 0.
  explicit TestGroup(int n) {
    for (int i = 1; i <= n; ++i) {
      RecoveredState rs;
      rs.log_base.set_log_start(1);
      *rs.log_base.mutable_base_membership() = Voters(Ids(n));
      nodes_[i].durable_log_base = rs.log_base;
      nodes_[i].replica = std::make_unique<Replica>(TestOptions(i), rs, now_);
    }
  }

  static std::vector<ReplicaId> Ids(int n) {
    std::vector<ReplicaId> ids;
    for (int i = 1; i <= n; ++i) ids.push_back(i);
    return ids;
  }

  Replica& r(ReplicaId id) { return *nodes_.at(id).replica; }
  TestNode& node(ReplicaId id) { return nodes_.at(id); }
  TimeUs now() const { return now_; }

  // Return false from the filter to drop a message.
  void SetFilter(std::function<bool(const pb::Message&)> filter) { filter_ = std::move(filter); }
  std::vector<pb::Message>& sent() { return sent_; }

  // Drains every Ready (persisting synchronously) and delivers messages until
  // nothing moves.
  void Settle(int max_rounds = 10'000) {
    for (int round = 0; round < max_rounds; ++round) {
      bool moved = false;
      for (auto& [id, n] : nodes_) moved |= Drain(id);
      if (inbox_.empty() && !moved) return;
      std::deque<pb::Message> batch;
      batch.swap(inbox_);
      for (const pb::Message& m : batch) {
        TestNode& n = nodes_.at(m.to());
        if (n.up) n.replica->Step(now_, m);
      }
    }
  }

  void Advance(TimeUs delta_us) {
    const TimeUs end = now_ + delta_us;
    while (now_ < end) {
      now_ = std::min(end, now_ + 1'000);
      for (auto& [id, n] : nodes_) {
        if (n.up) n.replica->Tick(now_);
      }
      Settle();
    }
  }

  // Advances time until some replica leads; returns its id (0 on failure).
  ReplicaId ElectLeader(TimeUs limit_us = 5'000'000) {
    for (TimeUs waited = 0; waited < limit_us; waited += 1'000) {
      for (auto& [id, n] : nodes_) {
        if (n.up && n.replica->role() == Role::kLeader) return id;
      }
      Advance(1'000);
    }
    return 0;
  }

  // Adds replica `id`, in no membership yet, bootstrapped at the current time
  // with `base` as the membership in force before slot 1 (the host of a new
  // learner would do this before the leader proposes adding it).
  void AddReplica(ReplicaId id, const pb::Membership& base) {
    RecoveredState rs;
    rs.log_base.set_log_start(1);
    *rs.log_base.mutable_base_membership() = base;
    TestNode& n = nodes_[id];
    n.durable_log_base = rs.log_base;
    n.replica = std::make_unique<Replica>(TestOptions(id), rs, now_);
  }

  // Compacts `id`'s log through `upto` (at most its applied slot) and makes
  // the compaction durable, as its host would.
  void Compact(ReplicaId id, Slot upto) {
    TestNode& n = nodes_.at(id);
    if (upto < n.replica->log_start()) return;
    n.replica->CompactLog(upto);
    n.durable_log.erase(n.durable_log.begin(), n.durable_log.upper_bound(upto));
    n.durable_log_base.set_log_start(upto + 1);
    *n.durable_log_base.mutable_base_membership() = n.replica->MembershipAt(upto);
  }

  // Restarts `id` from its durable state (unsynced state is lost by design:
  // this host persists synchronously, so nothing is).
  void Restart(ReplicaId id) {
    TestNode& n = nodes_.at(id);
    RecoveredState rs;
    rs.hard_state = n.durable_hard_state;
    rs.log_base = n.durable_log_base;
    for (auto& [slot, e] : n.durable_log) rs.entries.push_back(e);
    rs.applied_index = n.applied.empty() ? rs.log_base.log_start() - 1 : n.applied.back().slot();
    n.replica = std::make_unique<Replica>(TestOptions(id), rs, now_);
    n.up = true;
  }

 private:
  bool Drain(ReplicaId id) {
    TestNode& n = nodes_.at(id);
    if (!n.up || !n.replica->HasReady()) return false;
    Ready rd = n.replica->TakeReady();
    if (rd.hard_state) n.durable_hard_state = *rd.hard_state;
    if (rd.truncate_from) n.durable_log.erase(n.durable_log.lower_bound(*rd.truncate_from), n.durable_log.end());
    for (const pb::Entry& e : rd.entries) n.durable_log[e.slot()] = e;
    for (auto& m : rd.messages) Post(m);
    if (rd.persist_seq != 0) n.replica->OnPersisted(rd.persist_seq);
    for (auto& m : rd.messages_after_persist) Post(m);
    for (const pb::Entry& e : rd.committed) n.applied.push_back(e);
    for (ReplicaId to : rd.snapshot_requests) {
      const Slot at = n.applied.empty() ? 0 : n.applied.back().slot();
      n.replica->SendSnapshot(now_, to, at, "snapshot@" + std::to_string(at));
    }
    if (rd.snapshot_to_install) {
      const pb::SnapshotMeta& meta = rd.snapshot_to_install->meta();
      // Slots above the snapshot are accepted values: kept (ready.h step 6).
      n.durable_log.erase(n.durable_log.begin(), n.durable_log.upper_bound(meta.last_slot()));
      n.durable_log_base.set_log_start(meta.last_slot() + 1);
      *n.durable_log_base.mutable_base_membership() = meta.membership();
      n.applied.clear();
      pb::Entry marker;  // stands for the installed state in `applied`
      marker.set_slot(meta.last_slot());
      marker.set_command(rd.snapshot_to_install->data());
      n.applied.push_back(marker);
      n.replica->OnSnapshotInstalled(now_, meta);
    }
    return true;
  }

  void Post(const pb::Message& m) {
    sent_.push_back(m);
    if (filter_ && !filter_(m)) return;
    inbox_.push_back(m);
  }

  TimeUs now_ = 0;
  std::map<ReplicaId, TestNode> nodes_;
  std::deque<pb::Message> inbox_;
  std::vector<pb::Message> sent_;
  std::function<bool(const pb::Message&)> filter_;
};

}  // namespace tessera::consensus::testing
