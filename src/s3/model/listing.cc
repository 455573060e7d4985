#include "s3/model/listing.h"

#include <algorithm>
#include <optional>

#include "common/limits.h"
#include "s3/model/full_object_checksum.h"
#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

// Rows read per Scan: small, since a common prefix or a key with many
// versions makes the rest of a batch useless.
constexpr size_t kRowsPerScan = 128;

std::string MinNonEmpty(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return std::min(a, b);
}

class Lister {
 public:
  Lister(const RecordSource& source, const pb::S3ListRequest& request)
      : source_(source), req_(request) {}

  Result<pb::S3ListResponse> Run() {
    const uint64_t bucket = req_.bucket_id();
    std::string cursor = ObjectPrefix(bucket, req_.prefix());
    if (!req_.start_after().empty() && req_.start_after() >= req_.prefix()) {
      auto resume = ResumeAfterMarker();
      if (!resume.ok()) return resume.status();
      cursor = std::max(cursor, *resume);
    }
    std::string prefix_end = PrefixSuccessor(ObjectPrefix(bucket, req_.prefix()));
    const std::string end = MinNonEmpty(prefix_end, req_.end_key());
    const size_t max_items = std::clamp<size_t>(req_.max_keys(), 1, limits::kScanItemsMax);
    while (static_cast<size_t>(out_.items_size()) < max_items) {
      if (!end.empty() && cursor >= end) break;
      auto rows = source_.Scan(cursor, end, kRowsPerScan);
      if (!rows.ok()) return rows.status();
      if (rows->empty()) break;
      std::string next = rows->back().key + '\0';  // past the batch by default
      for (const RecordRow& row : *rows) {
        if (row.key < cursor) continue;  // skipped by an earlier seek
        auto jump = Visit(row);
        if (!jump.ok()) return jump.status();
        cursor = std::move(jump).value();
        if (cursor.empty()) return Finish(max_items);  // nothing can follow
        if (static_cast<size_t>(out_.items_size()) >= max_items) break;
      }
      cursor = std::max(cursor, next);
    }
    return Finish(max_items);
  }

 private:
  // Where the walk resumes after start_after: past all of its records, or,
  // in a version listing with a version id marker, just past that version
  // (remembering the key's latest version for is_latest).
  Result<std::string> ResumeAfterMarker() {
    const uint64_t bucket = req_.bucket_id();
    const std::string& key = req_.start_after();
    if (req_.uploads() && !req_.upload_id_marker().empty()) {
      return UploadKey(bucket, key, req_.upload_id_marker()) + '\0';
    }
    if (!req_.versions() || req_.version_id_marker().empty()) return ObjectEnd(bucket, key);
    auto rows = source_.Scan(HeadKey(bucket, key), HeadKey(bucket, key) + '\0', 1);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return ObjectEnd(bucket, key);
    pb::ObjectHead head;
    if (!head.ParseFromString(rows->front().value)) return Status::Corruption("unparseable head");
    current_key_ = key;
    current_latest_seq_ = head.latest_seq();
    uint64_t seq = 0;
    if (req_.version_id_marker() == "null") {
      seq = head.null_seq();
    } else {
      seq = ParseVersionSeq(req_.version_id_marker()).value_or(0);
    }
    if (seq == 0 || head.latest_seq() == 0) return ObjectEnd(bucket, key);
    return VersionKey(bucket, key, seq) + '\0';
  }

  // A version listing's row: heads set the key's latest (and stand for the
  // only, null, version of keys without version records); version records
  // become entries.
  Result<std::string> VisitVersion(const RecordRow& row, const ParsedKey& parsed) {
    const uint64_t bucket = req_.bucket_id();
    if (parsed.type == RecordType::kHead) {
      pb::ObjectHead head;
      if (!head.ParseFromString(row.value)) return Status::Corruption("unparseable head record");
      current_key_ = std::string(parsed.object_key);
      current_latest_seq_ = head.latest_seq();
      if (head.latest_seq() != 0) return row.key + '\0';
      AddEntry(parsed.object_key, std::move(*head.mutable_latest()), /*is_latest=*/true);
      return ObjectEnd(bucket, parsed.object_key);
    }
    if (parsed.type == RecordType::kVersion) {
      pb::VersionRecord record;
      if (!record.ParseFromString(row.value)) return Status::Corruption("unparseable version");
      const uint64_t seq = ~ReadBigEndian64(parsed.suffix);
      AddEntry(parsed.object_key, std::move(*record.mutable_version()),
               parsed.object_key == current_key_ && seq == current_latest_seq_);
      return row.key + '\0';
    }
    return ObjectEnd(bucket, parsed.object_key);
  }

