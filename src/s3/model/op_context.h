// Internal to src/s3/model: the pieces every S3 op uses — reading records,
// the op's pending effects (OpContext), outcomes, usage arithmetic — and
// WriteNewObject, the one way a new object version enters a key (PutObject
// and CompleteMultipartUpload both end in it).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/result.h"
#include "s3/model/blob_refs.h"
#include "s3/model/s3_keys.h"
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

inline constexpr const char* kNullVersionId = "null";

// Parses a stored record read from `reader` (a StateAccess, a PointReader:
// anything whose Get(key) answers Result<std::optional<std::string>>);
// Corruption names the key's kind when it fails.
template <typename Message, typename Reader>
Result<std::optional<Message>> ReadRecord(Reader& reader, const std::string& key,
                                          const char* kind) {
  auto raw = reader.Get(key);
  if (!raw.ok()) return raw.status();
  if (!raw->has_value()) return std::optional<Message>();
  Message message;
  if (!message.ParseFromString(**raw)) {
    return Status::Corruption(std::string("unparseable ") + kind + " record");
  }
  return std::optional<Message>(std::move(message));
}

// The op's state with its own writes, as the reference scan reads it.
class StateRecordSource : public RecordSource {
 public:
  explicit StateRecordSource(StateAccess& state) : state_(state) {}
  Result<std::vector<RecordRow>> Scan(const std::string& start, const std::string& end,
                                      size_t limit) const override {
    auto rows = state_.ScanState(start, end, limit);
    if (!rows.ok()) return rows.status();
    std::vector<RecordRow> out;
    out.reserve(rows->size());
    for (auto& [key, value] : *rows) out.push_back({std::move(key), std::move(value)});
    return out;
  }

 private:
  StateAccess& state_;
};

// The op's pending effects, written once at the end. The GC record names
// its owner (bucket id, key) and never a blob that a record of the key
// still references once the op's writes are in (a retried op that
// re-applies the same blob ids, or a refused retry of a put that did apply,
// must not queue blobs the head keeps).
class OpContext {
 public:
  OpContext(StateAccess& state, uint64_t bucket_id, std::string key, uint64_t slot)
      : state_(state), bucket_id_(bucket_id), key_(std::move(key)), slot_(slot) {
    gc_.set_bucket_id(bucket_id_);
    gc_.set_key(key_);
  }

  Status Load() {
    auto head = ReadRecord<pb::ObjectHead>(state_, HeadKey(bucket_id_, key_), "head");
    if (!head.ok()) return head.status();
    head_ = std::move(head).value();
    auto usage = ReadRecord<pb::BucketUsage>(state_, UsageKey(bucket_id_), "usage");
    if (!usage.ok()) return usage.status();
    usage_ = usage->value_or(pb::BucketUsage());
    return Status::Ok();
  }

  // The latest version when it is not a delete marker.
  const pb::ObjectVersion* LiveLatest() const {
    if (!head_ || head_->latest().delete_marker()) return nullptr;
    return &head_->latest();
  }
  std::optional<pb::ObjectHead>& head() { return head_; }
  const std::optional<pb::ObjectHead>& head() const { return head_; }
  pb::BucketUsage& usage() { return usage_; }
  uint64_t slot() const { return slot_; }

  StateAccess& state() { return state_; }
  uint64_t bucket_id() const { return bucket_id_; }
  const std::string& key() const { return key_; }
  void CollectBlobs(const google::protobuf::RepeatedPtrField<pb::BlobRef>& blobs) {
    for (const pb::BlobRef& b : blobs) gc_.add_blob_ids(b.blob_id());
  }
  // Usage and GC only (ops that change no head).
  void CommitUsageAndGc() {
    state_.Put(UsageKey(bucket_id_), usage_.SerializeAsString());
    CommitGcOnly();
  }

  void Collect(const pb::ObjectVersion& dropped) {
    for (const pb::BlobRef& b : dropped.blobs()) gc_.add_blob_ids(b.blob_id());
  }

  Result<std::optional<pb::VersionRecord>> ReadVersion(uint64_t seq) {
    return ReadRecord<pb::VersionRecord>(state_, VersionKey(bucket_id_, key_, seq), "version");
  }
  void WriteVersion(uint64_t seq, const pb::VersionRecord& record) {
    state_.Put(VersionKey(bucket_id_, key_, seq), record.SerializeAsString());
  }
  void DeleteVersion(uint64_t seq) { state_.Delete(VersionKey(bucket_id_, key_, seq)); }

