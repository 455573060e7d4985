// GroupCommitWriter: one dedicated thread that makes writes durable in
// groups. Submitters (the executors of many replication groups) queue
// WriteBatches; the thread takes everything queued (FIFO, up to
// batch_bytes_max bytes per group commit; a larger single request goes
// alone), concatenates it into one WriteBatch, writes it unsynced and then
// syncs the WAL (DB::SyncWAL), and then fires each request's callback with
// the outcome. One fsync thus covers many groups' log writes, and it runs
// outside RocksDB's write queue: unsynced writes of other threads (applies)
// do not wait for it. The price: a request's mutations are visible to
// readers before its callback reports them durable.
//
// Contract:
//  1. Submit either refuses the request (Throttled when queue_max requests
//     or queue_bytes_max bytes are pending, Aborted once Shutdown began) and
//     never calls `done`, or accepts it and calls `done` exactly once, after
//     the write is durable (OK) or failed (the RocksDB error). A request is
//     always accepted into an empty queue, whatever its size.
//  2. Requests become durable in the order Submit accepted them; a request is
//     never split across two RocksDB writes (each is atomic).
//  3. Callbacks run on the writer thread, in acceptance order. They must be
//     short and must not wait for another write (they may Submit).
//  4. Shutdown (also run by the destructor) stops accepting requests, writes
//     everything still queued, fires its callbacks and joins the thread.
//  5. Stepped (GroupCommitOptions::stepped, the simulator's seam: D86):
//     there is no thread; queued requests stay queued (not durable, no
//     callback) until the owner calls RunQueued, which group-commits them
//     as the thread would and fires their callbacks on the caller's thread,
//     which counts as the writer thread meanwhile (OnWriterThread).
//
// Thread safety: Submit, stats and OnWriterThread may be called from any
// thread concurrently, also during Shutdown; nothing after destruction.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/latency_window.h"
#include "common/limits.h"
#include "common/status.h"

namespace tessera::storage {

// Fault injection on the synced writes, OFF by default (a null pointer in
// GroupCommitOptions, or zero/false knobs). The node process sets the knobs
// at runtime through its "admin.faults" RPC to simulate a slow or failing
// disk. The writer thread reads them before every group commit:
//  * fsync_delay_ms: sleep this long (capped at
//    limits::kStorageFaultDelayMsMax) before the synced write;
//  * fail_writes: write nothing and fail every request of the group commit
//    with an IOError (counted in writes_failed).
struct StorageFaults {
  std::atomic<uint32_t> fsync_delay_ms{0};
  std::atomic<bool> fail_writes{false};
};

struct GroupCommitOptions {
  // Pending (not yet taken) requests / bytes before Submit returns Throttled.
  size_t queue_max = limits::kGroupCommitQueueMax;
  size_t queue_bytes_max = limits::kGroupCommitQueueBytesMax;
  // Bytes of WriteBatch data one group commit gathers at most.
  size_t batch_bytes_max = limits::kGroupCommitBatchBytesMax;
  // Fault-injection knobs (see StorageFaults); null: no faults. Shared so
  // that the process can flip them while the writer runs.
  std::shared_ptr<StorageFaults> faults;
  // No writer thread: the owner runs RunQueued (contract 5). Simulation
  // only; production always runs the thread.
  bool stepped = false;
};

// Monotonic counters since construction. batches_synced < writes_submitted
// shows that group commit is batching.
struct GroupCommitStats {
  uint64_t writes_submitted = 0;  // accepted by Submit
  uint64_t writes_throttled = 0;  // refused by Submit: queue full
  uint64_t writes_failed = 0;     // accepted, then the synced write failed
  uint64_t batches_synced = 0;    // synced RocksDB writes that succeeded
  uint64_t bytes_synced = 0;      // WriteBatch bytes in those writes
};

using CommitCallback = std::function<void(const Status& status)>;

class GroupCommitWriter {
 public:
  // `db` and every column family a submitted batch names (all listed in
  // `column_families`) must outlive the writer. Starts the thread.
  GroupCommitWriter(rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> column_families,
                    const GroupCommitOptions& options);
  ~GroupCommitWriter();
  GroupCommitWriter(const GroupCommitWriter&) = delete;
  GroupCommitWriter& operator=(const GroupCommitWriter&) = delete;

  // Queues `batch` (Put, Delete, SingleDelete and DeleteRange only); see the
  // contract above. `done` must be non-empty.
  Status Submit(rocksdb::WriteBatch batch, CommitCallback done);

  // Idempotent; see contract 4. Must not be called from a callback.
  void Shutdown();
  // Stepped writers only (contract 5): group-commits everything queued,
  // also what the callbacks submit, on the calling thread; returns the
  // number of group commits. Must not be called from a callback.
  size_t RunQueued();
  // Requests accepted and not yet taken into a group commit.
  size_t queued() const;

  GroupCommitStats stats() const;
  // The group commits (failed ones included) that ended at or after
  // `from_us` on the steady clock (SteadyNowUs), their count, p99 and
  // maximum duration, from the last kSyncLatencySamples of them.
  LatencyWindow::Summary SyncLatencySince(uint64_t from_us) const;
  static uint64_t SteadyNowUs();
  static constexpr size_t kSyncLatencySamples = 4096;
  // True on the writer thread (inside a callback).
  bool OnWriterThread() const;

 private:
  struct Request {
    rocksdb::WriteBatch batch;
    CommitCallback done;
  };

  void Run();
  // Blocks until requests are queued or shutdown; empty only when stopping
  // and drained.
  std::vector<Request> TakeGroup();
  // The next group commit's requests, taken from the queue; mu_ held.
  std::vector<Request> TakeQueuedLocked();
  void Commit(std::vector<Request>& group);
  rocksdb::Status WriteSynced(std::vector<Request>& group, uint64_t* bytes);

  rocksdb::DB* const db_;
  const std::vector<rocksdb::ColumnFamilyHandle*> column_families_;
  const GroupCommitOptions options_;

  mutable std::mutex mu_;  // guards queue_, queued_bytes_ and stopping_
  std::condition_variable queued_;
  std::deque<Request> queue_;
  size_t queued_bytes_ = 0;
  bool stopping_ = false;

  std::atomic<uint64_t> writes_submitted_{0};
  std::atomic<uint64_t> writes_throttled_{0};
  std::atomic<uint64_t> writes_failed_{0};
  std::atomic<uint64_t> batches_synced_{0};
  std::atomic<uint64_t> bytes_synced_{0};
  LatencyWindow sync_latency_{kSyncLatencySamples};

  std::thread thread_;  // last: starts after every member above exists
  // thread_'s id, set in the constructor before any Submit can be accepted.
  std::thread::id writer_id_;
  std::once_flag joined_;
};

}  // namespace tessera::storage
