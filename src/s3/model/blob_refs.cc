#include "s3/model/blob_refs.h"

#include "s3/model/s3_keys.h"
#include "s3/model/stored_record.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {
namespace {

constexpr size_t kBucketIdBytes = 8;
// Rows read per RecordSource::Scan call.
constexpr size_t kRowsPerScan = 1'000;

void AppendRefs(const google::protobuf::RepeatedPtrField<pb::BlobRef>& refs,
                std::vector<std::string>* blob_ids) {
  for (const pb::BlobRef& ref : refs) blob_ids->push_back(ref.blob_id());
}

}  // namespace

Status AppendRecordBlobs(std::string_view table_key, std::string_view value,
                         std::vector<std::string>* blob_ids) {
  const std::optional<ParsedKey> parsed = ParseObjectRecordKey(table_key);
  if (!parsed) return Status::Ok();
  switch (parsed->type) {
    case RecordType::kHead: {
      auto head = ParseStoredRecord<pb::ObjectHead>(value, "head");
      if (!head.ok()) return head.status();
      AppendRefs(head->latest().blobs(), blob_ids);
      return Status::Ok();
    }
    case RecordType::kVersion: {
      auto version = ParseStoredRecord<pb::VersionRecord>(value, "version");
      if (!version.ok()) return version.status();
      AppendRefs(version->version().blobs(), blob_ids);
      return Status::Ok();
    }
    case RecordType::kPart: {
      auto part = ParseStoredRecord<pb::PartRecord>(value, "part");
      if (!part.ok()) return part.status();
      AppendRefs(part->blobs(), blob_ids);
      return Status::Ok();
    }
    case RecordType::kUpload:
    case RecordType::kData: return Status::Ok();  // inline bytes are no blobs
  }
  return Status::Ok();
}

std::string OwnerRecordsBegin(std::string_view owner) {
  std::string out(owner);
  out.push_back('\0');
  return out;
}

std::string OwnerRecordsEnd(std::string_view owner) {
  std::string out(owner);
  out.push_back('\0');
  out.push_back(static_cast<char>(0xFF));
  return out;
}

Result<std::set<std::string>> ReferencedAmong(const RecordSource& records, std::string_view owner,
                                              const std::set<std::string>& candidates,
                                              size_t rows_max) {
  if (owner.size() < kBucketIdBytes || ReadBigEndian64(owner) == kInternalBucketId) {
    return Status::InvalidArgument("blob owner is not an object prefix");
  }
  std::set<std::string> referenced;
  if (candidates.empty()) return referenced;
  std::string cursor = OwnerRecordsBegin(owner);
  const std::string end = OwnerRecordsEnd(owner);
  size_t read = 0;
  std::vector<std::string> ids;
  while (true) {
    auto rows = records.Scan(cursor, end, kRowsPerScan);
    if (!rows.ok()) return rows.status();
    for (const RecordRow& row : *rows) {
      ids.clear();
      TESSERA_RETURN_IF_ERROR(AppendRecordBlobs(row.key, row.value, &ids));
      for (const std::string& id : ids) {
        if (candidates.count(id)) referenced.insert(id);
      }
    }
    read += rows->size();
    if (rows->size() < kRowsPerScan) return referenced;
    if (read >= rows_max) {
      return Status::Unavailable("object has more than " + std::to_string(rows_max) + " records");
    }
    cursor = rows->back().key + '\0';
  }
}

Result<BlobScanPage> ScanReferencedBlobs(const RecordSource& records, const std::string& start,
                                         const std::string& end, size_t rows) {
  BlobScanPage page;
  auto scanned = records.Scan(start, end, rows);
  if (!scanned.ok()) return scanned.status();
  for (const RecordRow& row : *scanned) {
    TESSERA_RETURN_IF_ERROR(AppendRecordBlobs(row.key, row.value, &page.referenced));
  }
  if (scanned->size() == rows && rows > 0) page.next = scanned->back().key + '\0';
  return page;
}

}  // namespace tessera::s3::model
