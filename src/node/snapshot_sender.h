// SnapshotSender: the leader side of streamed snapshot transfer for one
// replication group. Answering the core's snapshot_requests, it pins a
// GroupSnapshot per lagging replica and streams it as SnapshotChunk
// messages (through the group's MessageSender) with at most
// options.window_chunks unacknowledged chunks; acknowledgements
// (SnapshotChunkAck, cumulative) advance the window. When the last chunk is
// acknowledged the transfer is complete: the host hands its manifest to
// Replica::SendSnapshot as the snapshot's data.
//
// Contract:
//  1. One transfer per destination at a time; Start for a destination with
//     a transfer in flight does nothing. At most
//     limits::kSnapshotTransfersPerGroupMax transfers.
//  2. Memory: at most window_chunks + 1 chunks per transfer are held (the
//     window, and one built while the node's pacer holds it back), whatever
//     the state size. With a pacer (options.pacer) chunks leave at its
//     rate; Tick sends what it held back.
//  3. Tick resends the unacknowledged chunks after retransmit_us without
//     progress, and abandons a transfer after stall_timeout_us without
//     progress; an ack whose staged_chunks regresses below what was acked
//     (the receiver lost its staging) abandons at once. Abandoning releases
//     the pinned snapshot.
//  4. AbortAll (any thread, synchronous) abandons every transfer and makes
//     Start a no-op from then on; it must run before the NodeStore is
//     destroyed (GroupHost::Stop does).
//
// Thread safety: every method may be called from any thread; mu_ guards the
// transfers (the group's strand is the only caller besides AbortAll).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "consensus/replica.h"
#include "node/group_host_types.h"
#include "node/snapshot_transfer.h"
#include "storage/node_store.h"

namespace tessera::node {

class SnapshotSender {
 public:
  // A transfer whose every chunk is staged on `to`.
  struct Completed {
    consensus::ReplicaId to = 0;
    consensus::Slot applied_index = 0;  // of the pinned snapshot
    std::string manifest;               // serialized pb::SnapshotManifest
  };

  // `store`, `out` and `counters` (may be null) must outlive the sender.
  SnapshotSender(storage::NodeStore* store, uint64_t group_id, consensus::ReplicaId self,
                 MessageSender* out, SnapshotTransferOptions options,
                 SnapshotCounters* counters);
  ~SnapshotSender();

  // Pins a snapshot for `to` and sends the first window of chunks. A store
  // error abandons silently (the core asks again).
  void Start(uint64_t now_us, consensus::ReplicaId to);
  // Handles an acknowledgement from `from`; returns the transfer when it
  // has just completed.
  std::optional<Completed> OnAck(uint64_t now_us, consensus::ReplicaId from,
                                 const pb::SnapshotChunkAck& ack);
  // Retransmits and abandons as contract 3 says.
  void Tick(uint64_t now_us);
  // The lowest applied index of a pinned snapshot in flight: log
  // compaction must keep the slots above it so SendSnapshot stays possible.
  std::optional<consensus::Slot> OldestPinnedIndex() const;
  size_t transfers() const;
  void AbortAll();

 private:
  struct Transfer;
  // mu_ held for all of these.
  void FillWindow(uint64_t now_us, Transfer& t);
  void SendChunk(const pb::Message& message, size_t bytes);
  void Abandon(std::map<consensus::ReplicaId, std::unique_ptr<Transfer>>::iterator it,
               const char* reason);

  storage::NodeStore* const store_;
  const uint64_t group_id_;
  const consensus::ReplicaId self_;
  MessageSender* const out_;
  const SnapshotTransferOptions options_;
  SnapshotCounters* const counters_;
  mutable std::mutex mu_;  // guards transfers_, next_id_, closed_
  std::map<consensus::ReplicaId, std::unique_ptr<Transfer>> transfers_;
  bool closed_ = false;
  uint64_t next_id_;
};

}  // namespace tessera::node
