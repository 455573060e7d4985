// SnapshotReceiver: the lagging replica's side of streamed snapshot
// transfer for one replication group. It stages every SnapshotChunk durably
// (NodeStore::StageSnapshotChunk) and answers it with an acknowledgement,
// and installs a snapshot the core hands over (snapshot_to_install, whose
// data is a SnapshotManifest) only when exactly that staging is complete.
//
// Contract:
//  1. StageChunk returns the cumulative SnapshotChunkAck for the chunk's
//     transfer (staged_chunks = 0 when that transfer is not staged here);
//     the staging it reports is durable when it returns.
//  2. Install returns InvalidArgument (nothing changed) when the manifest
//     does not parse or does not match the staging; OK once the state is
//     replaced durably; any other error leaves an install marker (the
//     group must stop; the store finishes the install when reopened).
//  3. Both wait for synced writes: GroupHost calls them on the store's
//     snapshot thread (NodeStore::SubmitSnapshotWork), never on an io
//     thread.
//
// Thread safety: the receiver holds no mutable state (the store and the
// counters are thread-safe); calls may come from any one thread at a time.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "node/group_host_types.h"
#include "node/snapshot_transfer.h"
#include "storage/node_store.h"

namespace tessera::node {

class SnapshotReceiver {
 public:
  // `store` and `counters` (may be null) must outlive the receiver.
  SnapshotReceiver(storage::NodeStore* store, uint64_t group_id, consensus::ReplicaId self,
                   SnapshotCounters* counters);

  // Stages the chunk carried by `message`; returns the acknowledgement to
  // send back to its sender. When the store failed the write (IOError:
  // the disk, which RocksDB then refuses every later write of until the
  // store reopens) and `store_error` is set, the error lands there.
  pb::Message StageChunk(const pb::Message& message, Status* store_error = nullptr) const;
  Status Install(const pb::InstallSnapshot& snapshot) const;

 private:
  storage::NodeStore* const store_;
  const uint64_t group_id_;
  const consensus::ReplicaId self_;
  SnapshotCounters* const counters_;
};

}  // namespace tessera::node
