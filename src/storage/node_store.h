// NodeStore: the durable storage of one node. One RocksDB instance shared by
// every replication group on the node holds each group's Multi-Paxos log,
// hard state and log base (log column family) and its applied state with the
// applied index (state column family). Format: docs/formats/storage.md.
//
// Durability:
//  * Log writes, compactions, snapshot installs and group removal go through
//    one GroupCommitWriter (FIFO, one synced WriteBatch for many groups).
//  * Apply writes the WAL unsynced; a later synced write (any log write or
//    compaction) makes it durable. CompactLog only removes slots the applied
//    state covers, so a crash never leaves a hole between applied state and
//    log (see "Compaction never outruns durable applied state").
//
// Errors: InvalidArgument for bad arguments, Throttled when the group-commit
// queue is full, Corruption (naming group and slot or key) for any stored
// record failing verification, IOError/Unavailable from RocksDB.
//
// Thread safety: every method may be called from any thread concurrently.
// Calls concerning one group must be serialised by the caller (the group's
// executor); their effects happen in call order. The blocking methods
// (WriteLog, CompactLog, InstallSnapshot, RemoveGroup) must not be called
// from a commit callback (checked: the writer thread would wait on itself).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_thread.h"
#include "common/limits.h"
#include "common/result.h"
#include "knobs/knobs.h"
#include "consensus/replica.h"
#include "storage/applied_state.h"
#include "storage/column_families.h"
#include "storage/group_commit_writer.h"
#include "storage/group_snapshot.h"
#include "storage/key_codec.h"
#include "storage/log_write.h"
#include "storage/obsolete_version_flush.h"
#include "storage/wal_zero_fill.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

class WalFileSystem;

inline constexpr uint32_t kStorageFormatVersion = 1;

struct NodeStoreOptions {
  std::string path;  // RocksDB directory, created when missing
  GroupCommitOptions group_commit;
  // Memtable size of the log, meta and default column families, bytes.
  size_t write_buffer_bytes = 64 << 20;
  // Memtable size of the applied state, bytes. Small on purpose (D34): its
  // keys arrive in random order, and an insert into a large skiplist is a
  // chain of cache misses on every replica of every write. A flush merges
  // four of them into one level-0 file.
  size_t state_write_buffer_bytes = 8 << 20;
  // Zeros written ahead of the write-ahead log's end (D41).
  WalZeroFillOptions wal_zero_fill;
  // The block cache shared by every column family, bytes.
  size_t block_cache_bytes = 256 << 20;
  // Bytes of keys and values per WriteBatch of a staged-snapshot install.
  size_t snapshot_install_batch_bytes = knobs::kNodeSnapshotInstallBatchBytes.default_value;
  // Bytes of keys and values per table file a split's copy writes before it
  // ingests them (node_store_split.cc); the last file may be smaller.
  size_t split_file_bytes = 64 << 20;
  // When a scan's memtable work asks for a flush of the applied state
  // (obsolete_version_flush.h).
  ObsoleteVersionFlushOptions obsolete_version_flush;
  // Fault injection (tests only, off by default): InstallStagedSnapshot
  // returns Aborted after writing the marker and this many copy batches, as
  // if the process died there; reopening the store finishes the install.
  std::optional<size_t> fault_install_stop_after_batches;
  // The file system the database lives on; null: the local disk, with the
  // WAL's zero fill (wal_file_system.h). Tests and the simulator pass a
  // CrashFileSystem (crash_file_system.h); there is then no zero fill.
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // Fault injection (off by default): InstallStagedSnapshot and the install
  // finished at open sleep this long right after the marker is durable, so
  // that a test can kill the process in the middle of an install.
  uint32_t fault_install_delay_ms = 0;
  // Fault injection (tests only, off by default): ApplySplit returns
  // Aborted after the marker batch and this many copy files written (not
  // yet ingested), as if the process died there; reopening the store
  // finishes the split.
  std::optional<size_t> fault_split_stop_after_batches;
  // The simulator's seam (docs/decisions.md D86): no writer or snapshot
  // thread. Log writes, compactions and snapshot jobs wait, not durable and
  // without callbacks, until the owner calls RunWorkers; calls that block
  // until durable (WriteLog, CompactLog, InstallStagedSnapshot...) do the
  // writer's work on the calling thread. Production never sets it.
  bool stepped_workers = false;
};

// What NodeStore::Open did about streamed snapshots left by the last run.
struct SnapshotRecoveryStats {
  uint64_t installs_resumed = 0;   // install markers found and finished
  uint64_t stagings_dropped = 0;   // stagings without a marker, deleted
  uint64_t splits_resumed = 0;     // split markers found and finished
};

