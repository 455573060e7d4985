#include "s3/model/object_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "s3/model/bucket_config_ops.h"
#include "s3/model/gc_ops.h"
#include "s3/model/multipart_ops.h"
#include "s3/model/op_context.h"
#include "s3/model/s3_keys.h"
#include "s3/model/tagging_ops.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

// Moves the inline bytes of a key's version-less latest (data record at
// seq 0, or inside a record written before data records existed) to the
// data record of `seq`, the version record it becomes.
Status MoveLatestBytes(OpContext& ctx, uint64_t seq) {
  pb::ObjectVersion& latest = *ctx.head()->mutable_latest();
  if (latest.bytes_in_data_record()) {
    auto data = ctx.ReadData(0);
    if (!data.ok()) return data.status();
    if (!data->has_value()) return Status::Corruption("data record missing");
    ctx.DropData(0, latest);
    ctx.WriteData(seq, std::move(*(*data)->mutable_data()));
  } else if (!latest.inline_data().empty()) {
    ctx.WriteData(seq, std::move(*latest.mutable_inline_data()));
    latest.clear_inline_data();
    latest.set_bytes_in_data_record(true);
  }
  return Status::Ok();
}

// A key written only while unversioned has no version records; before its
// first versioned write its latest becomes the "null" version record.
Status EnsureVersionChain(OpContext& ctx) {
  auto& head = ctx.head();
  if (!head || head->latest_seq() != 0) return Status::Ok();
  const uint64_t seq = std::max<uint64_t>(head->next_seq(), 1);
  TESSERA_RETURN_IF_ERROR(MoveLatestBytes(ctx, seq));
  pb::VersionRecord record;
  *record.mutable_version() = head->latest();
  record.mutable_version()->set_version_id(kNullVersionId);
  ctx.WriteVersion(seq, record);
  AddVersions(ctx.usage(), 1);
  head->set_latest_seq(seq);
  head->set_null_seq(seq);
  head->set_next_seq(seq + 1);
  return Status::Ok();
}

// Removes version `seq` from the chain; the head moves to the next older
// version when `seq` was the latest (or disappears with the last version).
Status UnlinkVersion(OpContext& ctx, uint64_t seq, const pb::VersionRecord& record) {
  auto& head = ctx.head();
  if (record.older_seq() != 0) {
    auto older = ctx.ReadVersion(record.older_seq());
    if (!older.ok()) return older.status();
    if (!older->has_value()) return Status::Corruption("broken version chain (older)");
    (*older)->set_newer_seq(record.newer_seq());
    ctx.WriteVersion(record.older_seq(), **older);
    if (record.newer_seq() == 0) {
      *head->mutable_latest() = (*older)->version();
      head->set_latest_seq(record.older_seq());
    }
  }
  if (record.newer_seq() != 0) {
    auto newer = ctx.ReadVersion(record.newer_seq());
    if (!newer.ok()) return newer.status();
    if (!newer->has_value()) return Status::Corruption("broken version chain (newer)");
    (*newer)->set_older_seq(record.older_seq());
    ctx.WriteVersion(record.newer_seq(), **newer);
  }
  ctx.DeleteVersion(seq);
  ctx.DropData(seq, record.version());
  if (head->null_seq() == seq) head->set_null_seq(0);
  if (record.older_seq() == 0 && record.newer_seq() == 0) head.reset();
  AddVersions(ctx.usage(), -1);
  AddBytes(ctx.usage(), -static_cast<int64_t>(record.version().size()));
  ctx.Collect(record.version());
  return Status::Ok();
}

// Drops the existing "null" version (suspended buckets overwrite it).
Status DropNullVersion(OpContext& ctx) {
  auto& head = ctx.head();
  if (!head || head->null_seq() == 0) return Status::Ok();
  const uint64_t seq = head->null_seq();
  auto record = ctx.ReadVersion(seq);
  if (!record.ok()) return record.status();
  if (!record->has_value()) return Status::Corruption("null version record missing");
  return UnlinkVersion(ctx, seq, **record);
}

// Appends `version` as the newest version of the chain and makes it the
// head's latest. Returns its id.
Result<std::string> AppendVersion(OpContext& ctx, pb::ObjectVersion version, bool null_version) {
  auto& head = ctx.head();
  if (!head) head.emplace();
  const uint64_t seq = std::max<uint64_t>(head->next_seq(), 1);
  const uint64_t older = head->latest_seq();
  if (older != 0) {
    auto previous = ctx.ReadVersion(older);
    if (!previous.ok()) return previous.status();
    if (!previous->has_value()) return Status::Corruption("latest version record missing");
    (*previous)->set_newer_seq(seq);
    ctx.WriteVersion(older, **previous);
  }
  std::string id = null_version ? kNullVersionId : FormatVersionId(seq, ctx.slot());
  version.set_version_id(id);
  pb::VersionRecord record;
  *record.mutable_version() = version;
  record.set_older_seq(older);
  ctx.WriteVersion(seq, record);
  *head->mutable_latest() = std::move(version);
  head->set_latest_seq(seq);
  head->set_next_seq(seq + 1);
  if (null_version) head->set_null_seq(seq);
  AddVersions(ctx.usage(), 1);
  return id;
}

