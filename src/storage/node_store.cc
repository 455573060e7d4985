#include "storage/node_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/table.h>
#include <rocksdb/perf_level.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <utility>

#include "common/check.h"
#include "storage/log_recovery.h"
#include "storage/memtable_insert_hints.h"
#include "storage/record_codec.h"
#include "storage/rocks_status.h"
#include "storage/snapshot_staging.h"
#include "storage/wal_file_system.h"
#include "tessera/storage.pb.h"

namespace tessera::storage {
namespace {

constexpr std::string_view kFormatVersionKey = "format_version";
// RocksDB's usual choice: about 1% false positives.
constexpr double kStateBloomBitsPerKey = 10;
// Immutable state memtables merged by one flush (D34), and the share of a
// memtable's bytes its Bloom filter takes.
constexpr int kStateMemtablesPerFlush = 4;
constexpr double kStateMemtableBloomRatio = 0.1;

std::string GroupName(GroupId group) { return "group=" + std::to_string(group); }

rocksdb::DBOptions MakeDbOptions() {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  // The durability argument of docs/formats/storage.md depends on these:
  // one ordered WAL, written on every write, recovered as a prefix.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  options.manual_wal_flush = false;
  options.unordered_write = false;
  options.two_write_queues = false;
  return options;
}

// default, log, state, meta: the order of NodeStore::handles_.
std::vector<rocksdb::ColumnFamilyDescriptor> MakeDescriptors(const NodeStoreOptions& options) {
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.write_buffer_size = options.write_buffer_bytes;
  // One block cache for every column family (RocksDB's default is a
  // private 8 MiB cache per table factory).
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::ColumnFamilyOptions log_options = cf_options;
  log_options.memtable_insert_with_hint_prefix_extractor = LogFamilyInsertHintPrefix();
  rocksdb::ColumnFamilyOptions state_options = cf_options;
  state_options.memtable_insert_with_hint_prefix_extractor = StateFamilyInsertHintPrefix();
  state_options.write_buffer_size = options.state_write_buffer_bytes;
  // Flushes merge several small memtables into one level-0 file, so files
  // and compactions stay as few as with one large memtable; a whole-key
  // Bloom filter per memtable lets point reads skip the immutable ones.
  state_options.min_write_buffer_number_to_merge = kStateMemtablesPerFlush;
  state_options.max_write_buffer_number = 2 * kStateMemtablesPerFlush;
  state_options.memtable_whole_key_filtering = true;
  state_options.memtable_prefix_bloom_size_ratio = kStateMemtableBloomRatio;
  // Point reads of the applied state skip the SST files without their key.
  rocksdb::BlockBasedTableOptions state_table = table;
  state_table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kStateBloomBitsPerKey));
  state_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(state_table));
  return {
      {rocksdb::kDefaultColumnFamilyName, cf_options},
      {std::string(kLogColumnFamily), log_options},
      {std::string(kStateColumnFamily), state_options},
      {std::string(kMetaColumnFamily), cf_options},
  };
}

}  // namespace

Result<std::unique_ptr<NodeStore>> NodeStore::Open(const NodeStoreOptions& options) {
  if (options.path.empty()) return Status::InvalidArgument("NodeStoreOptions.path is empty");
  std::shared_ptr<WalFileSystem> file_system;
  std::unique_ptr<rocksdb::Env> env;
  if (options.file_system) {
    env = rocksdb::NewCompositeEnv(options.file_system);
  } else {
    file_system = std::make_shared<WalFileSystem>(rocksdb::FileSystem::Default(), options.path,
                                                  options.wal_zero_fill);
    file_system->Start();
    env = rocksdb::NewCompositeEnv(file_system);
  }
  rocksdb::DBOptions db_options = MakeDbOptions();
  db_options.env = env.get();
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options.path, MakeDescriptors(options), &handles, &db);
  TESSERA_RETURN_IF_ERROR(FromRocks(s, "opening node store at " + options.path));
  std::unique_ptr<NodeStore> store(
      new NodeStore(std::move(file_system), std::move(env), db, std::move(handles), options));
  TESSERA_RETURN_IF_ERROR(store->InitFormat());
  TESSERA_RETURN_IF_ERROR(store->RecoverSnapshotStaging());
  TESSERA_RETURN_IF_ERROR(store->RecoverSplits());
  return store;
}

