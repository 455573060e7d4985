// Ready: everything one batch of inputs asks the host to do, in order:
//
//  1. Persist `hard_state` (if set), delete log slots >= `truncate_from` (if
//     set), then write `entries` (each overwrites its slot) — atomically.
//  2. Send `messages` at any time (they depend on nothing unpersisted).
//  3. Once step 1 (and every earlier Ready's step 1) is durable: send
//     `messages_after_persist` and call Replica::OnPersisted(persist_seq).
//     Readies are persisted in the order they were taken. (When nothing is
//     awaiting durability, the core puts such replies in `messages`.)
//  4. Apply `committed` entries in slot order, right away: they are chosen
//     and already durable on this replica (never part of an unpersisted
//     Ready's writes).
//  5. For each id in `snapshot_requests`, build a snapshot of the applied
//     state and hand it to Replica::SendSnapshot.
//  6. If `snapshot_to_install` is set, replace the applied state with it
//     (after applying `committed`), delete log slots <= its last_slot (keep
//     any above: accepted values are never forgotten), persist
//     LogBase{last_slot + 1, membership}, then call OnSnapshotInstalled.
//
// `hard_state` is set whenever the promised ballot changed (it must be
// durable before the messages after persist go out); a change of the chosen
// index alone rides along with the next write, as it is only a lower bound.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "consensus/options.h"
#include "tessera/consensus.pb.h"

namespace tessera::consensus {

struct Ready {
  std::optional<pb::HardState> hard_state;
  std::optional<Slot> truncate_from;
  std::vector<pb::Entry> entries;
  // Non-zero when step 1 has anything to persist; OnPersisted takes it back.
  uint64_t persist_seq = 0;

  std::vector<pb::Message> messages;
  std::vector<pb::Message> messages_after_persist;

  std::vector<pb::Entry> committed;
  std::vector<ReplicaId> snapshot_requests;
  std::optional<pb::InstallSnapshot> snapshot_to_install;

  bool empty() const {
    return !hard_state && !truncate_from && entries.empty() && messages.empty() &&
           messages_after_persist.empty() && committed.empty() &&
           snapshot_requests.empty() && !snapshot_to_install && persist_seq == 0;
  }
};

}  // namespace tessera::consensus
