#include "sim/s3_clients.h"

#include <map>
#include <set>
#include <utility>

#include "common/check.h"
#include "common/limits.h"
#include "node/s3_blob_refs.h"
#include "s3/model/s3_keys.h"

namespace tessera::sim {
namespace {

constexpr uint32_t kS3ClientsMax = 3;
constexpr uint32_t kS3KeysMax = 4;
// Sends of one operation at most (the first and the resends after
// refusals), as the router bounds its retries; the first resend waits
// this long, each next one twice as long (an election may be under way).
constexpr uint32_t kS3SendsMax = 6;
constexpr TimeUs kS3ResendBackoffUs = 5'000;
// A client abandons a send it has no answer to after this long.
constexpr TimeUs kS3ClientTimeoutUs = 1'500'000;
constexpr uint32_t kS3BodyBytesMax = 300;
// Multipart uploads: part numbers 1..kS3PartsMax of up to this many bytes.
constexpr uint32_t kS3PartsMax = 3;
constexpr uint64_t kS3PartBytesMax = 1 << 20;
// kS3RetryUnknown: the share of answers the client pretends were lost.
constexpr uint32_t kLostAnswerPercent = 25;

}  // namespace

S3Clients::S3Clients(HostCluster& cluster, uint64_t seed, SimBug bug,
                     const std::map<ReplicaId, uint64_t>* crashes_of,
                     std::function<bool(ReplicaId)> is_member, std::function<ReplicaId(Prng&)> pick)
    : cluster_(cluster),
      prng_(seed),
      retry_unknown_(bug == SimBug::kS3RetryUnknown),
      crashes_of_(crashes_of),
      is_member_(std::move(is_member)),
      pick_(std::move(pick)),
      clients_(1 + prng_.Below(kS3ClientsMax)),
      keys_(static_cast<uint32_t>(1 + prng_.Below(kS3KeysMax))),
      think_max_us_(prng_.Range(2'000, 30'000)) {}

void S3Clients::Start() {
  for (uint32_t c = 0; c < clients_.size(); ++c) {
    clients_[c].guess = pick_(prng_);
    Schedule(c);
  }
}

void S3Clients::Schedule(uint32_t c) {
  if (stopped_) return;
  const TimeUs at_us = cluster_.loop().now_us() + prng_.Range(0, think_max_us_);
  cluster_.loop().PostAt(at_us, [this, alive = alive_, c] {
    if (*alive) NewOp(c);
  });
}

// The bucket's versioning changes now and then, as its owner would set it
// (S3: once enabled, never unversioned again).
void S3Clients::NextVersioning() {
  if (!prng_.Chance(8)) return;
  versioning_ =
      versioning_ == pb::VERSIONING_ENABLED ? pb::VERSIONING_SUSPENDED : pb::VERSIONING_ENABLED;
}

void S3Clients::NewOp(uint32_t c) {
  if (stopped_) return;
  NextVersioning();
  S3SentOp op;
  op.key = "obj/" + std::to_string(prng_.Below(keys_));
  op.tag = "op" + std::to_string(sent_.size());
  op.versioning = versioning_;
  const uint64_t draw = prng_.Below(100);
  if (draw >= 32 && draw < 40) {
    op.kind = S3SentOp::Kind::kSetTags;  // of the latest, or of a version by id
    if (prng_.Chance(50)) op.version_id = KnownVersion(op.key);
  } else if (draw >= 40 && draw < 55) {
    MultipartOp(op);
  } else if (draw >= 55) {
    op.kind = S3SentOp::Kind::kDeleteLatest;
    if (draw >= 80) {  // a version by id the clients were told of, when there is one
      op.version_id = KnownVersion(op.key);
      if (!op.version_id.empty()) op.kind = S3SentOp::Kind::kDeleteVersion;
    }
  } else {
    op.body.assign(prng_.Below(kS3BodyBytesMax + 1), static_cast<char>('a' + sent_.size() % 26));
    op.body += op.tag;  // bodies differ between operations
  }
  clients_[c].op = sent_.size();
  clients_[c].sends = 0;
  sent_.push_back(std::move(op));
  maybe_sent_.push_back(false);
  ++stats_.ops;
  Send(c);
}

// A version id of `key` an answer named (a put's, a marker's, a
// completion's), drawn at random; empty when none.
std::string S3Clients::KnownVersion(const std::string& key) {
  std::vector<std::string> ids;
  for (const S3SentOp& other : sent_) {
    const bool writes_version = other.kind == S3SentOp::Kind::kPut ||
                                other.kind == S3SentOp::Kind::kDeleteLatest ||
                                other.kind == S3SentOp::Kind::kCompleteUpload;
    if (other.key == key && writes_version && other.fate == S3SentOp::Fate::kAcked &&
        other.s3_outcome == pb::S3_OK && !other.version_id.empty()) {
      ids.push_back(other.version_id);
    }
  }
  return ids.empty() ? std::string() : ids[prng_.Below(ids.size())];
}

// A multipart step on op.key: an upload part, a completion or an abort of
// an upload the clients were told was created (and have not ended), else
// the creation of one. Parts reference blobs by id only: the model needs
// no blob store, and completion refuses inline parts.
void S3Clients::MultipartOp(S3SentOp& op) {
  std::vector<std::string> uploads;
  std::set<std::string> ended;
  for (const S3SentOp& other : sent_) {
    if (other.key != op.key) continue;
    if (other.kind == S3SentOp::Kind::kCreateUpload && other.fate == S3SentOp::Fate::kAcked &&
        other.s3_outcome == pb::S3_OK) {
      uploads.push_back(other.tag);
    }
    if (other.kind == S3SentOp::Kind::kCompleteUpload ||
        other.kind == S3SentOp::Kind::kAbortUpload) {
      ended.insert(other.upload_id);
    }
  }
  std::erase_if(uploads, [&](const std::string& id) { return ended.count(id) != 0; });
  op.kind = S3SentOp::Kind::kCreateUpload;
  if (uploads.empty()) return;
  op.upload_id = uploads[prng_.Below(uploads.size())];
  std::map<uint32_t, std::string> parts;  // acknowledged, the latest per number
  for (const S3SentOp& other : sent_) {
    if (other.kind == S3SentOp::Kind::kUploadPart && other.upload_id == op.upload_id &&
        other.fate == S3SentOp::Fate::kAcked && other.s3_outcome == pb::S3_OK) {
      parts[other.part_number] = other.tag;
    }
  }
  const uint64_t draw = prng_.Below(100);
  if (parts.empty() || draw < 50) {
    op.kind = S3SentOp::Kind::kUploadPart;
    op.part_number = static_cast<uint32_t>(1 + prng_.Below(kS3PartsMax));
    op.part_size = prng_.Range(1, kS3PartBytesMax);
  } else if (draw < 85) {
    op.kind = S3SentOp::Kind::kCompleteUpload;
    op.parts.assign(parts.begin(), parts.end());
  } else {
    op.kind = S3SentOp::Kind::kAbortUpload;
  }
}

pb::S3Op S3Clients::OpOf(const S3SentOp& sent) const {
  pb::S3Op op;
  const int64_t now_ms = static_cast<int64_t>(cluster_.loop().now_us() / 1000);
  switch (sent.kind) {
    case S3SentOp::Kind::kCreateUpload: {
      pb::CreateUploadOp* create = op.mutable_create_upload();
      create->set_bucket_id(kBucketId);
      create->set_key(sent.key);
      create->mutable_upload()->set_upload_id(sent.tag);
      create->mutable_upload()->mutable_template_()->set_owner("sim");
      create->mutable_upload()->set_initiated_ms(now_ms);
      return op;
    }
    case S3SentOp::Kind::kUploadPart: {
      pb::UploadPartOp* part = op.mutable_upload_part();
      part->set_bucket_id(kBucketId);
      part->set_key(sent.key);
      part->set_upload_id(sent.upload_id);
      part->mutable_part()->set_part_number(sent.part_number);
      part->mutable_part()->set_size(sent.part_size);
      part->mutable_part()->set_etag(sent.tag);
      part->mutable_part()->set_last_modified_ms(now_ms);
      pb::BlobRef* blob = part->mutable_part()->add_blobs();
      blob->set_blob_id("blob-" + sent.tag);
      blob->set_size(sent.part_size);
      return op;
    }
    case S3SentOp::Kind::kCompleteUpload: {
      pb::CompleteUploadOp* complete = op.mutable_complete_upload();
      complete->set_bucket_id(kBucketId);
      complete->set_key(sent.key);
      complete->set_upload_id(sent.upload_id);
      for (const auto& [number, etag] : sent.parts) {
        pb::CompletePart* listed = complete->add_parts();
        listed->set_part_number(number);
        listed->set_etag(etag);
      }
      complete->set_etag(sent.tag);
      complete->set_versioning(sent.versioning);
      complete->set_now_ms(now_ms);
      return op;
    }
    case S3SentOp::Kind::kSetTags: {
      pb::SetTagsOp* tags = op.mutable_set_tags();
      tags->set_bucket_id(kBucketId);
      tags->set_key(sent.key);
      tags->set_version_id(sent.version_id);
      pb::MetadataPair* tag = tags->add_tags();
      tag->set_name("op");
      tag->set_value(sent.tag);
      return op;
    }
    case S3SentOp::Kind::kAbortUpload: {
      pb::AbortUploadOp* abort = op.mutable_abort_upload();
      abort->set_bucket_id(kBucketId);
      abort->set_key(sent.key);
      abort->set_upload_id(sent.upload_id);
      return op;
    }
    default:
      break;
  }
  if (sent.kind == S3SentOp::Kind::kPut) {
    pb::PutObjectOp* put = op.mutable_put_object();
    put->set_bucket_id(kBucketId);
    put->set_key(sent.key);
    put->set_versioning(sent.versioning);
    pb::ObjectVersion* object = put->mutable_object();
    object->set_version_id("null");
    object->set_size(sent.body.size());
    object->set_etag(sent.tag);
    object->set_last_modified_ms(now_ms);
    object->set_owner("sim");
    object->set_inline_data(sent.body);
  } else {
    pb::DeleteObjectOp* del = op.mutable_delete_object();
    del->set_bucket_id(kBucketId);
    del->set_key(sent.key);
    del->set_versioning(sent.versioning);
    del->set_now_ms(now_ms);
    del->set_owner(sent.tag);  // a delete marker's owner names its operation
    if (sent.kind == S3SentOp::Kind::kDeleteVersion) del->set_version_id(sent.version_id);
  }
  return op;
}

void S3Clients::Send(uint32_t c) {
  Client& client = clients_[c];
  if (stopped_) {  // a resend the stop overtook: the operation ends here
    EndOp(client.op);
    return;
  }
  if (!cluster_.up(client.guess)) client.guess = pick_(prng_);
  if (!cluster_.up(client.guess)) {  // no replica to ask now: a later attempt
    cluster_.loop().PostAt(cluster_.loop().now_us() + think_max_us_, [this, alive = alive_, c] {
      if (*alive) Send(c);
    });
    return;
  }
  ++client.sends;
  if (client.sends > 1) ++stats_.resent;
  client.serial = ++next_serial_;
  client.target = client.guess;
  client.target_crashes = crashes_of_->count(client.guess) ? crashes_of_->at(client.guess) : 0;
  pb::KvCommand command;
  *command.mutable_s3() = OpOf(sent_[client.op]);
  const uint64_t serial = client.serial;
  cluster_.Write(client.guess, std::move(command),
                 [this, alive = alive_, c, serial](Result<pb::KvApplyResult> r) {
                   if (*alive) Finish(c, serial, r);
                 });
  cluster_.loop().PostAt(cluster_.loop().now_us() + kS3ClientTimeoutUs,
                         [this, alive = alive_, c, serial] {
                           if (*alive) Finish(c, serial, Status::Timeout("s3 client"));
                         });
}

// The answer (or the deadline) of send `serial` of client `c`; a later one
// of the same send is ignored.
void S3Clients::Finish(uint32_t c, uint64_t serial, const Result<pb::KvApplyResult>& result) {
  Client& client = clients_[c];
  if (client.serial != serial) return;
  client.serial = 0;
  S3SentOp& op = sent_[client.op];
  const Status& status = result.status();
  const uint64_t crashes = crashes_of_->count(client.target) ? crashes_of_->at(client.target) : 0;
  const bool refused =
      !status.ok() &&
      ((status.code() == StatusCode::kNotLeader && crashes == client.target_crashes) ||
       status.code() == StatusCode::kThrottled);
  if (status.code() == StatusCode::kNotLeader && status.leader_hint() != 0 &&
      is_member_(static_cast<ReplicaId>(status.leader_hint()))) {
    client.guess = static_cast<ReplicaId>(status.leader_hint());
  } else if (!status.ok()) {
    client.guess = pick_(prng_);
  }
  if (!refused) maybe_sent_[client.op] = true;
  bool resend = false;
  if (status.ok()) {
    // A split never runs here, so no answer is wrong_partition.
    TESSERA_CHECK(!result->wrong_partition());
    if (op.fate != S3SentOp::Fate::kAcked) {
      op.fate = S3SentOp::Fate::kAcked;
      op.s3_outcome = result->s3().outcome();
      if (op.kind != S3SentOp::Kind::kDeleteVersion && op.kind != S3SentOp::Kind::kSetTags) {
        op.version_id = result->s3().version_id();
      }
      ++stats_.acked;
      if (op.kind == S3SentOp::Kind::kCompleteUpload && op.s3_outcome == pb::S3_OK) {
        ++stats_.completed;
      }
    }
    resend = retry_unknown_ && prng_.Chance(kLostAnswerPercent);
  } else if (refused) {
    resend = true;
  } else {
    resend = retry_unknown_;
  }
  if (resend && !stopped_ && client.sends < kS3SendsMax) {
    const TimeUs backoff_us = kS3ResendBackoffUs << (client.sends - 1);
    cluster_.loop().PostAt(cluster_.loop().now_us() + backoff_us, [this, alive = alive_, c] {
      if (*alive) Send(c);
    });
    return;
  }
  EndOp(client.op);
  Schedule(c);
}

// No more sends of operation `i`: unanswered, it did not happen when every
// send was refused, else its outcome is unknown.
void S3Clients::EndOp(size_t i) {
  S3SentOp& op = sent_[i];
  if (op.fate == S3SentOp::Fate::kAcked) return;
  op.fate = maybe_sent_[i] ? S3SentOp::Fate::kUnknown : S3SentOp::Fate::kRefused;
  ++(op.fate == S3SentOp::Fate::kUnknown ? stats_.unknown : stats_.refused);
}

std::string S3Clients::Check(const std::vector<ReplicaId>& replicas) {
  for (ReplicaId id : replicas) {
    std::vector<s3::model::RecordRow> rows;
    const Status read = cluster_.ReadState(id, [&](const node::PartitionStateMachine& state) {
      const node::PartitionRecords records(state);
      std::string start = s3::model::BucketPrefix(kBucketId);
      const std::string end = s3::model::BucketPrefix(kBucketId + 1);
      for (;;) {
        auto page = records.Scan(start, end, limits::kScanItemsMax);
        if (!page.ok()) return page.status();
        const bool more = page->size() == limits::kScanItemsMax;
        for (auto& row : *page) rows.push_back(std::move(row));
        if (!more) break;
        start = rows.back().key + std::string(1, '\0');
      }
      auto usage = records.Scan(s3::model::UsageKey(kBucketId),
                                s3::model::UsageKey(kBucketId) + std::string(1, '\0'), 1);
      if (!usage.ok()) return usage.status();
      for (auto& row : *usage) rows.push_back(std::move(row));
      return Status::Ok();
    });
    if (!read.ok()) return "s3: state of replica " + std::to_string(id) + ": " + read.ToString();
    std::string violation = CheckS3State(rows, kBucketId, sent_);
    if (!violation.empty()) return violation + " (replica " + std::to_string(id) + ")";
  }
  return "";
}

}  // namespace tessera::sim