// A write to another group's user keys carried by a split's first batch
// (the partition descriptors of group 0), leaving that group's applied
// index as it is.
struct GroupMutation {
  GroupId group = 0;
  Mutation mutation;
};

class NodeStore {
 public:
  // Opens (or creates) the store at options.path and starts the writer.
  // InvalidArgument if the directory holds another format version or
  // unknown column families; IOError/Corruption from RocksDB.
  static Result<std::unique_ptr<NodeStore>> Open(const NodeStoreOptions& options);
  // Writes everything queued (its callbacks fire), then closes. Every
  // GroupSnapshot must be gone (checked).
  ~NodeStore();
  NodeStore(const NodeStore&) = delete;
  NodeStore& operator=(const NodeStore&) = delete;

  // --- consensus log ------------------------------------------------------
  // Queues `write` for group commit. OK: `done` fires exactly once, on the
  // writer thread, when the write is durable or failed. Otherwise (invalid
  // write, Throttled, Aborted) `done` never fires.
  Status SubmitLogWrite(LogWrite write, CommitCallback done);
  // SubmitLogWrite and wait until durable.
  Status WriteLog(LogWrite write);
  // Deletes slots <= upto and durably writes LogBase{upto + 1, membership}.
  // InvalidArgument when upto exceeds the stored applied index (the entries
  // are not covered by applied state yet) or lies below log_start - 1; OK
  // without writing when upto == log_start - 1. Blocks until durable.
  Status CompactLog(GroupId group, Slot upto, const pb::Membership& membership);
  // CompactLog without waiting, checked the same way when called: true when
  // queued (`done` fires once on the writer thread, as for SubmitLogWrite),
  // false when the log already starts at upto + 1 (nothing queued, `done`
  // never fires). The compaction takes effect after the log writes queued
  // before it.
  Result<bool> SubmitCompactLog(GroupId group, Slot upto, const pb::Membership& membership,
                                CommitCallback done);
  // Every group with a stored record, ascending.
  Result<std::vector<GroupId>> ListGroups() const;
  // What the group's replica restarts from (hard state, log base, entries
  // contiguous from log_start, applied index), verified; the bootstrap
  // state for a group with no records. Corruption names group and slot.
  Result<consensus::RecoveredState> RecoverGroup(GroupId group) const;

  // --- applied state ------------------------------------------------------
  // Applies `mutations` in order and sets the applied index, in one
  // WriteBatch (WAL, unsynced). InvalidArgument when applied_index does not
  // exceed the stored one or a key/value exceeds its limit.
  Status Apply(GroupId group, Slot applied_index, const std::vector<Mutation>& mutations);
  // The stored applied index; 0 for a group never applied.
  Result<Slot> AppliedIndex(GroupId group) const;
  // NotFound when `key` is absent.
  Result<std::string> Get(GroupId group, std::string_view key) const;
  // Keys in [start_key, end_key) in byte order (empty end_key: to the end of
  // the group), at most `limit` (1..kScanItemsMax) items.
  // Rows `wants_value` refuses have empty values (VisitUserKeys). A scan
  // that mostly stepped over obsolete versions in the memtable requests a
  // flush of the applied state (ObsoleteVersionFlush; not waited for).
  Result<std::vector<KeyValue>> Scan(GroupId group, std::string_view start_key,
                                     std::string_view end_key, size_t limit,
                                     const ValueFilter& wants_value = {}) const;
  // The same rows, visited in place (VisitUserKeys) instead of copied,
  // until `visit` returns false.
  Status Visit(GroupId group, std::string_view start_key, std::string_view end_key, size_t limit,
               const ValueFilter& wants_value, const RowVisitor& visit) const;
  // A consistent view of the group's whole applied state and applied index.
  Result<std::unique_ptr<GroupSnapshot>> OpenSnapshot(GroupId group) const;
  // Replaces the group's applied state with `data` at applied index
  // meta.last_slot, deletes its whole log and writes LogBase{last_slot + 1,
  // meta.membership}, atomically and durably; the hard state is kept.
  Status InstallSnapshot(GroupId group, const pb::SnapshotMeta& meta,
                         const std::vector<KeyValue>& data);
  // Deletes every record of the group (log, hard state, state, any
  // snapshot staging or install marker), durably.
  Status RemoveGroup(GroupId group);

  // A synced write through the group-commit writer that carries no record
  // (write-ahead log data only). OK once the store writes again; it also
  // returns only after every batch submitted before it finished (the
  // writer is FIFO). On failure RocksDB is asked to resume from a
  // background error, for the next probe.
  Status ProbeWrites();

