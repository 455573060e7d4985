// CopyObject and UploadPartCopy (PUT with x-amz-copy-source). Each is ONE
// op on the destination's partition; the source is only read: its bucket,
// its version (strong read; the caller needs READ on it) and the
// x-amz-copy-source-if-* conditions. The bytes are copied into new blobs
// owned by the destination (decision D21), streamed blob by blob through a
// ByteCopier; sources stored inline stay inline (CopyObject).
#include <algorithm>

#include "common/limits.h"
#include "s3/front/byte_copier.h"
#include "s3/front/composite_checksum.h"
#include "s3/front/copy_source.h"
#include "s3/front/object_metadata.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/model/s3_keys.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

// The resolved source of a copy.
struct SourceObject {
  CopySource target;
  pb::BucketDescriptor bucket;
  std::shared_ptr<const pb::BucketConfig> config;  // the source bucket's
  std::shared_ptr<const PolicyFacts> facts;         // config's
  pb::ObjectVersion version;
};

// The source's own decision, s3:GetObject(Version) on the version read
// (null: none to copy), with x-amz-source-expected-bucket-owner.
bool SourceAuthorized(S3Call& call, const SourceObject& source, const pb::ObjectVersion* v) {
  ObjectTarget target;
  target.action = source.target.version_id.empty() ? authz::Action::kGetObject
                                                   : authz::Action::kGetObjectVersion;
  target.bucket = source.target.bucket;
  target.key = source.target.key;
  target.bucket_owner = source.bucket.owner();
  target.config = source.config.get();
  target.facts = source.facts.get();
  return AuthorizedOnObject(call, target, v, "x-amz-source-expected-bucket-owner");
}
using SourceCallback = std::function<void(SourceObject)>;

std::optional<std::string> HeaderString(const S3Call& call, std::string_view name) {
  auto value = call.Header(name);
  if (!value) return std::nullopt;
  return std::string(*value);
}

// x-amz-copy-source-if-*: 412 when they fail (never 304).
S3Status CheckSourceConditions(const S3Call& call, const pb::ObjectVersion& v) {
  ReadConditions conditions;
  conditions.if_match = HeaderString(call, "x-amz-copy-source-if-match");
  conditions.if_none_match = HeaderString(call, "x-amz-copy-source-if-none-match");
  conditions.if_modified_since = HeaderString(call, "x-amz-copy-source-if-modified-since");
  conditions.if_unmodified_since = HeaderString(call, "x-amz-copy-source-if-unmodified-since");
  return CheckCopySourceConditions(conditions, QuoteEtag(v.etag()), v.last_modified_ms(), NowMs());
}

void ReadSourceVersion(CallPtr call, SourceObject source, SourceCallback next) {
  const uint64_t bucket_id = source.bucket.bucket_id();
  auto finish = [call, next](SourceObject resolved, const pb::ObjectVersion& v) {
    if (!SourceAuthorized(*call, resolved, &v)) return;
    if (auto st = CheckSourceConditions(*call, v); !st.ok()) return call->Fail(st.error());
    resolved.version = v;
    next(std::move(resolved));
  };
  if (source.target.version_id.empty()) {
    const std::string key = model::StoredKey(model::KeyLayoutOf(source.bucket), source.target.key);
    return call->front.index().ReadObject(
        bucket_id, key, /*version_id=*/"", /*with_data=*/true,
        [call, source = std::move(source), finish](
            Result<std::optional<pb::ObjectVersion>> latest) mutable {
          if (!latest.ok()) return call->Fail(latest.status());
          if (!latest->has_value() || (*latest)->delete_marker()) {
            if (!SourceAuthorized(*call, source, nullptr)) return;
            return call->Fail(S3Error(S3ErrorCode::kNoSuchKey));
          }
          finish(std::move(source), **latest);
        });
  }
  const std::string key = model::StoredKey(model::KeyLayoutOf(source.bucket), source.target.key);
  const std::string version_id = source.target.version_id;
  call->front.index().ReadObject(
      bucket_id, key, version_id, /*with_data=*/true,
      [call, source = std::move(source), finish](Result<std::optional<pb::ObjectVersion>> read) mutable {
        if (!read.ok()) {
          if (read.status().code() == StatusCode::kInvalidArgument) {
            return call->Fail(VersionIdArgumentError(source.target.version_id));
          }
          return call->Fail(read.status());
        }
        if (!read->has_value() || (*read)->delete_marker()) {
          if (!SourceAuthorized(*call, source, nullptr)) return;
          if (!read->has_value()) {
            return call->Fail(S3Error(S3ErrorCode::kNoSuchVersion)
                                  .With("Key", source.target.key)
                                  .With("VersionId", source.target.version_id));
          }
          return call->Fail(S3Error(S3ErrorCode::kInvalidRequest,
                                    "The source of a copy request may not specifically "
                                    "refer to a delete marker by version id."));
        }
        finish(std::move(source), **read);
      });
}

