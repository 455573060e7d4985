#include "s3/model/object_read.h"

#include "s3/model/op_context.h"

#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

// A version found at `seq` (0: the head's latest of a key without version
// records), with its bytes filled in or stripped as asked.
Result<pb::S3GetResponse> Found(const PointReader& records, const pb::S3GetRequest& request,
                                pb::ObjectVersion version, uint64_t seq) {
  pb::S3GetResponse out;
  out.set_found(true);
  if (!request.with_data()) {
    version.clear_inline_data();  // an old-style record's bytes
  } else if (version.bytes_in_data_record()) {
    auto data = ReadRecord<pb::ObjectData>(
        records, DataKey(request.bucket_id(), request.key(), seq), "data");
    if (!data.ok()) return data.status();
    if (!data->has_value()) return Status::Corruption("data record missing");
    if ((*data)->data().size() != version.size()) {
      return Status::Corruption("data record size differs from its version's");
    }
    version.set_inline_data(std::move(*(*data)->mutable_data()));
    version.set_bytes_in_data_record(false);
  }
  *out.mutable_version() = std::move(version);
  return out;
}

Result<pb::S3GetResponse> FoundVersionRecord(const PointReader& records,
                                             const pb::S3GetRequest& request, uint64_t seq) {
  auto record = ReadRecord<pb::VersionRecord>(
      records, VersionKey(request.bucket_id(), request.key(), seq), "version");
  if (!record.ok()) return record.status();
  if (!record->has_value() || (*record)->version().version_id() != request.version_id()) {
    return pb::S3GetResponse();
  }
  return Found(records, request, std::move(*(*record)->mutable_version()), seq);
}

}  // namespace

Result<pb::S3GetResponse> ReadObject(const PointReader& records, const pb::S3GetRequest& request) {
  const std::string& id = request.version_id();
  std::optional<uint64_t> seq;
  if (!id.empty() && id != kNullVersionId) {
    seq = ParseVersionSeq(id);
    if (!seq) return Status::InvalidArgument("Invalid version id specified");
    // A version by id is its record: no head read needed.
    return FoundVersionRecord(records, request, *seq);
  }
  auto head = ReadRecord<pb::ObjectHead>(records, HeadKey(request.bucket_id(), request.key()),
                                         "head");
  if (!head.ok()) return head.status();
  if (!head->has_value()) return pb::S3GetResponse();
  pb::ObjectHead& h = **head;
  if (id.empty() || h.latest_seq() == 0) {
    // The latest; for "null", a key without version records has only the
    // null version, its latest.
    const uint64_t latest_seq = h.latest_seq();
    return Found(records, request, std::move(*h.mutable_latest()), latest_seq);
  }
  if (h.null_seq() == 0) return pb::S3GetResponse();
  return FoundVersionRecord(records, request, h.null_seq());
}

}  // namespace tessera::s3::model