NodeStore::NodeStore(std::shared_ptr<WalFileSystem> file_system, std::unique_ptr<rocksdb::Env> env,
                     rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
                     const NodeStoreOptions& options)
    : file_system_(std::move(file_system)),
      env_(std::move(env)),
      db_(db),
      handles_(std::move(handles)),
      options_(options),
      obsolete_version_flush_(options.obsolete_version_flush) {
  TESSERA_CHECK(handles_.size() == 4);
  cfs_ = ColumnFamilies{db_.get(), handles_[1], handles_[2], handles_[3]};
  GroupCommitOptions group_commit = options.group_commit;
  group_commit.stepped = options.stepped_workers;
  writer_ = std::make_unique<GroupCommitWriter>(db_.get(), handles_, group_commit);
  snapshot_jobs_ = std::make_unique<JobThread>(
      "snapshot", limits::kSnapshotJobsQueuedMax,
      options.stepped_workers ? JobThread::Mode::kStepped : JobThread::Mode::kThread);
}

NodeStore::~NodeStore() {
  // A running snapshot job may still wait for the writer: stop the jobs
  // first. Then drain the writer (callbacks fire; a callback's Submit gets
  // Aborted) and join its thread.
  snapshot_jobs_->Stop();
  writer_->Shutdown();
  writer_.reset();
  TESSERA_CHECK(open_snapshots_.load() == 0 && "a GroupSnapshot outlives its NodeStore");
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    rocksdb::Status s = db_->DestroyColumnFamilyHandle(handle);
    TESSERA_CHECK(s.ok());
  }
  db_.reset();
  if (file_system_) file_system_->Stop();
}

WalZeroFillStats NodeStore::wal_zero_fill_stats() const {
  return file_system_ ? file_system_->zero_fill_stats() : WalZeroFillStats{};
}

Status NodeStore::InitFormat() {
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cfs_.meta, kFormatVersionKey, &stored);
  if (s.IsNotFound()) {
    pb::StoreFormat format;
    format.set_format_version(kStorageFormatVersion);
    rocksdb::WriteOptions write;
    write.sync = true;
    return FromRocks(db_->Put(write, cfs_.meta, kFormatVersionKey, EncodeProtoRecord(format)),
                     "writing format version");
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(s, "reading format version"));
  pb::StoreFormat format;
  TESSERA_RETURN_IF_ERROR(DecodeProtoRecord(stored, "format version", &format));
  if (format.format_version() != kStorageFormatVersion) {
    return Status::InvalidArgument("unsupported storage format version " +
                                   std::to_string(format.format_version()));
  }
  return Status::Ok();
}

Status NodeStore::SubmitSnapshotWork(std::function<void()> work) {
  return snapshot_jobs_->Submit(std::move(work));
}

Status NodeStore::SubmitAndWait(rocksdb::WriteBatch batch) {
  TESSERA_CHECK(!writer_->OnWriterThread() && "blocking storage call from a commit callback");
  auto done = std::make_shared<std::promise<Status>>();
  std::future<Status> durable = done->get_future();
  TESSERA_RETURN_IF_ERROR(
      writer_->Submit(std::move(batch), [done](const Status& s) { done->set_value(s); }));
  if (options_.stepped_workers) writer_->RunQueued();  // with the writes queued before it
  return durable.get();
}

Status NodeStore::ProbeWrites() {
  rocksdb::WriteBatch probe;
  TESSERA_CHECK(probe.PutLogData("probe").ok());
  Status written = SubmitAndWait(std::move(probe));
  if (!written.ok()) {
    rocksdb::Status resumed = db_->Resume();  // OK, or still in error: the next probe tells
    if (!resumed.ok()) spdlog::warn("storage.resume_failed reason=\"{}\"", resumed.ToString());
  }
  return written;
}

bool NodeStore::RunWorkers() {
  TESSERA_CHECK(options_.stepped_workers && "RunWorkers on a store with worker threads");
  bool ran = false;
  for (;;) {
    const size_t commits = writer_->RunQueued();
    const size_t jobs = snapshot_jobs_->RunWaiting();
    if (commits == 0 && jobs == 0) return ran;
    ran = true;
  }
}

