#include "s3/model/tagging_ops.h"

#include <functional>

#include "s3/model/op_context.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

// What a sub-resource op changes in the version it addresses.
using Change = std::function<void(pb::ObjectVersion*)>;

// The answer naming the version whose tags were set.
pb::S3OpResult Tagged(const pb::ObjectVersion& version) {
  pb::S3OpResult result = Outcome(pb::S3_OK);
  result.set_version_id(version.version_id());
  return result;
}

// Applies `change` to the version that `op` (SetTagsOp, SetObjectAclOp)
// addresses, as the header describes.
template <typename Op>
Result<pb::S3OpResult> ApplyToVersion(const Op& op, uint64_t slot, StateAccess& state,
                                      const Change& change) {
  if (auto bad = ValidateTarget(op.bucket_id(), op.key()); !bad.empty()) {
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  std::optional<pb::ObjectHead>& head = ctx.head();
  const bool live = ctx.LiveLatest() != nullptr;
  if (op.version_id().empty()) {
    if (!head) return Outcome(pb::S3_NO_SUCH_KEY);
    if (head->latest().delete_marker()) return Outcome(pb::S3_DELETE_MARKER);
    change(head->mutable_latest());
    if (head->latest_seq() != 0) {
      auto record = ctx.ReadVersion(head->latest_seq());
      if (!record.ok()) return record.status();
      if (!record->has_value()) return Status::Corruption("latest version record missing");
      change((*record)->mutable_version());
      ctx.WriteVersion(head->latest_seq(), **record);
    }
    ctx.Commit(live);
    return Tagged(head->latest());
  }
  if (!head) return Outcome(pb::S3_NO_SUCH_VERSION);
  uint64_t seq = 0;
  if (op.version_id() == kNullVersionId) {
    if (head->latest_seq() == 0) {  // a key written only while unversioned
      if (head->latest().delete_marker()) return Outcome(pb::S3_DELETE_MARKER);
      change(head->mutable_latest());
      ctx.Commit(live);
      return Tagged(head->latest());
    }
    seq = head->null_seq();
  } else {
    seq = ParseVersionSeq(op.version_id()).value_or(0);
  }
  if (seq == 0) return Outcome(pb::S3_NO_SUCH_VERSION);
  auto record = ctx.ReadVersion(seq);
  if (!record.ok()) return record.status();
  if (!record->has_value() || (*record)->version().version_id() != op.version_id()) {
    return Outcome(pb::S3_NO_SUCH_VERSION);
  }
  if ((*record)->version().delete_marker()) return Outcome(pb::S3_DELETE_MARKER);
  change((*record)->mutable_version());
  ctx.WriteVersion(seq, **record);
  if (seq == head->latest_seq()) change(head->mutable_latest());
  ctx.Commit(live);
  return Tagged((*record)->version());
}

}  // namespace

Result<pb::S3OpResult> ApplySetTags(const pb::SetTagsOp& op, uint64_t slot, StateAccess& state) {
  return ApplyToVersion(op, slot, state, [&op](pb::ObjectVersion* version) {
    *version->mutable_tags() = op.tags();
  });
}

Result<pb::S3OpResult> ApplySetObjectAcl(const pb::SetObjectAclOp& op, uint64_t slot,
                                         StateAccess& state) {
  return ApplyToVersion(op, slot, state, [&op](pb::ObjectVersion* version) {
    *version->mutable_acl() = op.acl();
  });
}

}  // namespace tessera::s3::model