// Parses x-amz-copy-source, checks the caller may read the source, reads
// the source version and checks the copy-source conditions; answers every
// failure itself.
void ResolveSource(CallPtr call, SourceCallback next) {
  auto parsed = ParseCopySource(call->Header("x-amz-copy-source").value_or(""));
  if (!parsed.ok()) return call->Fail(parsed.error());
  SourceObject source;
  source.target = std::move(parsed).value();
  const std::string bucket_name = source.target.bucket;
  call->front.registry().GetBucket(
      bucket_name, [call, source = std::move(source), next = std::move(next)](
                       Result<pb::BucketDescriptor> bucket) mutable {
        if (!bucket.ok()) {
          if (bucket.status().code() == StatusCode::kNotFound) {
            return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
          }
          return call->Fail(bucket.status());
        }
        // The source's own decision is taken on the version read
        // (SourceAuthorized); its bucket's configuration first.
        source.bucket = std::move(bucket).value();
        const uint64_t bucket_id = source.bucket.bucket_id();
        const std::string source_bucket = source.target.bucket;
        call->front.BucketConfigOf(
            bucket_id, source_bucket, [call, source = std::move(source), next = std::move(next)](
                           Result<BucketConfigCache::Cached> config) mutable {
              if (!config.ok()) return call->Fail(config.status());
              source.config = config->record;
              source.facts = config->facts;
              ReadSourceVersion(call, std::move(source), std::move(next));
            });
      });
}

// x-amz-copy-source-version-id when the source has a version id to name.
void AddSourceVersionHeader(const SourceObject& source, http::Headers& headers) {
  if (source.bucket.versioning() != pb::VERSIONING_UNSET || !source.target.version_id.empty()) {
    headers.emplace_back("x-amz-copy-source-version-id", source.version.version_id());
  }
}

// `bytes`: how many bytes the copy writes.
std::shared_ptr<BlobWriter> WriterFor(const CallPtr& call, uint64_t bytes) {
  return BlobWriter::Create(call->front.blobs(), call->front.options().blob_bytes,
                            model::ObjectPrefix(call->bucket_info.bucket_id(), call->stored_key()), bytes);
}

// ---- CopyObject ----------------------------------------------------------

struct CopyPlan {
  bool replace_metadata = false;
  bool replace_tags = false;
  std::vector<pb::MetadataPair> tags;  // with replace_tags
  std::optional<auth::ChecksumAlgorithm> checksum;  // x-amz-checksum-algorithm
  // The copy's owner and ACL (x-amz-acl, x-amz-grant-*; never the source's).
  ObjectWriteAccess access;
};

S3Result<CopyPlan> PlanCopy(const S3Call& call) {
  CopyPlan plan;
  if (auto st = CheckWriteConditionHeaders(call.Header("if-match"), call.Header("if-none-match"));
      !st.ok()) {
    return st.error();
  }
  const std::string metadata = HeaderString(call, "x-amz-metadata-directive").value_or("COPY");
  if (metadata != "COPY" && metadata != "REPLACE") {
    return InvalidArgumentError("Unknown metadata directive.", "x-amz-metadata-directive",
                                metadata);
  }
  plan.replace_metadata = metadata == "REPLACE";
  const std::string tagging = HeaderString(call, "x-amz-tagging-directive").value_or("COPY");
  if (tagging != "COPY" && tagging != "REPLACE") {
    return InvalidArgumentError("Unknown tagging directive.", "x-amz-tagging-directive", tagging);
  }
  plan.replace_tags = tagging == "REPLACE";
  if (plan.replace_tags) {
    if (auto header = call.Header("x-amz-tagging")) {
      auto tags = ParseTaggingHeader(*header);
      if (!tags.ok()) return tags.error();
      plan.tags = std::move(tags).value();
    }
  }
  if (auto algorithm = call.Header("x-amz-checksum-algorithm")) {
    plan.checksum = auth::ChecksumFromAlgorithmValue(*algorithm);
    if (!plan.checksum) {
      return S3Error(S3ErrorCode::kInvalidRequest, "Checksum algorithm provided is unsupported.");
    }
  }
  return plan;
}

// AWS refuses a copy onto itself that changes nothing.
bool IsIllegalSelfCopy(const S3Call& call, const SourceObject& source, const CopyPlan& plan) {
  return source.target.bucket == call.bucket && source.target.key == call.key &&
         source.target.version_id.empty() && !plan.replace_metadata && !plan.checksum &&
         !call.Header("x-amz-storage-class");
}

