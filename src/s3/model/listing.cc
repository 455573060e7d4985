#include "s3/model/listing.h"

#include <algorithm>
#include <optional>

#include "common/check.h"
#include "common/limits.h"
#include "s3/model/full_object_checksum.h"
#include "s3/model/s3_keys.h"
#include "s3/model/stored_record.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

// Rows one Walk visits at most. A walk is cut short sooner when the
// listing is full or when kSkippedRowsBeforeSeek rows in a row lie before
// the cursor (a key's versions and data records, or the keys of a common
// prefix): the next walk then seeks to the cursor instead of stepping.
constexpr size_t kRowsPerWalk = 4096;
constexpr size_t kSkippedRowsBeforeSeek = 16;
static_assert(kRowsPerWalk <= limits::kScanItemsMax);

std::string MinNonEmpty(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return std::min(a, b);
}

class Lister {
 public:
  Lister(const RecordSource& source, const pb::S3ListRequest& request)
      : source_(source),
        req_(request),
        max_items_(std::clamp<size_t>(request.max_keys(), 1, limits::kScanItemsMax)) {}

  Result<pb::S3ListResponse> Run() {
    const uint64_t bucket = req_.bucket_id();
    cursor_ = ObjectPrefix(bucket, req_.prefix());
    if (!req_.start_after().empty() && req_.start_after() >= req_.prefix()) {
      auto resume = ResumeAfterMarker();
      if (!resume.ok()) return resume.status();
      cursor_ = std::max(cursor_, *resume);
    }
    end_ = MinNonEmpty(PrefixSuccessor(ObjectPrefix(bucket, req_.prefix())), req_.end_key());
    while (!done_ && !Full() && (end_.empty() || cursor_ < end_)) {
      auto more = WalkFromCursor();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    out_.set_truncated(Full());
    return std::move(out_);
  }

 private:
  bool Full() const { return static_cast<size_t>(out_.items_size()) >= max_items_; }

  // One walk from the cursor, visiting rows in place. Returns whether the
  // range may hold more rows past the cursor.
  Result<bool> WalkFromCursor() {
    const std::string start = cursor_;
    size_t rows = 0;
    size_t skipped = 0;  // rows in a row before the cursor
    bool stopped = false;
    Status failed;
    const auto visit = [&](std::string_view key, std::string_view value) {
      ++rows;
      if (key < cursor_) {  // left behind by an earlier row's jump
        if (++skipped == kSkippedRowsBeforeSeek) {
          stopped = true;
          return false;
        }
      } else {
        skipped = 0;
        failed = VisitRow(key, value);
        if (!failed.ok() || done_ || Full()) {
          stopped = true;
          return false;
        }
        // So a walk that ends at its row limit resumes past its last row.
        TESSERA_CHECK(key < cursor_);
      }
      return true;
    };
    const auto wants_value = [this](std::string_view key) { return WantsValue(key); };
    TESSERA_RETURN_IF_ERROR(source_.Walk(start, end_, kRowsPerWalk, wants_value, visit));
    TESSERA_RETURN_IF_ERROR(failed);
    return stopped || rows == kRowsPerWalk;
  }

  // Whether VisitRow reads the value of the row at `key`: only the records
  // it parses, and none the cursor has passed.
  bool WantsValue(std::string_view key) const {
    if (key < cursor_) return false;
    auto parsed = ParseObjectRecordKey(key);
    if (!parsed || parsed->bucket_id != req_.bucket_id()) return false;
    if (req_.uploads()) return parsed->type == RecordType::kUpload;
    if (req_.versions()) {
      return parsed->type == RecordType::kHead || parsed->type == RecordType::kVersion;
    }
    return parsed->type == RecordType::kHead;
  }

  // The walk continues at `next`; empty: nothing can follow.
  void JumpTo(std::string next) {
    if (next.empty()) {
      done_ = true;
    } else {
      cursor_ = std::move(next);
    }
  }

  // The walk continues just past the row at `key`.
  void JumpPast(std::string_view key) {
    cursor_.assign(key);
    cursor_.push_back('\0');
  }

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
    auto parsed_head = ParseStoredRecord<pb::ObjectHead>(rows->front().value, "head");
    if (!parsed_head.ok()) return parsed_head.status();
    const pb::ObjectHead& head = *parsed_head;
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
  Status VisitVersion(std::string_view row_key, std::string_view value, const ParsedKey& parsed) {
    const uint64_t bucket = req_.bucket_id();
    if (parsed.type == RecordType::kHead) {
      auto head = ParseStoredRecord<pb::ObjectHead>(value, "head");
      if (!head.ok()) return head.status();
      current_key_ = std::string(parsed.object_key);
      current_latest_seq_ = head->latest_seq();
      if (head->latest_seq() != 0) {
        JumpPast(row_key);
        return Status::Ok();
      }
      AddEntry(parsed.object_key, std::move(*head->mutable_latest()), /*is_latest=*/true);
      AssignObjectEnd(bucket, parsed.object_key, &cursor_);
      return Status::Ok();
    }
    if (parsed.type == RecordType::kVersion) {
      auto record = ParseStoredRecord<pb::VersionRecord>(value, "version");
      if (!record.ok()) return record.status();
      const uint64_t seq = ~ReadBigEndian64(parsed.suffix);
      AddEntry(parsed.object_key, std::move(*record->mutable_version()),
               parsed.object_key == current_key_ && seq == current_latest_seq_);
      JumpPast(row_key);
      return Status::Ok();
    }
    AssignObjectEnd(bucket, parsed.object_key, &cursor_);
    return Status::Ok();
  }

  // An upload listing's row: upload records become entries (or roll into
  // a common prefix); a key's head and versions are skipped to its first
  // upload record, its parts to the key's end.
  Status VisitUpload(std::string_view row_key, std::string_view value, const ParsedKey& parsed) {
    const uint64_t bucket = req_.bucket_id();
    if (parsed.type == RecordType::kHead || parsed.type == RecordType::kVersion) {
      JumpTo(UploadKey(bucket, parsed.object_key, ""));
      return Status::Ok();
    }
    if (parsed.type != RecordType::kUpload) {
      AssignObjectEnd(bucket, parsed.object_key, &cursor_);
      return Status::Ok();
    }
    if (RollUp(parsed.object_key)) return Status::Ok();
    auto parsed_upload = ParseStoredRecord<pb::UploadRecord>(value, "upload");
    if (!parsed_upload.ok()) return parsed_upload.status();
    const pb::UploadRecord& upload = *parsed_upload;
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
    JumpPast(row_key);
    return Status::Ok();
  }

  // With a delimiter, when `key` rolls into a common prefix: emits it (once:
  // the walk then seeks past it; and only after start_after), moves the
  // cursor past it and returns true. False when the key does not roll up.
  bool RollUp(std::string_view key) {
    if (req_.delimiter().empty()) return false;
    const std::string_view rest = key.substr(std::min(key.size(), req_.prefix().size()));
    const size_t at = rest.find(req_.delimiter());
    if (at == std::string_view::npos) return false;
    std::string common(key.substr(0, req_.prefix().size() + at + req_.delimiter().size()));
    if (req_.start_after().empty() || common > req_.start_after()) {
      out_.add_items()->set_common_prefix(common);
    }
    // Past every key under the common prefix; when nothing can follow (the
    // prefix is all 0xFF), past the bucket.
    const uint64_t bucket = req_.bucket_id();
    std::string after = PrefixSuccessor(common);
    JumpTo(after.empty() ? PrefixSuccessor(BucketPrefix(bucket)) : ObjectPrefix(bucket, after));
    return true;
  }

  // Handles one row at or past the cursor and moves the cursor past it at
  // least. `value` is the row's record when WantsValue(row_key), else empty.
  Status VisitRow(std::string_view row_key, std::string_view value) {
    auto parsed = ParseObjectRecordKey(row_key);
    if (!parsed || parsed->bucket_id != req_.bucket_id()) {
      JumpPast(row_key);
      return Status::Ok();
    }
    const std::string_view key = parsed->object_key;
    if (req_.uploads()) return VisitUpload(row_key, value, *parsed);
    if (RollUp(key)) return Status::Ok();
    if (req_.versions()) return VisitVersion(row_key, value, *parsed);
    if (parsed->type == RecordType::kHead) {
      auto head = ParseStoredRecord<pb::ObjectHead>(value, "head");
      if (!head.ok()) return head.status();
      if (!head->latest().delete_marker()) {
        AddEntry(key, std::move(*head->mutable_latest()), /*is_latest=*/true);
      }
    }
    AssignObjectEnd(req_.bucket_id(), key, &cursor_);
    return Status::Ok();
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
  const size_t max_items_;
  // Rows before the cursor are passed over; the end of the range is end_
  // (empty: none). done_: nothing can follow in the whole table.
  std::string cursor_;
  std::string end_;
  bool done_ = false;
  pb::S3ListResponse out_;
  std::string current_key_;         // version listings: the key being walked
  uint64_t current_latest_seq_ = 0;  // and its head's latest version
};

}  // namespace

Status RecordSource::Walk(const std::string& start, const std::string& end, size_t limit,
                          const KeyFilter& wants_value, const RowVisitor& visit) const {
  auto rows = Scan(start, end, limit);
  if (!rows.ok()) return rows.status();
  for (const RecordRow& row : *rows) {
    const bool wanted = !wants_value || wants_value(row.key);
    if (!visit(row.key, wanted ? std::string_view(row.value) : std::string_view())) break;
  }
  return Status::Ok();
}

Result<pb::S3ListResponse> ListPartition(const RecordSource& source,
                                         const pb::S3ListRequest& request) {
  return Lister(source, request).Run();
}

}  // namespace tessera::s3::model
