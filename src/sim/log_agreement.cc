#include "sim/log_agreement.h"

namespace tessera::sim {
namespace {

// What must agree between two copies of a chosen slot: everything but the
// ballot it was accepted under.
std::string Fingerprint(const pb::Entry& entry) {
  pb::Entry copy = entry;
  copy.clear_ballot();
  return copy.SerializeAsString();
}

std::string Describe(const pb::Entry& entry) {
  return "type=" + std::to_string(entry.type()) + " proposer=" + std::to_string(entry.proposer()) +
         " request_id=" + std::to_string(entry.request_id()) +
         " command_bytes=" + std::to_string(entry.command().size());
}

}  // namespace

const std::string& LogAgreement::Observe(uint32_t replica,
                                         const consensus::RecoveredState& state) {
  ++observations_;
  if (!violation_.empty()) return violation_;
  for (const pb::Entry& entry : state.entries) {
    if (entry.slot() > state.applied_index) break;  // entries ascend from log_start
    const uint64_t slot = entry.slot();
    std::string fingerprint = Fingerprint(entry);
    auto [it, inserted] = by_slot_.try_emplace(slot, Seen{fingerprint, replica});
    if (!inserted) {
      if (it->second.fingerprint != fingerprint) {
        violation_ = "agreement: slot " + std::to_string(slot) + " applied with different " +
                     "entries on replicas " + std::to_string(it->second.replica) + " and " +
                     std::to_string(replica) + " (the latter: " + Describe(entry) + ")";
        return violation_;
      }
      continue;
    }
    const bool proposal =
        entry.type() == pb::ENTRY_COMMAND || entry.type() == pb::ENTRY_MEMBERSHIP;
    if (!proposal || entry.request_id() == 0) continue;
    const auto [req, fresh] =
        slot_of_request_.try_emplace({entry.proposer(), entry.request_id()}, slot);
    if (!fresh && req->second != slot) {
      violation_ = "agreement: request " + std::to_string(entry.request_id()) + " of proposer " +
                   std::to_string(entry.proposer()) + " applied at slots " +
                   std::to_string(req->second) + " and " + std::to_string(slot);
      return violation_;
    }
  }
  return violation_;
}

}  // namespace tessera::sim