bool NodeStore::WorkQueued() const {
  return writer_->queued() > 0 || snapshot_jobs_->waiting() > 0;
}

Status NodeStore::SubmitLogWrite(LogWrite write, CommitCallback done) {
  TESSERA_RETURN_IF_ERROR(ValidateLogWrite(write));
  rocksdb::WriteBatch batch;
  AppendLogWrite(write, cfs_.log, &batch);
  return writer_->Submit(std::move(batch), std::move(done));
}

Status NodeStore::WriteLog(LogWrite write) {
  TESSERA_RETURN_IF_ERROR(ValidateLogWrite(write));
  rocksdb::WriteBatch batch;
  AppendLogWrite(write, cfs_.log, &batch);
  return SubmitAndWait(std::move(batch));
}

Result<std::optional<rocksdb::WriteBatch>> NodeStore::CompactionBatch(
    GroupId group, Slot upto, const pb::Membership& membership) const {
  if (upto == UINT64_MAX) return Status::InvalidArgument("compaction upto the last slot id");
  Result<Slot> applied = AppliedIndex(group);
  if (!applied.ok()) return applied.status();
  if (upto > *applied) {
    return Status::InvalidArgument("compaction " + GroupName(group) +
                                   " upto=" + std::to_string(upto) +
                                   " exceeds applied_index=" + std::to_string(*applied) +
                                   ": the applied state does not cover those entries yet");
  }
  Result<pb::LogBase> base = ReadLogBase(cfs_, rocksdb::ReadOptions(), group);
  if (!base.ok()) return base.status();
  if (upto + 1 == base->log_start()) return std::optional<rocksdb::WriteBatch>();
  if (upto + 1 < base->log_start()) {
    return Status::InvalidArgument("compaction " + GroupName(group) +
                                   " upto=" + std::to_string(upto) +
                                   " lies below log_start=" + std::to_string(base->log_start()));
  }
  pb::LogBase next;
  next.set_log_start(upto + 1);
  *next.mutable_base_membership() = membership;
  rocksdb::WriteBatch batch;
  AppendLogBase(group, next, cfs_.log, &batch);
  return std::optional<rocksdb::WriteBatch>(std::move(batch));
}

// The batch is written synced, which also makes durable the unsynced Apply
// that reached `upto` (WAL order).
Status NodeStore::CompactLog(GroupId group, Slot upto, const pb::Membership& membership) {
  Result<std::optional<rocksdb::WriteBatch>> batch = CompactionBatch(group, upto, membership);
  if (!batch.ok()) return batch.status();
  if (!batch->has_value()) return Status::Ok();
  return SubmitAndWait(std::move(**batch));
}

Result<bool> NodeStore::SubmitCompactLog(GroupId group, Slot upto, const pb::Membership& membership,
                                         CommitCallback done) {
  Result<std::optional<rocksdb::WriteBatch>> batch = CompactionBatch(group, upto, membership);
  if (!batch.ok()) return batch.status();
  if (!batch->has_value()) return false;
  TESSERA_RETURN_IF_ERROR(writer_->Submit(std::move(**batch), std::move(done)));
  return true;
}

Result<std::vector<GroupId>> NodeStore::ListGroups() const { return ListStoredGroups(cfs_); }

Result<consensus::RecoveredState> NodeStore::RecoverGroup(GroupId group) const {
  return RecoverGroupState(cfs_, group);
}

Status NodeStore::Apply(GroupId group, Slot applied_index, const std::vector<Mutation>& mutations) {
  TESSERA_RETURN_IF_ERROR(ValidateMutations(mutations));
  Result<Slot> current = AppliedIndex(group);
  if (!current.ok()) return current.status();
  if (applied_index <= *current) {
    return Status::InvalidArgument("apply " + GroupName(group) +
                                   " applied_index=" + std::to_string(applied_index) +
                                   " does not exceed stored " + std::to_string(*current));
  }
  rocksdb::WriteBatch batch;
  AppendApply(group, applied_index, mutations, cfs_.state, &batch);
  rocksdb::WriteOptions write;
  write.sync = false;  // made durable by the next synced write; see header
  return FromRocks(db_->Write(write, &batch), "apply " + GroupName(group));
}