Result<pb::S3OpResult> ApplyPut(const pb::PutObjectOp& op, uint64_t slot, StateAccess& state) {
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  if (auto bad = ValidateTarget(op.bucket_id(), op.key()); !bad.empty()) {
    ctx.Collect(op.object());
    ctx.CommitGcOnly();
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  if (auto refused = CheckWriteConditions(ctx, op.if_none_match_any(), op.if_match_etag())) {
    ctx.Collect(op.object());  // the uploaded blobs are garbage now
    ctx.CommitGcOnly();
    return *refused;
  }
  return WriteNewObject(ctx, op.object(), op.versioning(), ctx.LiveLatest() != nullptr);
}

pb::ObjectVersion DeleteMarker(const pb::DeleteObjectOp& op) {
  pb::ObjectVersion marker;
  marker.set_delete_marker(true);
  marker.set_last_modified_ms(op.now_ms());
  marker.set_owner(op.owner());
  return marker;
}

// DELETE of a specific version: removes it for good.
Result<pb::S3OpResult> DeleteVersionById(const pb::DeleteObjectOp& op, OpContext& ctx,
                                         bool live_before) {
  auto& head = ctx.head();
  uint64_t seq = 0;
  if (op.version_id() == kNullVersionId) {
    if (head && head->latest_seq() == 0) {  // an unversioned-only key
      ctx.Collect(head->latest());
      ctx.DropData(0, head->latest());
      AddBytes(ctx.usage(), -static_cast<int64_t>(head->latest().size()));
      pb::S3OpResult result = Outcome(pb::S3_OK);
      result.set_version_id(kNullVersionId);
      head.reset();
      ctx.Commit(live_before);
      return result;
    }
    seq = head ? head->null_seq() : 0;
  } else {
    seq = ParseVersionSeq(op.version_id()).value_or(0);
  }
  // S3 answers 204 for a version that does not exist.
  pb::S3OpResult result = Outcome(pb::S3_OK);
  result.set_version_id(op.version_id());
  if (!head || seq == 0) return result;
  auto record = ctx.ReadVersion(seq);
  if (!record.ok()) return record.status();
  if (!record->has_value() || (*record)->version().version_id() != op.version_id()) return result;
  result.set_delete_marker((*record)->version().delete_marker());
  TESSERA_RETURN_IF_ERROR(UnlinkVersion(ctx, seq, **record));
  ctx.Commit(live_before);
  return result;
}

Result<pb::S3OpResult> ApplyDelete(const pb::DeleteObjectOp& op, uint64_t slot,
                                   StateAccess& state) {
  if (auto bad = ValidateTarget(op.bucket_id(), op.key()); !bad.empty()) {
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  const pb::ObjectVersion* current = ctx.LiveLatest();
  const bool live_before = current != nullptr;
  // S3: an If-Match of a missing key is NoSuchKey; the time and size
  // conditions alone hold for a missing key (the delete answers 204).
  if (!op.if_match_etag().empty() && !current) return Outcome(pb::S3_NO_SUCH_KEY);
  if (current) {
    const bool etag_holds = op.if_match_etag().empty() || op.if_match_etag() == "*" ||
                            current->etag() == op.if_match_etag();
    const bool time_holds = !op.has_if_match_last_modified_s() ||
                            current->last_modified_ms() / 1000 == op.if_match_last_modified_s();
    const bool size_holds = !op.has_if_match_size() || current->size() == op.if_match_size();
    if (!etag_holds || !time_holds || !size_holds) return Outcome(pb::S3_PRECONDITION_FAILED);
  }
  if (!op.version_id().empty()) return DeleteVersionById(op, ctx, live_before);
  pb::S3OpResult result = Outcome(pb::S3_OK);
  switch (op.versioning()) {
    case pb::VERSIONING_ENABLED:
      TESSERA_RETURN_IF_ERROR(EnsureVersionChain(ctx));
      {
        auto id = AppendVersion(ctx, DeleteMarker(op), /*null_version=*/false);
        if (!id.ok()) return id.status();
        result.set_version_id(std::move(id).value());
      }
      result.set_delete_marker(true);
      break;
    case pb::VERSIONING_SUSPENDED:
      TESSERA_RETURN_IF_ERROR(EnsureVersionChain(ctx));
      TESSERA_RETURN_IF_ERROR(DropNullVersion(ctx));
      {
        auto id = AppendVersion(ctx, DeleteMarker(op), /*null_version=*/true);
        if (!id.ok()) return id.status();
        result.set_version_id(std::move(id).value());
      }
      result.set_delete_marker(true);
      break;
    default:
      if (!ctx.head()) return result;  // S3: deleting a missing key succeeds
      if (ctx.head()->latest_seq() != 0) {
        return Outcome(pb::S3_INVALID_REQUEST, "bucket has versions but the op is unversioned");
      }
      ctx.Collect(ctx.head()->latest());
      ctx.DropData(0, ctx.head()->latest());
      AddBytes(ctx.usage(), -static_cast<int64_t>(ctx.head()->latest().size()));
      ctx.head().reset();
  }
  ctx.Commit(live_before);
  return result;
}

}  // namespace

std::optional<pb::S3OpResult> CheckWriteConditions(OpContext& ctx, bool if_none_match_any,
                                                   const std::string& if_match_etag) {
  const pb::ObjectVersion* current = ctx.LiveLatest();
  if (if_none_match_any && current) return Outcome(pb::S3_PRECONDITION_FAILED);
  if (!if_match_etag.empty()) {
    if (!current) return Outcome(pb::S3_NO_SUCH_KEY);
    if (current->etag() != if_match_etag) return Outcome(pb::S3_PRECONDITION_FAILED);
  }
  return std::nullopt;
}

Result<pb::S3OpResult> WriteNewObject(OpContext& ctx, pb::ObjectVersion object,
                                      pb::BucketVersioning versioning, bool live_before) {
  const pb::ObjectVersion* current = ctx.LiveLatest();
  object.set_delete_marker(false);
  // The bytes go to the new version's data record, never into the head or
  // version record.
  std::string bytes = std::move(*object.mutable_inline_data());
  object.clear_inline_data();
  object.set_bytes_in_data_record(!bytes.empty());
  AddBytes(ctx.usage(), static_cast<int64_t>(object.size()));
  std::string version_id;
  if (versioning == pb::VERSIONING_ENABLED || versioning == pb::VERSIONING_SUSPENDED) {
    const bool null_version = versioning == pb::VERSIONING_SUSPENDED;
    TESSERA_RETURN_IF_ERROR(EnsureVersionChain(ctx));
    if (null_version) TESSERA_RETURN_IF_ERROR(DropNullVersion(ctx));
    auto id = AppendVersion(ctx, std::move(object), null_version);
    if (!id.ok()) return id.status();
    version_id = std::move(id).value();
    if (!bytes.empty()) ctx.WriteData(ctx.head()->latest_seq(), std::move(bytes));
  } else {
    if (ctx.head() && ctx.head()->latest_seq() != 0) {
      return Outcome(pb::S3_INVALID_REQUEST, "bucket has versions but the op is unversioned");
    }
    if (current) {
      AddBytes(ctx.usage(), -static_cast<int64_t>(current->size()));
      ctx.Collect(*current);
      if (bytes.empty()) ctx.DropData(0, *current);  // else overwritten below
    }
    if (!bytes.empty()) ctx.WriteData(0, std::move(bytes));
    object.set_version_id(kNullVersionId);
    version_id = kNullVersionId;
    ctx.head().emplace();
    *ctx.head()->mutable_latest() = std::move(object);
  }
  pb::S3OpResult result = Outcome(pb::S3_OK);
  result.set_version_id(version_id);
  *result.mutable_object() = ctx.head()->latest();
  ctx.Commit(live_before);
  return result;
}

Result<pb::S3OpResult> ApplyS3Op(const pb::S3Op& op, uint64_t slot, StateAccess& state) {
  switch (op.op_case()) {
    case pb::S3Op::kPutObject: return ApplyPut(op.put_object(), slot, state);
    case pb::S3Op::kDeleteObject: return ApplyDelete(op.delete_object(), slot, state);
    case pb::S3Op::kCreateUpload: return ApplyCreateUpload(op.create_upload(), slot, state);
    case pb::S3Op::kUploadPart: return ApplyUploadPart(op.upload_part(), slot, state);
    case pb::S3Op::kCompleteUpload: return ApplyCompleteUpload(op.complete_upload(), slot, state);
    case pb::S3Op::kAbortUpload: return ApplyAbortUpload(op.abort_upload(), slot, state);
    case pb::S3Op::kGcDone: return ApplyGcDone(op.gc_done(), state);
    case pb::S3Op::kSetTags: return ApplySetTags(op.set_tags(), slot, state);
    case pb::S3Op::kSetBucketConfig: return ApplySetBucketConfig(op.set_bucket_config(), state);
    case pb::S3Op::kSetObjectAcl: return ApplySetObjectAcl(op.set_object_acl(), slot, state);
    case pb::S3Op::OP_NOT_SET: break;
  }
  return Outcome(pb::S3_INVALID_REQUEST, "empty S3 op");
}

}  // namespace tessera::s3::model