// The destination version's metadata (bytes and digests come later).
S3Result<pb::ObjectVersion> DestinationOf(const S3Call& call, const SourceObject& source,
                                          const CopyPlan& plan) {
  pb::ObjectVersion v;
  if (plan.replace_metadata) {
    if (auto st = FillObjectMetadata(call, &v); !st.ok()) return st.error();
  } else {
    const pb::ObjectVersion& s = source.version;
    v.set_content_type(s.content_type());
    v.set_content_encoding(s.content_encoding());
    v.set_content_disposition(s.content_disposition());
    v.set_cache_control(s.cache_control());
    v.set_content_language(s.content_language());
    v.set_expires(s.expires());
    *v.mutable_user_metadata() = s.user_metadata();
    v.set_storage_class(s.storage_class());
    if (auto storage = call.Header("x-amz-storage-class")) {
      v.set_storage_class(*storage == "STANDARD" ? "" : std::string(*storage));
    }
  }
  v.set_owner(plan.access.owner);
  if (plan.access.acl) *v.mutable_acl() = *plan.access.acl;
  if (plan.replace_tags) {
    for (const pb::MetadataPair& t : plan.tags) *v.add_tags() = t;
  } else {
    *v.mutable_tags() = source.version.tags();
  }
  return v;
}

// The checksums the copy computes: the one asked for, else the source's
// algorithms (a composite source checksum becomes a full-object one).
std::vector<auth::ChecksumAlgorithm> ChecksumsToCompute(const SourceObject& source,
                                                        const CopyPlan& plan) {
  if (plan.checksum) return {*plan.checksum};
  std::vector<auth::ChecksumAlgorithm> out;
  for (const pb::ObjectChecksum& c : source.version.checksums()) {
    auto algorithm = auth::ChecksumFromAlgorithmValue(c.algorithm());
    if (algorithm && std::find(out.begin(), out.end(), *algorithm) == out.end()) {
      out.push_back(*algorithm);
    }
  }
  return out;
}

void CommitCopy(CallPtr call, SourceObject source, pb::ObjectVersion object) {
  pb::S3Op op;
  pb::PutObjectOp* put = op.mutable_put_object();
  put->set_bucket_id(call->bucket_info.bucket_id());
  put->set_key(call->stored_key());
  *put->mutable_object() = object;
  put->set_versioning(call->bucket_info.versioning());
  // The header forms were checked before any byte moved (PlanCopy).
  if (call->Header("if-none-match")) put->set_if_none_match_any(true);
  if (auto match = call->Header("if-match")) put->set_if_match_etag(std::string(UnquoteEtag(*match)));
  call->front.index().Apply(std::move(op), [call, source = std::move(source),
                                            object = std::move(object)](Result<pb::S3OpResult> r) {
    // A refused op queued the new blobs for GC; an unknown outcome keeps them.
    if (!r.ok()) {
      call->front.KeepBlobsOfUnknownOutcome(static_cast<size_t>(object.blobs_size()));
      return call->Fail(r.status());
    }
    if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r));
    http::Headers headers;
    AddWrittenVersionHeader(call->bucket_info, r->version_id(), headers);
    AddSourceVersionHeader(source, headers);
    call->RespondXml(200,
                     AddChecksumElements(
                         CopyObjectResultXml(object.last_modified_ms(), QuoteEtag(object.etag())),
                         "CopyObjectResult", object.checksums()),
                     std::move(headers));
  });
}

void CopyResolved(CallPtr call, const CopyPlan& plan, SourceObject source) {
  if (IsIllegalSelfCopy(*call, source, plan)) {
    return call->Fail(S3Error(S3ErrorCode::kInvalidRequest,
                              "This copy request is illegal because it is trying to copy an "
                              "object to itself without changing the object's metadata, storage "
                              "class, website redirect location or encryption attributes."));
  }
  if (source.version.size() > limits::kS3CopySourceBytesMax) {
    return call->Fail(S3Error(S3ErrorCode::kInvalidRequest,
                              "The specified copy source is larger than the maximum allowable "
                              "size for a copy source: " +
                                  std::to_string(limits::kS3CopySourceBytesMax)));
  }
  auto object = DestinationOf(*call, source, plan);
  if (!object.ok()) return call->Fail(object.error());
  // Inline sources stay inline; others are copied into new blobs.
  std::shared_ptr<BlobWriter> writer;
  const uint64_t size = source.version.size();
  if (source.version.blobs_size() > 0) writer = WriterFor(call, size);
  auto copier = std::make_shared<ByteCopier>(call->front, source.version, 0, size, writer,
                                             ChecksumsToCompute(source, plan));
  copier->Run([call, source = std::move(source), object = std::move(object).value()](
                  S3Result<CopiedBytes> bytes) mutable {
    if (!bytes.ok()) return call->Fail(bytes.error());
    object.set_size(bytes->size);
    object.set_etag(bytes->md5_hex);
    object.set_last_modified_ms(NowMs());
    for (const auto& [algorithm, value] : bytes->checksums) {
      pb::ObjectChecksum* c = object.add_checksums();
      c->set_algorithm(std::string(auth::ChecksumName(algorithm)));
      c->set_value(value);
    }
    for (pb::BlobRef& ref : bytes->blobs) *object.add_blobs() = std::move(ref);
    if (object.blobs_size() == 0) object.set_inline_data(std::move(bytes->inline_data));
    CommitCopy(call, std::move(source), std::move(object));
  });
}

