#include "node/snapshot_receiver.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace tessera::node {

SnapshotReceiver::SnapshotReceiver(storage::NodeStore* store, uint64_t group_id,
                                   consensus::ReplicaId self, SnapshotCounters* counters)
    : store_(store), group_id_(group_id), self_(self), counters_(counters) {}

pb::Message SnapshotReceiver::StageChunk(const pb::Message& message, Status* store_error) const {
  const pb::SnapshotChunk& chunk = message.snapshot_transfer().chunk();
  std::vector<storage::KeyValue> pairs;
  pairs.reserve(chunk.pairs_size());
  size_t bytes = 0;
  for (const pb::SnapshotPair& p : chunk.pairs()) {
    bytes += p.key().size() + p.value().size();
    pairs.push_back({p.key(), p.value()});
  }
  uint64_t staged_chunks = 0;
  auto staged = store_->StageSnapshotChunk(group_id_, chunk.snapshot_id(), chunk.seq(), pairs);
  if (staged.ok()) {
    staged_chunks = staged->chunk_count();
    if (counters_) {
      counters_->chunks_received.Increment();
      counters_->bytes_received.Increment(bytes);
    }
  } else {
    // A gap, a duplicate of another transfer, or a store error: report what
    // is staged of this transfer (0 when another or none is staged).
    if (store_error != nullptr && staged.status().code() == StatusCode::kIOError) {
      *store_error = staged.status();
    }
    if (staged.status().code() != StatusCode::kConflict) {
      spdlog::warn("node.snapshot_chunk_refused group={} snapshot={} seq={} reason=\"{}\"",
                   group_id_, chunk.snapshot_id(), chunk.seq(), staged.status().ToString());
    }
    auto current = store_->StagedSnapshot(group_id_);
    if (current.ok() && current->snapshot_id() == chunk.snapshot_id()) {
      staged_chunks = current->chunk_count();
    }
  }
  pb::Message ack;
  ack.set_group_id(group_id_);
  ack.set_from(self_);
  ack.set_to(message.from());
  ack.mutable_snapshot_transfer()->mutable_ack()->set_snapshot_id(chunk.snapshot_id());
  ack.mutable_snapshot_transfer()->mutable_ack()->set_staged_chunks(staged_chunks);
  return ack;
}

Status SnapshotReceiver::Install(const pb::InstallSnapshot& snapshot) const {
  pb::SnapshotManifest manifest;
  if (!manifest.ParseFromString(snapshot.data()) || manifest.snapshot_id() == 0) {
    if (counters_) counters_->installs_refused.Increment();
    return Status::InvalidArgument("snapshot data is not a streamed-snapshot manifest");
  }
  spdlog::info("node.snapshot_install_started group={} snapshot={} last_slot={}", group_id_,
               manifest.snapshot_id(), snapshot.meta().last_slot());
  Status installed = store_->InstallStagedSnapshot(group_id_, manifest, snapshot.meta());
  if (counters_) {
    if (installed.ok()) counters_->installs_done.Increment();
    if (installed.code() == StatusCode::kInvalidArgument) counters_->installs_refused.Increment();
  }
  if (installed.ok()) {
    spdlog::info("node.snapshot_installed group={} snapshot={} last_slot={} pairs={} bytes={}",
                 group_id_, manifest.snapshot_id(), snapshot.meta().last_slot(),
                 manifest.pair_count(), manifest.total_bytes());
  }
  return installed;
}

}  // namespace tessera::node
