// The invariants: agreement, durability, linearizability, lease safety,
// liveness (simulator.h states each).
#include <algorithm>

#include "sim/simulation.h"

namespace tessera::sim {

namespace {

// Search budget per key for the linearizability checker; histories here hold
// at most a few hundred ops per key.
constexpr uint64_t kLinearizabilityStepBudget = 2'000'000;

}  // namespace

void Simulation::CheckAgreement(ReplicaHost& host, const pb::Entry& entry,
                                const std::string& description) {
  std::string fingerprint = EntryFingerprint(entry);
  std::optional<uint64_t> state_hash;  // a log replica holds no state to compare
  if (!host.log_only) state_hash = host.kv.DataHash();
  auto [it, inserted] = chosen_.try_emplace(entry.slot());
  ChosenSlot& chosen = it->second;
  if (inserted) {
    if (entry.type() == pb::ENTRY_MEMBERSHIP && entry.slot() > chosen_membership_slot_) {
      chosen_membership_ = entry.membership();
      chosen_membership_slot_ = entry.slot();
    }
    const uint64_t request_id = entry.type() == pb::ENTRY_COMMAND ? entry.request_id() : 0;
    chosen = ChosenSlot{std::move(fingerprint), request_id, state_hash, host.id, description};
    ++result_.stats.commits;
    return;
  }
  if (chosen.fingerprint != fingerprint) {
    Violate(Invariant::kAgreement,
            "slot " + std::to_string(entry.slot()) + " chosen twice: " + Who(chosen.first_replica) +
                " applied " + chosen.description + ", " + Who(host.id) + " applied " + description);
  } else if (!chosen.state_hash) {
    chosen.state_hash = state_hash;  // the first replica with state to apply it
    chosen.first_replica = host.id;
  } else if (state_hash && *chosen.state_hash != *state_hash) {
    Violate(Invariant::kAgreement, "state after slot " + std::to_string(entry.slot()) +
                                       " differs between " + Who(chosen.first_replica) + " and " +
                                       Who(host.id));
  }
}

void Simulation::CheckSnapshotAgreement(ReplicaHost& host, const KvState& snapshot) {
  const Slot last = snapshot.applied_index();
  auto at_last = chosen_.find(last);
  if (at_last != chosen_.end() && at_last->second.state_hash &&
      *at_last->second.state_hash != snapshot.DataHash()) {
    Violate(Invariant::kAgreement, Who(host.id) + " got a snapshot at slot " +
                                       std::to_string(last) + " whose state differs from " +
                                       Who(at_last->second.first_replica) + "'s");
    return;
  }
  // Every command slot the snapshot covers must carry the chosen request id.
  for (auto it = chosen_.upper_bound(host.kv.applied_index()); it != chosen_.end() && it->first <= last;
       ++it) {
    const SlotResult* result = snapshot.ResultAt(it->first);
    const uint64_t snapshot_request = result == nullptr ? 0 : result->request_id;
    if (snapshot_request != it->second.request_id) {
      Violate(Invariant::kAgreement,
              "snapshot for " + Who(host.id) + " has rid " + FormatRequestId(snapshot_request) +
                  " at slot " + std::to_string(it->first) + " where " +
                  Who(it->second.first_replica) + " applied " + it->second.description);
      return;
    }
  }
  for (const auto& [slot, acked] : acked_) {
    if (slot <= host.kv.applied_index() || slot > last) continue;
    const SlotResult* result = snapshot.ResultAt(slot);
    if (result == nullptr || result->request_id != acked.request_id) {
      CheckAckedSlot(host, slot, result == nullptr ? 0 : result->request_id);
      return;
    }
  }
}

void Simulation::CheckAckedSlot(ReplicaHost& host, Slot slot, uint64_t request_id) {
  auto it = acked_.find(slot);
  if (it == acked_.end() || it->second.request_id == request_id) return;
  Violate(Invariant::kDurability,
          "write rid " + FormatRequestId(it->second.request_id) + " acknowledged to c" +
              std::to_string(it->second.client) + " at " + FormatTime(it->second.at) +
              " in slot " + std::to_string(slot) + ", but " + Who(host.id) + " has " +
              (request_id == 0 ? std::string("no command") : "rid " + FormatRequestId(request_id)) +
              " there");
}

// A lease can only start at an event, so checking after every event covers
// every instant.
void Simulation::CheckLeases() {
  ReplicaId holder = 0;
  for (const auto& host : hosts_) {
    if (!host->up() || !host->replica->HoldsLease(LocalNow(*host))) continue;
    if (holder != 0) {
      Violate(Invariant::kLeaseSafety,
              Who(holder) + " (ballot " + FormatBallot(Host(holder).replica->promised()) + ") and " +
                  Who(host->id) + " (ballot " + FormatBallot(host->replica->promised()) +
                  ") both hold a lease at " + FormatTime(now_));
      return;
    }
    holder = host->id;
  }
}

// Done once a write invoked after heal was acknowledged and every replica
// applied every acknowledged write.
void Simulation::CheckHealProgress() {
  if (!post_heal_write_) return;
  const Slot needed = acked_.empty() ? 0 : acked_.rbegin()->first;
  for (const auto& host : hosts_) {
    if (!IsFinalMember(host->id)) continue;
    if (!host->up() || host->kv.applied_index() < needed) return;
  }
  if (plan_.replica_losses > 0) {
    if (!MembershipNotConverged().empty()) return;
    for (uint32_t id : chosen_membership_.voters()) {
      result_.stats.replicas_replaced += id > config_.replicas;
    }
  }
  done_ = true;
}

void Simulation::OnLivenessDeadline() {
  if (done_) return;
  const Slot needed = acked_.empty() ? 0 : acked_.rbegin()->first;
  std::string lagging;
  for (const auto& host : hosts_) {
    if (!IsFinalMember(host->id)) continue;
    lagging += " " + Who(host->id) + ":" +
               (host->up() ? std::string(consensus::RoleName(host->replica->role())) + "/applied=" +
                                 std::to_string(host->kv.applied_index())
                           : std::string("down"));
  }
  Violate(Invariant::kLiveness,
          std::string(post_heal_write_ ? "replicas did not catch up to slot " + std::to_string(needed)
                                       : "no client write committed") +
              (plan_.replica_losses > 0 && !MembershipNotConverged().empty()
                   ? " or the autoadmin did not restore the group (" + MembershipNotConverged() + ")"
                   : std::string()) +
              " within " + FormatTime(plan_.liveness_bound_us) + " of heal (leader " +
              (CurrentLeader() == 0 ? std::string("none") : Who(CurrentLeader())) + ";" + lagging +
              ")");
}

void Simulation::CheckFinal() {
  CheckDurabilityAtEnd();
  if (result_.ok) CheckLinearizability();
}

void Simulation::CheckDurabilityAtEnd() {
  for (const auto& [slot, acked] : acked_) {
    for (const auto& host : hosts_) {
      if (!IsFinalMember(host->id)) continue;
      const SlotResult* result = host->kv.ResultAt(slot);
      CheckAckedSlot(*host, slot, result == nullptr ? 0 : result->request_id);
      if (!result_.ok) return;
    }
  }
}

void Simulation::CheckLinearizability() {
  std::vector<chaos::KvOperation> history;
  for (size_t i = 0; i < history_.size(); ++i) {
    if (!history_discarded_[i]) history.push_back(history_[i]);
  }
  result_.stats.history_ops = history.size();
  const chaos::CheckResult check = chaos::CheckKvHistory(history, kLinearizabilityStepBudget);
  if (check.inconclusive) {
    Violate(Invariant::kLinearizabilityInconclusive,
            "search budget exhausted on key " + check.key + " (" +
                std::to_string(history.size()) + " ops); cannot tell");
  } else if (!check.linearizable) {
    Violate(Invariant::kLinearizability,
            "key " + check.key + " (history times are virtual us * " +
                std::to_string(kHistoryStepsPerUs) + "): " + check.explanation);
  }
}

}  // namespace tessera::sim
