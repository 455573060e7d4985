// Knobs and counters shared by both ends of a streamed snapshot transfer
// (snapshot_sender.h on the leader, snapshot_receiver.h on the lagging
// replica). Protocol: docs/formats/storage.md, "Streamed snapshots".
//
// Thread safety: options are plain values (the pacer they share is
// thread-safe); the counters are atomic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/limits.h"
#include "common/metrics.h"
#include "knobs/knobs.h"

namespace tessera::node {

// Paces the streamed snapshots a node sends, all groups together (every
// group's SnapshotSender shares one): a token bucket of bytes_per_s that
// holds at most a tenth of a second's worth. A chunk may be sent while the
// bucket is not in debt, and then takes its bytes, so a chunk larger than
// the burst still passes and the long-run rate stays bytes_per_s.
class SnapshotPacer {
 public:
  explicit SnapshotPacer(uint64_t bytes_per_s);
  // Whether a chunk may be sent at `now_us` (the bucket is not in debt).
  bool Ready(uint64_t now_us);
  // Takes the bytes of a chunk just sent (the bucket may go into debt).
  void Take(size_t bytes);
  uint64_t bytes_per_s() const { return bytes_per_s_; }

 private:
  void Refill(uint64_t now_us);  // mu_ held
  const uint64_t bytes_per_s_;
  const double burst_bytes_;
  std::mutex mu_;  // guards tokens_ and last_us_
  double tokens_;
  uint64_t last_us_ = 0;
};

struct SnapshotTransferOptions {
  // A chunk holds pairs until it has at least this many key+value bytes
  // (clamped to the bounds of knob node.snapshot_chunk_bytes).
  size_t chunk_bytes = knobs::kNodeSnapshotChunkBytes.default_value;
  // Chunks sent and not acknowledged (<= kSnapshotChunksInFlightMax).
  size_t window_chunks = limits::kSnapshotChunksInFlightMax;
  // Unacknowledged chunks are sent again after this long without progress.
  uint64_t retransmit_us = 500'000;
  // A transfer with no acknowledged progress for this long is abandoned
  // (its pinned RocksDB snapshot released); the core asks again.
  uint64_t stall_timeout_us = 10'000'000;
  // The node's pacer (knob node.snapshot_stream_bytes_per_s); null: unpaced.
  std::shared_ptr<SnapshotPacer> pacer;
};

// Process-wide counters (one set per ReplicationHost), exported as
//   tessera_snapshot_chunks_sent_total, tessera_snapshot_bytes_sent_total,
//   tessera_snapshot_chunks_received_total, tessera_snapshot_bytes_received_total,
//   tessera_snapshot_transfers_total{outcome="completed"|"abandoned"},
//   tessera_snapshot_installs_total{outcome="installed"|"refused"|"resumed"}.
// Bytes count keys and values.
struct SnapshotCounters {
  explicit SnapshotCounters(metrics::Registry& registry);
  metrics::Counter& chunks_sent;
  metrics::Counter& bytes_sent;
  metrics::Counter& chunks_received;
  metrics::Counter& bytes_received;
  metrics::Counter& transfers_completed;
  metrics::Counter& transfers_abandoned;
  metrics::Counter& installs_done;
  metrics::Counter& installs_refused;   // manifest did not match the staging
  metrics::Counter& installs_resumed;   // finished at store open after a crash
};

}  // namespace tessera::node
