// LogWindow: the slots a replica still holds in memory, contiguous from
// log_start to last_slot, with the membership entries among them indexed so
// that the membership in force at any held slot is found without a scan.
//
// Invariants:
//  1. entries_[i].slot() == log_start_ + i (contiguous, no holes).
//  2. memberships_ holds exactly the ENTRY_MEMBERSHIP entries of entries_.
//  3. base_membership_ was in force at log_start_ - 1.
//
// Thread safety: none (owned by one Replica).
#pragma once

#include <deque>
#include <map>

#include "consensus/options.h"
#include "tessera/consensus.pb.h"

namespace tessera::consensus {

class LogWindow {
 public:
  LogWindow(Slot log_start, pb::Membership base_membership);

  Slot log_start() const { return log_start_; }
  Slot last_slot() const { return log_start_ + entries_.size() - 1; }
  bool Holds(Slot slot) const { return slot >= log_start_ && slot <= last_slot(); }
  // nullptr unless Holds(slot).
  const pb::Entry* At(Slot slot) const;

  // Writes `entry` at entry.slot(), which must be <= last_slot() + 1 and
  // >= log_start(): overwrites a held slot or appends.
  void Put(const pb::Entry& entry);
  // Drops every slot >= from (no-op when from > last_slot()).
  void TruncateFrom(Slot from);
  // Drops every slot <= upto; the membership at upto becomes the base.
  void CompactThrough(Slot upto);
  // After installing a snapshot covering slots <= last_slot: drops those,
  // keeps any held slots above it (accepted values are never forgotten),
  // and takes `membership` as the base.
  void InstallBase(Slot last_slot, pb::Membership membership);

  // Membership in force at `slot` (>= log_start - 1): the latest membership
  // entry at or below it, else the base.
  const pb::Membership& MembershipAt(Slot slot) const;
  const pb::Membership& LatestMembership() const { return MembershipAt(last_slot()); }
  // Slots of membership entries in (after, last_slot], ascending.
  std::vector<Slot> MembershipSlotsAfter(Slot after) const;

 private:
  Slot log_start_;
  pb::Membership base_membership_;
  std::deque<pb::Entry> entries_;
  std::map<Slot, pb::Membership> memberships_;
};

}  // namespace tessera::consensus