Result<Slot> NodeStore::AppliedIndex(GroupId group) const {
  return ReadAppliedIndex(cfs_, rocksdb::ReadOptions(), group);
}

Result<std::string> NodeStore::Get(GroupId group, std::string_view key) const {
  return ReadUserValue(cfs_, rocksdb::ReadOptions(), group, key);
}

Result<std::vector<KeyValue>> NodeStore::Scan(GroupId group, std::string_view start_key,
                                              std::string_view end_key, size_t limit,
                                              const ValueFilter& wants_value) const {
  std::vector<KeyValue> rows;
  rows.reserve(std::min<size_t>(limit, 1024));
  TESSERA_RETURN_IF_ERROR(Visit(group, start_key, end_key, limit, wants_value,
                                [&rows](std::string_view key, std::string_view value) {
                                  rows.push_back({std::string(key), std::string(value)});
                                  return true;
                                }));
  return rows;
}

Status NodeStore::Visit(GroupId group, std::string_view start_key, std::string_view end_key,
                        size_t limit, const ValueFilter& wants_value,
                        const RowVisitor& visit) const {
  // RocksDB's perf context is per thread: counting is switched on for this
  // scan only and the previous level restored.
  const rocksdb::PerfLevel previous_level = rocksdb::GetPerfLevel();
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::PerfContext* perf = rocksdb::get_perf_context();
  perf->Reset();
  size_t visited = 0;
  const Status status = VisitUserKeys(cfs_, group, start_key, end_key, limit, wants_value,
                                      [&](std::string_view key, std::string_view value) {
                                        ++visited;
                                        return visit(key, value);
                                      });
  const MemtableScanWork work{perf->next_on_memtable_count + perf->seek_on_memtable_count,
                              status.ok() ? visited : 0};
  rocksdb::SetPerfLevel(previous_level);
  if (obsolete_version_flush_.Observe(work, std::chrono::steady_clock::now())) {
    RequestStateFlush();
  }
  return status;
}

void NodeStore::RequestStateFlush() const {
  rocksdb::FlushOptions flush;
  flush.wait = false;              // the scan's caller does not wait for it
  flush.allow_write_stall = true;  // never delays writers beyond the memtable switch
  if (!db_->Flush(flush, cfs_.state).ok()) {
    scan_flush_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

uint64_t NodeStore::state_memtable_entries() const {
  uint64_t entries = 0;
  if (!db_->GetIntProperty(cfs_.state, "rocksdb.num-entries-active-mem-table", &entries)) return 0;
  return entries;
}

Result<std::unique_ptr<GroupSnapshot>> NodeStore::OpenSnapshot(GroupId group) const {
  return GroupSnapshot::Open(cfs_, group, &open_snapshots_);
}

Status NodeStore::InstallSnapshot(GroupId group, const pb::SnapshotMeta& meta,
                                  const std::vector<KeyValue>& data) {
  if (meta.last_slot() == UINT64_MAX)
    return Status::InvalidArgument("snapshot at the last slot id");
  TESSERA_RETURN_IF_ERROR(ValidateKeyValues(data));
  pb::LogBase base;
  base.set_log_start(meta.last_slot() + 1);
  *base.mutable_base_membership() = meta.membership();
  rocksdb::WriteBatch batch;
  AppendReplaceState(group, meta.last_slot(), data, cfs_.state, &batch);
  // Deletes slots <= last_slot only: entries above it are accepted values
  // this acceptor must not forget (Paxos safety), and stay contiguous.
  AppendLogBase(group, base, cfs_.log, &batch);
  return SubmitAndWait(std::move(batch));
}

Status NodeStore::RemoveGroup(GroupId group) {
  rocksdb::WriteBatch batch;
  for (rocksdb::ColumnFamilyHandle* cf : {cfs_.log, cfs_.state}) {
    rocksdb::Status s = batch.DeleteRange(cf, GroupBegin(group), GroupEnd(group));
    TESSERA_CHECK(s.ok());
  }
  for (const std::string& key : {StagingProgressKey(group), InstallMarkerKey(group),
                                 SplitMarkerKey(group), RangeEndKey(group)}) {
    rocksdb::Status s = batch.Delete(cfs_.meta, key);
    TESSERA_CHECK(s.ok());
  }
  return SubmitAndWait(std::move(batch));
}

}  // namespace tessera::storage
