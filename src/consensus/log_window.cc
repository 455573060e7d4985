#include "consensus/log_window.h"

#include <algorithm>

#include "common/check.h"

namespace tessera::consensus {

LogWindow::LogWindow(Slot log_start, pb::Membership base_membership)
    : log_start_(log_start == 0 ? 1 : log_start),
      base_membership_(std::move(base_membership)) {}

const pb::Entry* LogWindow::At(Slot slot) const {
  if (!Holds(slot)) return nullptr;
  return &entries_[slot - log_start_];
}

void LogWindow::Put(const pb::Entry& entry) {
  const Slot slot = entry.slot();
  TESSERA_CHECK(slot >= log_start_ && slot <= last_slot() + 1);
  if (slot == last_slot() + 1) {
    entries_.push_back(entry);
  } else {
    entries_[slot - log_start_] = entry;
  }
  if (entry.type() == pb::ENTRY_MEMBERSHIP) {
    memberships_[slot] = entry.membership();
  } else {
    memberships_.erase(slot);
  }
}

void LogWindow::TruncateFrom(Slot from) {
  if (from > last_slot()) return;
  TESSERA_CHECK(from >= log_start_);
  entries_.resize(from - log_start_);
  memberships_.erase(memberships_.lower_bound(from), memberships_.end());
}

void LogWindow::CompactThrough(Slot upto) {
  if (upto < log_start_) return;
  TESSERA_CHECK(upto <= last_slot());
  base_membership_ = MembershipAt(upto);
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<long>(upto - log_start_ + 1));
  memberships_.erase(memberships_.begin(), memberships_.upper_bound(upto));
  log_start_ = upto + 1;
}

void LogWindow::InstallBase(Slot last, pb::Membership membership) {
  if (last >= last_slot()) {
    entries_.clear();
    memberships_.clear();
  } else if (last >= log_start_) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<long>(last - log_start_ + 1));
    memberships_.erase(memberships_.begin(), memberships_.upper_bound(last));
  }
  log_start_ = std::max(log_start_, last + 1);
  base_membership_ = std::move(membership);
  TESSERA_CHECK(log_start_ == last + 1);
}

const pb::Membership& LogWindow::MembershipAt(Slot slot) const {
  TESSERA_CHECK(slot + 1 >= log_start_);
  auto it = memberships_.upper_bound(slot);
  if (it == memberships_.begin()) return base_membership_;
  return std::prev(it)->second;
}

std::vector<Slot> LogWindow::MembershipSlotsAfter(Slot after) const {
  std::vector<Slot> slots;
  for (auto it = memberships_.upper_bound(after); it != memberships_.end(); ++it) {
    slots.push_back(it->first);
  }
  return slots;
}

}  // namespace tessera::consensus
