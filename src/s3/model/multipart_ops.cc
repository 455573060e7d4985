#include "s3/model/multipart_ops.h"

#include <map>
#include <optional>
#include <vector>

#include "common/limits.h"
#include "s3/model/full_object_checksum.h"
#include "s3/model/op_context.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

// Part rows read per ScanState call while walking an upload's parts.
constexpr size_t kPartRowsPerScan = 1000;

std::string_view ValidateUpload(uint64_t bucket_id, const std::string& key,
                                const std::string& upload_id) {
  if (auto bad = ValidateTarget(bucket_id, key); !bad.empty()) return bad;
  if (upload_id.empty() || upload_id.find('\0') != std::string::npos) return "bad upload id";
  return {};
}

Result<std::optional<pb::UploadRecord>> ReadUpload(OpContext& ctx, const std::string& upload_id) {
  return ReadRecord<pb::UploadRecord>(ctx.state(),
                                      UploadKey(ctx.bucket_id(), ctx.key(), upload_id), "upload");
}

// Every part record of the upload, by part number.
Result<std::map<uint32_t, pb::PartRecord>> ReadParts(OpContext& ctx, const std::string& upload_id) {
  std::map<uint32_t, pb::PartRecord> parts;
  std::string cursor = PartsBegin(ctx.bucket_id(), ctx.key(), upload_id);
  const std::string end = PartsEnd(ctx.bucket_id(), ctx.key(), upload_id);
  while (true) {
    auto rows = ctx.state().ScanState(cursor, end, kPartRowsPerScan);
    if (!rows.ok()) return rows.status();
    for (const auto& [key, value] : *rows) {
      pb::PartRecord part;
      if (!part.ParseFromString(value)) return Status::Corruption("unparseable part record");
      parts[part.part_number()] = std::move(part);
    }
    if (rows->size() < kPartRowsPerScan) return parts;
    cursor = rows->back().first + '\0';
  }
}

// The part's checksum of `algorithm`, or nullptr.
const pb::ObjectChecksum* FindChecksum(const pb::PartRecord& part, const std::string& algorithm) {
  for (const pb::ObjectChecksum& c : part.checksums()) {
    if (c.algorithm() == algorithm) return &c;
  }
  return nullptr;
}

// Uploads created with a checksum algorithm: the op must name the same
// algorithm (the router read it from the upload record) and, for a
// composite checksum, carry it; each listed part's checksum is checked
// later.
std::optional<pb::S3OpResult> CheckCompleteChecksums(const pb::CompleteUploadOp& op,
                                                     const pb::UploadRecord& upload) {
  if (op.checksum_algorithm() == upload.checksum_algorithm()) {
    if (!op.checksum_algorithm().empty() && !upload.checksum_full_object() &&
        op.composite_checksum().empty()) {
      return Outcome(pb::S3_INVALID_REQUEST, "missing composite checksum");
    }
    return std::nullopt;
  }
  if (op.checksum_algorithm().empty()) {
    return Outcome(pb::S3_INVALID_REQUEST,
                   "The upload was created using a " + upload.checksum_algorithm() +
                       " checksum. The complete request must include the checksum for each part.");
  }
  return Outcome(pb::S3_INVALID_REQUEST, "checksum algorithm differs from the upload's");
}

// What identifies the key's latest version (a delete marker too): any write
// or delete that changes the latest changes this. "" when the key has none.
std::string LatestFingerprint(const OpContext& ctx) {
  const std::optional<pb::ObjectHead>& head = ctx.head();
  if (!head) return {};
  const pb::ObjectVersion& v = head->latest();
  return v.version_id() + "/" + std::to_string(v.last_modified_ms()) + "/" + v.etag() +
         (v.delete_marker() ? "/marker" : "");
}

// Drops the upload record and every part, queueing the blobs of the parts
// not in `kept` for GC and taking them out of the usage.
void DropUpload(OpContext& ctx, const std::string& upload_id,
                const std::map<uint32_t, pb::PartRecord>& parts,
                const std::map<uint32_t, bool>& kept) {
  int64_t part_bytes = 0;
  for (const auto& [number, part] : parts) {
    part_bytes += static_cast<int64_t>(part.size());
    if (!kept.count(number)) ctx.CollectBlobs(part.blobs());
    ctx.state().Delete(PartKey(ctx.bucket_id(), ctx.key(), upload_id, number));
  }
  ctx.state().Delete(UploadKey(ctx.bucket_id(), ctx.key(), upload_id));
  ctx.usage().set_uploads(ctx.usage().uploads() - 1);
  ctx.usage().set_part_bytes(ctx.usage().part_bytes() - part_bytes);
}

}  // namespace

