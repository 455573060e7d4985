// PeerProgress: the leader's view of one other replica, and the flow control
// of what it sends that replica.
//
// Flow control: the Accepts sent beyond `match` (sent, not yet acknowledged)
// are recorded by their last slot and command bytes. The leader sends more
// only while both bounds hold: at most limits::kInflightSlotsPerPeerMax
// slots and limits::kInflightBytesPerPeerMax command bytes in flight (one
// Accept is always allowed, whatever its size). The byte bound keeps a
// lagging peer's catch-up within what the transport will queue: Accepts the
// transport refuses are only resent after a heartbeat without progress.
//
// Invariants:
//  1. Every record's last slot is in [match + 1, next - 1], in ascending
//     order; inflight_bytes is the sum of their bytes.
//  2. next >= 1; match only grows while the peer is tracked.
//
// Thread safety: none (owned by one Replica).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "consensus/options.h"

namespace tessera::consensus {

class PeerProgress {
 public:
  Slot next = 1;   // next slot to send
  Slot match = 0;  // every slot <= match is durable there with our values
  TimeUs last_heard_us = 0;
  uint64_t acked_seq = 0;  // latest heartbeat sequence it acknowledged
  bool snapshot_requested = false;
  TimeUs snapshot_requested_us = 0;
  // `match` at the previous heartbeat; none before the first, so a new
  // leader (or a new peer) does not rewind `next` before it could hear back.
  std::optional<Slot> match_at_last_heartbeat;

  // True while another Accept starting at `next` fits the window.
  bool WindowOpen() const;
  // An Accept of slots [next, last_slot] carrying `bytes` of commands was
  // sent; next becomes last_slot + 1.
  void RecordSent(Slot last_slot, size_t bytes);
  // The peer holds every slot <= matched: match grows to it, next to at
  // least match + 1, and the acknowledged records leave the window.
  void Acknowledged(Slot matched);
  // Send again from `from` (lost messages, a gap report, a new leader):
  // the records of Accepts at or after it leave the window.
  void RewindTo(Slot from);
  // Jump `next` forward past slots the peer gets another way (a snapshot
  // up to `through`); the records within them leave the window.
  void SkipThrough(Slot through);

  size_t inflight_bytes() const { return inflight_bytes_; }

 private:
  struct SentAccept {
    Slot last_slot = 0;
    size_t bytes = 0;
  };
  std::deque<SentAccept> inflight_;  // ascending last_slot, all > match
  size_t inflight_bytes_ = 0;
};

}  // namespace tessera::consensus