  // --- splits (docs/partition-splits.md "Apply") -------------------------
  // Applies the split entry of `parent` at marker.split_slot (above the
  // stored applied index, else InvalidArgument): one synced batch with the
  // parent's applied index, its range end marker.split_key, the child's
  // range end (the parent's previous one, if any), `side_writes` and the
  // marker; the parent's user keys >= split_key written as the child's
  // into synced table files of split_file_bytes and ingested in one step
  // (no memtable, no write-ahead log: the copy costs one sequential write
  // of the moved bytes, D138); one synced batch
  // deleting them from the parent, writing the child's AppliedState
  // {split_slot} and LogBase{split_slot + 1, marker.membership} and
  // deleting the marker. Blocks until durable. InvalidArgument for an empty
  // split key, child 0 or the parent itself; Conflict while another split
  // of the parent is unfinished. Any error after the first batch leaves the
  // marker: reopening the store finishes the split.
  Status ApplySplit(GroupId parent, const pb::SplitMarker& marker,
                    const std::vector<GroupMutation>& side_writes);
  // The group's range end after its splits; nullopt when no split narrowed it.
  Result<std::optional<std::string>> RangeEnd(GroupId group) const;
  // An estimate of the bytes of the group's user keys and values:
  // RocksDB's approximate size of [UserKeysBegin, UserKeysEnd) in files
  // and memtables (obsolete versions not yet compacted count too). For the
  // split planner (admin.status state_bytes), never for a decision that
  // must be exact.
  Result<uint64_t> ApproximateStateBytes(GroupId group) const;
  // An estimate of the group's live user keys: the memtables' entries in
  // [UserKeysBegin, UserKeysEnd), plus, for the table files overlapping
  // it, their entries less twice their deletions (RocksDB's
  // estimate-num-keys rule) times the share of their data bytes the range
  // holds (GetApproximateSizes). Overwritten versions and deletions not
  // yet compacted, and keys a split moved out, may count. For bucket
  // placement (admin.status state_keys), never for a decision that must be
  // exact.
  Result<uint64_t> ApproximateStateKeys(GroupId group) const;
  // True while the parent has a split marker (only after a failed
  // ApplySplit: Open finishes every marked split).
  Result<bool> SplitPending(GroupId parent) const;

  // --- streamed snapshots (snapshot_staging.h) ----------------------------
  // The group's staging progress; NotFound when nothing is staged.
  Result<pb::SnapshotManifest> StagedSnapshot(GroupId group) const;
  // Stages chunk `seq` of transfer `snapshot_id` durably (one synced
  // WriteBatch; blocks) and returns the staging progress after it:
  //  * seq 0 of another transfer (or none staged): discards the old staging
  //    and starts this one;
  //  * seq == staged chunk_count of the same transfer: appends;
  //  * seq < staged chunk_count of the same transfer: a duplicate, nothing
  //    written;
  //  * otherwise (a gap, or a later chunk of a transfer not staged here):
  //    Conflict, nothing written.
  // `pairs` must continue the staged key order (InvalidArgument otherwise),
  // and respect the state key/value limits.
  Result<pb::SnapshotManifest> StageSnapshotChunk(GroupId group, uint64_t snapshot_id,
                                                  uint64_t seq, const std::vector<KeyValue>& pairs);
  // Replaces the group's applied state with the staged snapshot described by
  // `manifest`, at applied index meta.last_slot, writes LogBase{last_slot +
  // 1, meta.membership} (as InstallSnapshot does) and drops the staging;
  // durable on OK. Blocks. Writes the install marker, copies the staged
  // pairs in batches of options.snapshot_install_batch_bytes, then one
  // synced batch with the applied index, log base, marker and staging
  // deletion. InvalidArgument, nothing changed, when the staging does not
  // match `manifest` exactly (StagingMatches). Corruption when a staged pair
  // fails verification or the copied pairs do not match the manifest's
  // checksum (the marker stays: the group must not start). Any other error
  // also leaves the marker; reopening the store finishes the install.
  Status InstallStagedSnapshot(GroupId group, const pb::SnapshotManifest& manifest,
                               const pb::SnapshotMeta& meta);
  // Runs `work` on the store's snapshot thread (common/job_thread.h):
  // staging chunks and installing snapshots wait for synced writes, which
  // must not hold an io thread that every group of the node shares. Jobs
  // run one at a time in submission order, so a group's chunks stage in the
  // order they were submitted. Throttled when limits::kSnapshotJobsQueuedMax
  // jobs wait, Aborted while closing; `work` is then destroyed unrun. Jobs
  // still waiting when the store closes are dropped unrun; the running one
  // finishes first.
  Status SubmitSnapshotWork(std::function<void()> work);
  // Deletes the group's staging (not allowed while an install marker exists:
  // Conflict). OK when nothing is staged.
  Status DropStagedSnapshot(GroupId group);
  // True while the group has an install marker (only after a failed
  // InstallStagedSnapshot: Open finishes every marked install).
  Result<bool> InstallPending(GroupId group) const;
  const SnapshotRecoveryStats& snapshot_recovery_stats() const { return snapshot_recovery_; }
  // Stepped stores only (NodeStoreOptions::stepped_workers): group-commits
  // the queued log writes (their callbacks fire on the calling thread),
  // then runs the waiting snapshot jobs, until neither has anything
  // queued; returns whether anything ran. Not from a callback or a job.
  bool RunWorkers();
  // Log writes or snapshot jobs wait for RunWorkers (or for the threads).
  bool WorkQueued() const;

