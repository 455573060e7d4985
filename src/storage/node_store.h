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

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "consensus/replica.h"
#include "storage/applied_state.h"
#include "storage/column_families.h"
#include "storage/group_commit_writer.h"
#include "storage/group_snapshot.h"
#include "storage/key_codec.h"
#include "storage/log_write.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

inline constexpr uint32_t kStorageFormatVersion = 1;

struct NodeStoreOptions {
  std::string path;  // RocksDB directory, created when missing
  GroupCommitOptions group_commit;
  // Memtable size of each column family, bytes.
  size_t write_buffer_bytes = 64 << 20;
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
  Result<std::vector<KeyValue>> Scan(GroupId group, std::string_view start_key,
                                     std::string_view end_key, size_t limit) const;
  // A consistent view of the group's whole applied state and applied index.
  Result<std::unique_ptr<GroupSnapshot>> OpenSnapshot(GroupId group) const;
  // Replaces the group's applied state with `data` at applied index
  // meta.last_slot, deletes its whole log and writes LogBase{last_slot + 1,
  // meta.membership}, atomically and durably; the hard state is kept.
  Status InstallSnapshot(GroupId group, const pb::SnapshotMeta& meta,
                         const std::vector<KeyValue>& data);
  // Deletes every record of the group (log, hard state, state), durably.
  Status RemoveGroup(GroupId group);

  GroupCommitStats group_commit_stats() const { return writer_->stats(); }

 private:
  NodeStore(rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
            const NodeStoreOptions& options);
  Status InitFormat();
  // Submits `batch` to the writer and waits until it is durable.
  Status SubmitAndWait(rocksdb::WriteBatch batch);

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, log, state, meta
  ColumnFamilies cfs_;
  mutable std::atomic<int64_t> open_snapshots_{0};
  std::unique_ptr<GroupCommitWriter> writer_;
};

}  // namespace tessera::storage
