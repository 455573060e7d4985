#include "sim/ready_contract.h"

namespace tessera::sim {

const std::string& ReadyContract::Check(const consensus::Ready& ready) {
  ++batches_;
  if (!violation_.empty()) return violation_;
  std::string violation = CheckPersist(ready);
  if (violation.empty()) violation = CheckApply(ready);
  if (violation.empty()) violation = CheckMessages(ready);
  if (!violation.empty()) {
    violation_ = "contract: replica " + std::to_string(self_) + " Ready " +
                 std::to_string(batches_) + ": " + violation;
  }
  return violation_;
}

std::string ReadyContract::CheckPersist(const consensus::Ready& ready) {
  // A persist_seq without writes is allowed: replies that must wait for
  // earlier Readies' writes ride on it.
  const bool writes = ready.hard_state || ready.truncate_from || !ready.entries.empty();
  if (writes && ready.persist_seq == 0) return "a write without a persist_seq";
  if (ready.persist_seq != 0) {
    if (ready.persist_seq <= last_persist_seq_) {
      return "persist_seq " + std::to_string(ready.persist_seq) + " after " +
             std::to_string(last_persist_seq_);
    }
    last_persist_seq_ = ready.persist_seq;
  }
  for (size_t i = 1; i < ready.entries.size(); ++i) {
    if (ready.entries[i].slot() != ready.entries[i - 1].slot() + 1) {
      return "entries to write jump from slot " + std::to_string(ready.entries[i - 1].slot()) +
             " to " + std::to_string(ready.entries[i].slot());
    }
  }
  if (ready.hard_state) {
    const pb::Ballot& b = ready.hard_state->promised();
    if (b.round() < promised_round_ ||
        (b.round() == promised_round_ && b.replica() < promised_replica_)) {
      return "promised ballot " + std::to_string(b.round()) + "." + std::to_string(b.replica()) +
             " below " + std::to_string(promised_round_) + "." +
             std::to_string(promised_replica_);
    }
    promised_round_ = b.round();
    promised_replica_ = b.replica();
  }
  return "";
}

std::string ReadyContract::CheckApply(const consensus::Ready& ready) {
  for (const pb::Entry& entry : ready.committed) {
    if (last_committed_ != 0 && entry.slot() != last_committed_ + 1) {
      return "committed slot " + std::to_string(entry.slot()) + " after " +
             std::to_string(last_committed_);
    }
    last_committed_ = entry.slot();
  }
  if (ready.snapshot_to_install) {
    const uint64_t last_slot = ready.snapshot_to_install->meta().last_slot();
    if (last_slot < last_committed_) {
      return "snapshot to install at slot " + std::to_string(last_slot) +
             " behind committed slot " + std::to_string(last_committed_);
    }
    last_committed_ = last_slot;
  }
  return "";
}

std::string ReadyContract::CheckMessages(const consensus::Ready& ready) const {
  for (const auto* list : {&ready.messages, &ready.messages_after_persist}) {
    for (const pb::Message& m : *list) {
      if (m.to() == 0 || m.to() == self_) {
        return "a message addressed to " + std::to_string(m.to());
      }
    }
  }
  return "";
}

}  // namespace tessera::sim
