// SnapshotReceiver: the lagging replica's side of streamed snapshot
// transfer for one replication group. It stages every SnapshotChunk durably
// (NodeStore::StageSnapshotChunk) before acknowledging it, and installs a
// snapshot the core hands over (snapshot_to_install, whose data is a
// SnapshotManifest) only when exactly that staging is complete.
//
// Contract:
//  1. Every chunk is answered with a cumulative SnapshotChunkAck for its
//     transfer (staged_chunks = 0 when that transfer is not staged here),
//     sent only once the staging it reports is durable.
//  2. Install returns InvalidArgument (nothing changed) when the manifest
//     does not parse or does not match the staging; OK once the state is
//     replaced durably; any other error leaves an install marker (the
//     group must stop; the store finishes the install when reopened).
//
// Thread safety: none; the group's strand calls it.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "node/group_host_types.h"
#include "node/snapshot_transfer.h"
#include "storage/node_store.h"

namespace tessera::node {

class SnapshotReceiver {
 public:
  // `store`, `out` and `counters` (may be null) must outlive the receiver.
  SnapshotReceiver(storage::NodeStore* store, uint64_t group_id, consensus::ReplicaId self,
                   MessageSender* out, SnapshotCounters* counters);

  // Stages the chunk carried by `message` and sends the acknowledgement.
  void OnChunk(const pb::Message& message);
  Status Install(const pb::InstallSnapshot& snapshot);

 private:
  storage::NodeStore* const store_;
  const uint64_t group_id_;
  const consensus::ReplicaId self_;
  MessageSender* const out_;
  SnapshotCounters* const counters_;
};

}  // namespace tessera::node