  // Data records (the inline bytes of version `seq`; 0: the latest of a key
  // without version records).
  Result<std::optional<pb::ObjectData>> ReadData(uint64_t seq) {
    return ReadRecord<pb::ObjectData>(state_, DataKey(bucket_id_, key_, seq), "data");
  }
  void WriteData(uint64_t seq, std::string bytes) {
    pb::ObjectData data;
    data.set_data(std::move(bytes));
    state_.Put(DataKey(bucket_id_, key_, seq), data.SerializeAsString());
  }
  // Removes the data record of `dropped` (stored at `seq`), if it has one.
  void DropData(uint64_t seq, const pb::ObjectVersion& dropped) {
    if (dropped.bytes_in_data_record()) state_.Delete(DataKey(bucket_id_, key_, seq));
  }

  // Writes head (or deletes it when absent), usage and the GC record.
  void Commit(bool live_before) {
    const bool live_after = LiveLatest() != nullptr;
    usage_.set_objects(usage_.objects() + (live_after ? 1 : 0) - (live_before ? 1 : 0));
    if (head_) {
      state_.Put(HeadKey(bucket_id_, key_), head_->SerializeAsString());
    } else {
      state_.Delete(HeadKey(bucket_id_, key_));
    }
    state_.Put(UsageKey(bucket_id_), usage_.SerializeAsString());
    CommitGcOnly();
  }

  // Only the GC record: for ops that change nothing else (failed puts).
  void CommitGcOnly() {
    DropStillReferenced();
    if (gc_.blob_ids_size() > 0) state_.Put(GcKey(slot_), gc_.SerializeAsString());
  }

 private:
  // Removes from gc_ duplicates and every id a record of the key names
  // (the op's writes included); when the key has too many records to scan,
  // at least the head's latest version is checked.
  void DropStillReferenced() {
    if (gc_.blob_ids_size() == 0) return;
    const std::set<std::string> candidates(gc_.blob_ids().begin(), gc_.blob_ids().end());
    auto referenced = ReferencedAmong(StateRecordSource(state_), ObjectPrefix(bucket_id_, key_),
                                      candidates, limits::kGcCommitScanRowsMax);
    std::set<std::string> keep;
    if (referenced.ok()) {
      keep = std::move(referenced).value();
    } else if (head_) {
      for (const pb::BlobRef& b : head_->latest().blobs()) keep.insert(b.blob_id());
    }
    gc_.clear_blob_ids();
    for (const std::string& id : candidates) {
      if (!keep.count(id)) gc_.add_blob_ids(id);
    }
  }

  StateAccess& state_;
  const uint64_t bucket_id_;
  const std::string key_;
  const uint64_t slot_;
  std::optional<pb::ObjectHead> head_;
  pb::BucketUsage usage_;
  pb::GcRecord gc_;
};

inline pb::S3OpResult Outcome(pb::S3Outcome outcome, std::string message = {}) {
  pb::S3OpResult r;
  r.set_outcome(outcome);
  r.set_message(std::move(message));
  return r;
}

inline std::string_view ValidateTarget(uint64_t bucket_id, const std::string& key) {
  if (bucket_id == kInternalBucketId) return "bucket id 0 is reserved";
  if (key.empty()) return "empty object key";
  if (key.find('\0') != std::string::npos) return "object key contains NUL";
  return {};
}

inline void AddBytes(pb::BucketUsage& usage, int64_t delta) { usage.set_bytes(usage.bytes() + delta); }
inline void AddVersions(pb::BucketUsage& usage, int64_t delta) {
  usage.set_versions(usage.versions() + delta);
}

// PutObject-style preconditions (If-None-Match: *, If-Match) against the
// key's live latest version; the refusal, or nullopt when they hold.
std::optional<pb::S3OpResult> CheckWriteConditions(OpContext& ctx, bool if_none_match_any,
                                                   const std::string& if_match_etag);

// Makes `object` the latest version of the context's key under
// `versioning` (unversioned: replaces the current one, whose blobs go to
// GC; enabled: a new version; suspended: replaces the null version), then
// commits head, usage and GC. `live_before`: the key had a live latest
// version when the op started. Returns the op's result (version id, object).
Result<pb::S3OpResult> WriteNewObject(OpContext& ctx, pb::ObjectVersion object,
                                      pb::BucketVersioning versioning, bool live_before);

}  // namespace tessera::s3::model
