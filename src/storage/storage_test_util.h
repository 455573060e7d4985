// Helpers shared by the storage tests: a fresh temporary directory per test,
// raw RocksDB access to a closed store (the seam for corruption tests), and
// builders / comparisons for consensus records.
#pragma once

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "storage/column_families.h"
#include "storage/node_store.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage::testing {

// A fresh directory from mkdtemp, removed with its contents at destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-storage-XXXXXX");
    char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The store's RocksDB opened directly, bypassing every check of NodeStore.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
        {rocksdb::kDefaultColumnFamilyName, {}},
        {std::string(kLogColumnFamily), {}},
        {std::string(kStateColumnFamily), {}},
        {std::string(kMetaColumnFamily), {}}};
    rocksdb::DBOptions options;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, path, descriptors, &handles_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }
  ~RawDb() {
    for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
  }

  rocksdb::ColumnFamilyHandle* log() const { return handles_[1]; }
  rocksdb::ColumnFamilyHandle* state() const { return handles_[2]; }
  rocksdb::ColumnFamilyHandle* meta() const { return handles_[3]; }

  std::string Get(rocksdb::ColumnFamilyHandle* cf, const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf, key, &value);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return value;
  }
  void Put(rocksdb::ColumnFamilyHandle* cf, const std::string& key, const std::string& value) {
    rocksdb::Status s = db_->Put(rocksdb::WriteOptions(), cf, key, value);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  void Delete(rocksdb::ColumnFamilyHandle* cf, const std::string& key) {
    rocksdb::Status s = db_->Delete(rocksdb::WriteOptions(), cf, key);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Opens a store with `options`; null (and a test failure) when it fails.
inline std::unique_ptr<NodeStore> OpenStoreWith(const NodeStoreOptions& options) {
  Result<std::unique_ptr<NodeStore>> store = NodeStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

inline std::unique_ptr<NodeStore> OpenStore(const std::string& path,
                                            GroupCommitOptions group_commit = {}) {
  NodeStoreOptions options;
  options.path = path;
  options.group_commit = group_commit;
  options.write_buffer_bytes = 4 << 20;
  return OpenStoreWith(options);
}

// Builds a LogWrite fluently: LogWriteFor(7).HardState(hs).Entries(entries).
class LogWriteFor {
 public:
  explicit LogWriteFor(GroupId group) { write_.group_id = group; }
  LogWriteFor& HardState(pb::HardState hard_state) {
    write_.hard_state = std::move(hard_state);
    return *this;
  }
  LogWriteFor& TruncateFrom(Slot slot) {
    write_.truncate_from = slot;
    return *this;
  }
  LogWriteFor& Entries(std::vector<pb::Entry> entries) {
    write_.entries = std::move(entries);
    return *this;
  }
  LogWriteFor& Base(pb::LogBase base) {
    write_.log_base = std::move(base);
    return *this;
  }
  operator LogWrite() const { return write_; }  // NOLINT: implicit by design

 private:
  LogWrite write_;
};

inline pb::Entry MakeEntry(Slot slot, uint64_t round, const std::string& command) {
  pb::Entry entry;
  entry.set_slot(slot);
  entry.mutable_ballot()->set_round(round);
  entry.mutable_ballot()->set_replica(1);
  entry.set_type(pb::ENTRY_COMMAND);
  entry.set_command(command);
  entry.set_request_id(slot * 1000 + round);
  return entry;
}

inline std::vector<pb::Entry> MakeEntries(Slot first, Slot last, uint64_t round,
                                          const std::string& tag = "cmd") {
  std::vector<pb::Entry> entries;
  for (Slot s = first; s <= last; ++s) {
    entries.push_back(MakeEntry(s, round, tag + "-" + std::to_string(s)));
  }
  return entries;
}

inline pb::HardState MakeHardState(uint64_t round, uint32_t replica, Slot chosen) {
  pb::HardState hs;
  hs.mutable_promised()->set_round(round);
  hs.mutable_promised()->set_replica(replica);
  hs.set_chosen_index(chosen);
  return hs;
}

inline pb::Membership MakeMembership(std::vector<uint32_t> voters,
                                     std::vector<uint32_t> learners = {}) {
  pb::Membership m;
  for (uint32_t v : voters) m.add_voters(v);
  for (uint32_t l : learners) m.add_learners(l);
  return m;
}

inline ::testing::AssertionResult ProtoEq(const google::protobuf::Message& a,
                                          const google::protobuf::Message& b) {
  if (google::protobuf::util::MessageDifferencer::Equals(a, b)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "\n" << a.DebugString() << "vs\n" << b.DebugString();
}

inline ::testing::AssertionResult EntriesEq(const std::vector<pb::Entry>& a,
                                            const std::vector<pb::Entry>& b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    ::testing::AssertionResult eq = ProtoEq(a[i], b[i]);
    if (!eq) return ::testing::AssertionFailure() << "entry " << i << ": " << eq.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::storage::testing
