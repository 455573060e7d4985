#include "sim/sim_disk.h"

#include <utility>

namespace tessera::sim {

SimDisk::SimDisk(const pb::Membership& bootstrap_membership) {
  image_.log_base.set_log_start(1);
  *image_.log_base.mutable_base_membership() = bootstrap_membership;
}

uint64_t SimDisk::Append(DiskWrite write) {
  pending_.emplace_back(++appended_, std::move(write));
  return appended_;
}

void SimDisk::SyncUpTo(uint64_t upto) {
  while (!pending_.empty() && pending_.front().first <= upto) {
    ApplyDurable(pending_.front().second);
    durable_ = pending_.front().first;
    pending_.pop_front();
  }
}

void SimDisk::Crash(size_t keep) {
  for (size_t i = 0; i < keep && !pending_.empty(); ++i) {
    ApplyDurable(pending_.front().second);
    durable_ = pending_.front().first;
    pending_.pop_front();
  }
  // Positions are never reused, so a sync still scheduled for the lost
  // writes finds nothing to do.
  pending_.clear();
}

void SimDisk::ApplyDurable(const DiskWrite& write) {
  if (write.hard_state) image_.hard_state = *write.hard_state;
  if (write.truncate_from) {
    image_.log.erase(image_.log.lower_bound(*write.truncate_from), image_.log.end());
  }
  for (const pb::Entry& entry : write.entries) image_.log[entry.slot()] = entry;
  if (write.log_base) {
    image_.log_base = *write.log_base;
    image_.log.erase(image_.log.begin(), image_.log.lower_bound(write.log_base->log_start()));
  }
  if (write.kv_replace) image_.kv = *write.kv_replace;
  if (write.kv_delta) image_.kv.MergeDelta(*write.kv_delta);
}

Result<consensus::RecoveredState> SimDisk::Recover() const {
  consensus::RecoveredState state;
  state.hard_state = image_.hard_state;
  state.log_base = image_.log_base;
  state.applied_index = image_.kv.applied_index();
  const Slot log_start = image_.log_base.log_start() == 0 ? 1 : image_.log_base.log_start();
  if (state.applied_index + 1 < log_start) {
    return Status::Corruption("durable applied index " + std::to_string(state.applied_index) +
                              " is below log start " + std::to_string(log_start));
  }
  Slot expected = log_start;
  for (const auto& [slot, entry] : image_.log) {
    if (slot != expected) {
      return Status::Corruption("durable log has a gap: slot " + std::to_string(slot) +
                                " follows " + std::to_string(expected - 1));
    }
    state.entries.push_back(entry);
    ++expected;
  }
  return state;
}

}  // namespace tessera::sim