Result<pb::S3OpResult> ApplyCreateUpload(const pb::CreateUploadOp& op, uint64_t slot,
                                         StateAccess& state) {
  if (auto bad = ValidateUpload(op.bucket_id(), op.key(), op.upload().upload_id()); !bad.empty()) {
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  if (op.upload().checksum_full_object() &&
      !IsFullObjectAlgorithm(op.upload().checksum_algorithm())) {
    return Outcome(pb::S3_INVALID_REQUEST, "full-object checksums need a CRC algorithm");
  }
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  auto existing = ReadUpload(ctx, op.upload().upload_id());
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return Outcome(pb::S3_OK);  // a retried create
  pb::UploadRecord record = op.upload();
  record.set_latest_at_create(LatestFingerprint(ctx));
  state.Put(UploadKey(op.bucket_id(), op.key(), op.upload().upload_id()),
            record.SerializeAsString());
  ctx.usage().set_uploads(ctx.usage().uploads() + 1);
  ctx.CommitUsageAndGc();
  return Outcome(pb::S3_OK);
}

Result<pb::S3OpResult> ApplyUploadPart(const pb::UploadPartOp& op, uint64_t slot,
                                       StateAccess& state) {
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  auto refuse = [&ctx, &op](pb::S3Outcome outcome, std::string message = {}) {
    ctx.CollectBlobs(op.part().blobs());
    ctx.CommitGcOnly();
    return Outcome(outcome, std::move(message));
  };
  if (auto bad = ValidateUpload(op.bucket_id(), op.key(), op.upload_id()); !bad.empty()) {
    return refuse(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  const uint32_t number = op.part().part_number();
  if (number < 1 || number > limits::kS3PartNumberMax) {
    return refuse(pb::S3_INVALID_REQUEST, "part number out of range");
  }
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  auto upload = ReadUpload(ctx, op.upload_id());
  if (!upload.ok()) return upload.status();
  if (!upload->has_value()) return refuse(pb::S3_NO_SUCH_UPLOAD);
  const std::string& algorithm = (*upload)->checksum_algorithm();
  if (!algorithm.empty() && !FindChecksum(op.part(), algorithm)) {
    return refuse(pb::S3_INVALID_REQUEST,
                  "Checksum Type mismatch occurred, expected checksum Type: " + algorithm);
  }
  const std::string key = PartKey(op.bucket_id(), op.key(), op.upload_id(), number);
  auto previous = ReadRecord<pb::PartRecord>(state, key, "part");
  if (!previous.ok()) return previous.status();
  int64_t delta = static_cast<int64_t>(op.part().size());
  if (previous->has_value()) {
    delta -= static_cast<int64_t>((*previous)->size());
    ctx.CollectBlobs((*previous)->blobs());
  }
  state.Put(key, op.part().SerializeAsString());
  ctx.usage().set_part_bytes(ctx.usage().part_bytes() + delta);
  ctx.CommitUsageAndGc();
  return Outcome(pb::S3_OK);
}

namespace {

// The answer to a CompleteUpload whose upload is gone: its first answer
// again when it completed the key's latest version (see the header).
pb::S3OpResult AnswerRepeatedComplete(const OpContext& ctx, const pb::CompleteUploadOp& op) {
  const pb::ObjectVersion* latest = ctx.LiveLatest();
  if (latest == nullptr || latest->completed_upload_id() != op.upload_id() ||
      latest->etag() != op.etag()) {
    return Outcome(pb::S3_NO_SUCH_UPLOAD);
  }
  pb::S3OpResult result = Outcome(pb::S3_OK);
  result.set_version_id(latest->version_id());
  *result.mutable_object() = *latest;
  return result;
}

// A refusal naming the listed part at fault (and its stored size).
pb::S3OpResult PartOutcome(pb::S3Outcome outcome, const pb::CompletePart& listed,
                           uint64_t part_size) {
  pb::S3OpResult result = Outcome(outcome, "part " + std::to_string(listed.part_number()));
  result.set_part_number(listed.part_number());
  result.set_part_etag(listed.etag());
  result.set_part_size(part_size);
  return result;
}

}  // namespace

Result<pb::S3OpResult> ApplyCompleteUpload(const pb::CompleteUploadOp& op, uint64_t slot,
                                           StateAccess& state) {
  if (auto bad = ValidateUpload(op.bucket_id(), op.key(), op.upload_id()); !bad.empty()) {
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  if (op.parts_size() == 0) return Outcome(pb::S3_INVALID_REQUEST, "no parts listed");
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  auto upload = ReadUpload(ctx, op.upload_id());
  if (!upload.ok()) return upload.status();
  if (!upload->has_value()) return AnswerRepeatedComplete(ctx, op);
  if (auto refused = CheckWriteConditions(ctx, op.if_none_match_any(), op.if_match_etag())) {
    return *refused;
  }
  // A condition that holds now may not have held throughout: S3 refuses a
  // conditional completion once the key was written after the upload began.
  const bool conditional = op.if_none_match_any() || !op.if_match_etag().empty();
  if (conditional && (*upload)->has_latest_at_create() &&
      (*upload)->latest_at_create() != LatestFingerprint(ctx)) {
    return Outcome(pb::S3_CONDITIONAL_CONFLICT);
  }
  if (auto refused = CheckCompleteChecksums(op, **upload)) return *refused;
  auto parts = ReadParts(ctx, op.upload_id());
  if (!parts.ok()) return parts.status();
  pb::ObjectVersion object = (*upload)->template_();
  uint32_t previous_number = 0;
  for (const pb::CompletePart& listed : op.parts()) {
    if (listed.part_number() <= previous_number) return Outcome(pb::S3_INVALID_PART_ORDER);
    previous_number = listed.part_number();
  }
  const bool full_object = (*upload)->checksum_full_object();
  std::vector<PartCrc> part_crcs;
  std::map<uint32_t, bool> kept;
  uint64_t size = 0;
  for (int i = 0; i < op.parts_size(); ++i) {
    const pb::CompletePart& listed = op.parts(i);
    auto it = parts->find(listed.part_number());
    if (it == parts->end() || it->second.etag() != listed.etag()) {
      return PartOutcome(pb::S3_INVALID_PART, listed, 0);
    }
    const pb::PartRecord& part = it->second;
    if (!op.checksum_algorithm().empty()) {
      // Composite: every listed part names its checksum. Full object: a
      // listed checksum is optional but must match when given.
      const pb::ObjectChecksum* stored = FindChecksum(part, op.checksum_algorithm());
      const bool listed_checked = !full_object || !listed.checksum().empty();
      if (!stored || (listed_checked && stored->value() != listed.checksum())) {
        return PartOutcome(pb::S3_INVALID_PART, listed, 0);
      }
      if (full_object) part_crcs.push_back({stored->value(), part.size()});
      object.add_part_checksums(stored->value());
    }
    if (i + 1 < op.parts_size() && part.size() < op.min_part_bytes()) {
      return PartOutcome(pb::S3_ENTITY_TOO_SMALL, listed, part.size());
    }
    object.add_part_offsets(size);
    size += part.size();
    for (const pb::BlobRef& b : part.blobs()) *object.add_blobs() = b;
    if (!part.inline_data().empty()) {
      return Outcome(pb::S3_INVALID_REQUEST, "inline parts cannot be completed");
    }
    kept[listed.part_number()] = true;
  }
  object.set_size(size);
  object.set_etag(op.etag());
  object.clear_checksums();
  if (full_object) {
    Result<std::string> whole = CombineFullObjectChecksum(op.checksum_algorithm(), part_crcs);
    if (!whole.ok()) return Outcome(pb::S3_INVALID_REQUEST, whole.status().message());
    if (!op.declared_full_object_checksum().empty() &&
        op.declared_full_object_checksum() != *whole) {
      return Outcome(pb::S3_BAD_DIGEST, "The " + op.checksum_algorithm() +
                                            " you specified did not match the calculated checksum.");
    }
    pb::ObjectChecksum* checksum = object.add_checksums();
    checksum->set_algorithm(op.checksum_algorithm());
    checksum->set_value(*whole);
  } else if (!op.checksum_algorithm().empty()) {
    pb::ObjectChecksum* composite = object.add_checksums();
    composite->set_algorithm(op.checksum_algorithm());
    composite->set_value(op.composite_checksum());
  }
  object.set_parts_count(static_cast<uint32_t>(op.parts_size()));
  object.set_completed_upload_id(op.upload_id());
  object.set_last_modified_ms(op.now_ms());
  const bool live_before = ctx.LiveLatest() != nullptr;
  DropUpload(ctx, op.upload_id(), *parts, kept);
  return WriteNewObject(ctx, std::move(object), op.versioning(), live_before);
}

Result<pb::S3OpResult> ApplyAbortUpload(const pb::AbortUploadOp& op, uint64_t slot,
                                        StateAccess& state) {
  if (auto bad = ValidateUpload(op.bucket_id(), op.key(), op.upload_id()); !bad.empty()) {
    return Outcome(pb::S3_INVALID_REQUEST, std::string(bad));
  }
  OpContext ctx(state, op.bucket_id(), op.key(), slot);
  TESSERA_RETURN_IF_ERROR(ctx.Load());
  auto upload = ReadUpload(ctx, op.upload_id());
  if (!upload.ok()) return upload.status();
  if (!upload->has_value()) return Outcome(pb::S3_NO_SUCH_UPLOAD);
  auto parts = ReadParts(ctx, op.upload_id());
  if (!parts.ok()) return parts.status();
  DropUpload(ctx, op.upload_id(), *parts, {});
  ctx.CommitUsageAndGc();
  pb::S3OpResult result = Outcome(pb::S3_OK);
  result.set_parts_removed(static_cast<uint32_t>(parts->size()));
  return result;
}

}  // namespace tessera::s3::model