  // An upload listing's row: upload records become entries (or roll into
  // a common prefix); a key's head and versions are skipped to its first
  // upload record, its parts to the key's end.
  Result<std::string> VisitUpload(const RecordRow& row, const ParsedKey& parsed) {
    const uint64_t bucket = req_.bucket_id();
    if (parsed.type == RecordType::kHead || parsed.type == RecordType::kVersion) {
      return UploadKey(bucket, parsed.object_key, "");
    }
    if (parsed.type != RecordType::kUpload) return ObjectEnd(bucket, parsed.object_key);
    if (auto past = RollUp(parsed.object_key)) return std::move(*past);
    pb::UploadRecord upload;
    if (!upload.ParseFromString(row.value)) return Status::Corruption("unparseable upload record");
    pb::S3ListEntry* e = out_.add_items()->mutable_entry();
    e->set_key(std::string(parsed.object_key));
    e->set_upload_id(upload.upload_id());
    e->set_last_modified_ms(upload.initiated_ms());
    e->set_owner(upload.template_().owner());
    e->set_storage_class(upload.template_().storage_class());
    if (!upload.checksum_algorithm().empty()) {
      e->set_checksum_algorithm(upload.checksum_algorithm());
      e->set_checksum_type(upload.checksum_full_object() ? "FULL_OBJECT" : "COMPOSITE");
    }
    return row.key + '\0';
  }

  // With a delimiter, when `key` rolls into a common prefix: emits it (once:
  // the walk then seeks past it; and only after start_after) and returns
  // where the walk continues. nullopt when the key does not roll up.
  std::optional<std::string> RollUp(std::string_view key) {
    if (req_.delimiter().empty()) return std::nullopt;
    const std::string_view rest = key.substr(std::min(key.size(), req_.prefix().size()));
    const size_t at = rest.find(req_.delimiter());
    if (at == std::string_view::npos) return std::nullopt;
    std::string common(key.substr(0, req_.prefix().size() + at + req_.delimiter().size()));
    if (req_.start_after().empty() || common > req_.start_after()) {
      out_.add_items()->set_common_prefix(common);
    }
    // Past every key under the common prefix; when nothing can follow (the
    // prefix is all 0xFF), past the bucket.
    const uint64_t bucket = req_.bucket_id();
    std::string after = PrefixSuccessor(common);
    return after.empty() ? PrefixSuccessor(BucketPrefix(bucket)) : ObjectPrefix(bucket, after);
  }

  pb::S3ListResponse Finish(size_t max_items) {
    out_.set_truncated(static_cast<size_t>(out_.items_size()) >= max_items);
    return std::move(out_);
  }

  // Handles one row; returns where the walk continues (the row's key + 1 at
  // least).
  Result<std::string> Visit(const RecordRow& row) {
    auto parsed = ParseObjectRecordKey(row.key);
    if (!parsed || parsed->bucket_id != req_.bucket_id()) return row.key + '\0';
    const std::string_view key = parsed->object_key;
    const uint64_t bucket = req_.bucket_id();
    if (req_.uploads()) return VisitUpload(row, *parsed);
    if (auto past = RollUp(key)) return std::move(*past);
    if (req_.versions()) return VisitVersion(row, *parsed);
    if (parsed->type == RecordType::kHead) {
      pb::ObjectHead head;
      if (!head.ParseFromString(row.value)) return Status::Corruption("unparseable head record");
      if (!head.latest().delete_marker()) {
        AddEntry(key, std::move(*head.mutable_latest()), /*is_latest=*/true);
      }
    }
    return ObjectEnd(bucket, key);
  }

  // Takes the version's strings (the caller's parsed record, not used
  // after).
  void AddEntry(std::string_view key, pb::ObjectVersion&& v, bool is_latest) {
    pb::S3ListEntry* e = out_.add_items()->mutable_entry();
    e->set_key(std::string(key));
    e->set_etag(std::move(*v.mutable_etag()));
    e->set_size(v.size());
    e->set_last_modified_ms(v.last_modified_ms());
    e->set_owner(std::move(*v.mutable_owner()));
    e->set_storage_class(std::move(*v.mutable_storage_class()));
    if (v.checksums_size() > 0) {
      e->set_checksum_algorithm(v.checksums(0).algorithm());
      e->set_checksum_type(std::string(ChecksumTypeOf(v.checksums(0).value())));
    }
    if (req_.versions()) {
      e->set_version_id(std::move(*v.mutable_version_id()));
      e->set_is_latest(is_latest);
      e->set_delete_marker(v.delete_marker());
    }
  }

  const RecordSource& source_;
  const pb::S3ListRequest& req_;
  pb::S3ListResponse out_;
  std::string current_key_;         // version listings: the key being walked
  uint64_t current_latest_seq_ = 0;  // and its head's latest version
};

}  // namespace

Result<pb::S3ListResponse> ListPartition(const RecordSource& source,
                                         const pb::S3ListRequest& request) {
  return Lister(source, request).Run();
}

}  // namespace tessera::s3::model