  GroupCommitStats group_commit_stats() const { return writer_->stats(); }
  // Synced log writes of the last `window_us` (GroupCommitWriter::SyncLatencySince).
  LatencyWindow::Summary recent_sync_latency(uint64_t window_us) const {
    const uint64_t now = GroupCommitWriter::SteadyNowUs();
    return writer_->SyncLatencySince(now > window_us ? now - window_us : 0);
  }
  WalZeroFillStats wal_zero_fill_stats() const;
  // Flushes of the applied state that scans requested (ObsoleteVersionFlush).
  uint64_t scan_flushes_requested() const { return obsolete_version_flush_.flushes_requested(); }
  uint64_t scan_flush_failures() const { return scan_flush_failures_.load(); }
  // Entries in the applied state's active memtable (RocksDB property
  // rocksdb.num-entries-active-mem-table); 0 when unavailable.
  uint64_t state_memtable_entries() const;

 private:
  NodeStore(std::shared_ptr<WalFileSystem> file_system, std::unique_ptr<rocksdb::Env> env,
            rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
            const NodeStoreOptions& options);
  Status InitFormat();
  // At open: finishes every marked install, drops every unmarked staging.
  Status RecoverSnapshotStaging();
  // Copies the staged pairs over the group's user keys and commits the
  // install described by `marker` (which is durable); idempotent.
  Status FinishStagedInstall(GroupId group, const pb::SnapshotInstallMarker& marker,
                             std::optional<size_t> stop_after_batches);
  // At open: finishes every marked split (after RecoverSnapshotStaging).
  Status RecoverSplits();
  // Copies the parent's keys >= marker.split_key to the child and commits
  // the split described by `marker` (which is durable); idempotent.
  Status FinishSplit(GroupId parent, const pb::SplitMarker& marker,
                     std::optional<size_t> stop_after_files);
  // Whether the group has any user key in the applied state.
  Result<bool> HasUserKeys(GroupId group) const;
  // Deletes the split copy files of `parent` (nullopt: of every parent)
  // left in the store's split-files directory.
  Status DropSplitFiles(std::optional<GroupId> parent);
  // Reads a protobuf record of the meta column family; NotFound when absent.
  template <typename Proto>
  Result<Proto> ReadMetaRecord(const std::string& key, std::string_view what) const;
  // Asks RocksDB to flush the applied state's memtable, without waiting
  // (a refused request is counted in scan_flush_failures_).
  void RequestStateFlush() const;
  // Submits `batch` to the writer and waits until it is durable.
  Status SubmitAndWait(rocksdb::WriteBatch batch);
  // The checked compaction batch of CompactLog; nullopt when there is
  // nothing to do.
  Result<std::optional<rocksdb::WriteBatch>> CompactionBatch(GroupId group, Slot upto,
                                                             const pb::Membership& membership) const;

  // The file system and environment the database runs on: declared before
  // db_, so they outlive it. file_system_ is null on a file system of the
  // options (no zero fill).
  std::shared_ptr<WalFileSystem> file_system_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, log, state, meta
  ColumnFamilies cfs_;
  mutable std::atomic<int64_t> open_snapshots_{0};
  std::unique_ptr<GroupCommitWriter> writer_;
  // After writer_: its jobs wait for the writer, so it stops first.
  std::unique_ptr<JobThread> snapshot_jobs_;
  NodeStoreOptions options_;
  SnapshotRecoveryStats snapshot_recovery_;
  mutable ObsoleteVersionFlush obsolete_version_flush_;
  mutable std::atomic<uint64_t> scan_flush_failures_{0};
};

}  // namespace tessera::storage