// ---- UploadPartCopy ------------------------------------------------------

void CommitPartCopy(CallPtr call, const PartTarget& part, SourceObject source,
                    CopiedBytes bytes) {
  pb::S3Op op;
  pb::UploadPartOp* put = op.mutable_upload_part();
  put->set_bucket_id(call->bucket_info.bucket_id());
  put->set_key(call->stored_key());
  put->set_upload_id(part.upload_id);
  pb::PartRecord* record = put->mutable_part();
  record->set_part_number(part.part_number);
  record->set_size(bytes.size);
  record->set_etag(bytes.md5_hex);
  record->set_last_modified_ms(NowMs());
  for (pb::BlobRef& ref : bytes.blobs) *record->add_blobs() = std::move(ref);
  for (const auto& [alg, value] : bytes.checksums) {
    pb::ObjectChecksum* c = record->add_checksums();
    c->set_algorithm(std::string(auth::ChecksumName(alg)));
    c->set_value(value);
  }
  const pb::PartRecord answer = *record;
  call->front.index().Apply(std::move(op), [call, source = std::move(source), answer,
                                            upload_id = part.upload_id](Result<pb::S3OpResult> r) {
    // As for CommitCopy: an unknown outcome keeps the part's new blobs.
    if (!r.ok()) {
      call->front.KeepBlobsOfUnknownOutcome(static_cast<size_t>(answer.blobs_size()));
      return call->Fail(r.status());
    }
    if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r, {upload_id}));
    http::Headers headers;
    AddSourceVersionHeader(source, headers);
    call->RespondXml(200,
                     AddChecksumElements(
                         CopyPartResultXml(answer.last_modified_ms(), QuoteEtag(answer.etag())),
                         "CopyPartResult", answer.checksums()),
                     std::move(headers));
  });
}

void CopyPartResolved(CallPtr call, PartTarget part, const std::string& algorithm,
                      SourceObject source) {
  auto range = ParseCopyRange(call->Header("x-amz-copy-source-range"), source.version.size());
  if (!range.ok()) return call->Fail(range.error());
  const uint64_t first = range->has_value() ? (*range)->first : 0;
  const uint64_t length = range->has_value() ? (*range)->last - (*range)->first + 1 : 0;
  std::vector<auth::ChecksumAlgorithm> checksums;
  if (auto composite = CompositeAlgorithm(algorithm)) checksums.push_back(*composite);
  auto copier = std::make_shared<ByteCopier>(call->front, source.version, first, length,
                                             WriterFor(call, range->has_value() ? length : source.version.size()),
                                             std::move(checksums));
  copier->Run([call, part = std::move(part), source = std::move(source)](
                  S3Result<CopiedBytes> bytes) mutable {
    if (!bytes.ok()) return call->Fail(bytes.error());
    CommitPartCopy(call, part, std::move(source), std::move(bytes).value());
  });
}

}  // namespace

void CopyObject(CallPtr call) {
  auto plan = PlanCopy(*call);
  if (!plan.ok()) return call->Fail(plan.error());
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call, plan = std::move(plan).value()] {
    WithObjectWriteAccess(call, [call, plan](ObjectWriteAccess access) mutable {
      plan.access = std::move(access);
      ResolveSource(call, [call, plan](SourceObject source) {
        CopyResolved(call, plan, std::move(source));
      });
    });
  });
}

void UploadPartCopy(CallPtr call, PartTarget part) {
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call, part = std::move(part)] {
    // The upload first: NoSuchUpload before any byte moves, and its
    // checksum algorithm, which every part must carry.
    call->front.index().ReadUpload(
        call->bucket_info.bucket_id(), call->stored_key(), part.upload_id,
        [call, part](Result<std::optional<pb::UploadRecord>> upload) {
          if (!upload.ok()) return call->Fail(upload.status());
          if (!upload->has_value()) return call->Fail(NoSuchUploadError(part.upload_id));
          const std::string algorithm = (*upload)->checksum_algorithm();
          ResolveSource(call, [call, part, algorithm](SourceObject source) {
            CopyPartResolved(call, part, algorithm, std::move(source));
          });
        });
  });
}

}  // namespace tessera::s3::front
