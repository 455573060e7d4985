// Multipart uploads: CreateMultipartUpload, CompleteMultipartUpload,
// AbortMultipartUpload and ListParts, each one op (or one read) on the
// object's partition. UploadPart streams its body like PutObject
// (object_put.cc).
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <chrono>

#include "common/limits.h"
#include "s3/auth/checksum.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/model/s3_keys.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

std::string NewUploadId() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) return {};
  return auth::HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
}

// The raw 16 bytes of a hex md5 ETag, or nullopt.
std::optional<std::string> Md5Bytes(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  std::string out(16, '\0');
  for (size_t i = 0; i < 16; ++i) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, value, 16);
    if (ec != std::errc() || end != hex.data() + 2 * i + 2) return std::nullopt;
    out[i] = static_cast<char>(value);
  }
  return out;
}

// The upload id of the request (?uploadId=), or answers NoSuchUpload.
std::optional<std::string> UploadIdOf(const CallPtr& call) {
  const QueryParam* id = call->Param("uploadId");
  if (!id || id->value.empty()) {
    call->Fail(S3Error(S3ErrorCode::kNoSuchUpload));
    return std::nullopt;
  }
  return id->value;
}

S3Error OutcomeError(const pb::S3OpResult& r) {
  switch (r.outcome()) {
    case pb::S3_NO_SUCH_UPLOAD: return S3Error(S3ErrorCode::kNoSuchUpload);
    case pb::S3_INVALID_PART: return S3Error(S3ErrorCode::kInvalidPart);
    case pb::S3_INVALID_PART_ORDER: return S3Error(S3ErrorCode::kInvalidPartOrder);
    case pb::S3_ENTITY_TOO_SMALL: return S3Error(S3ErrorCode::kEntityTooSmall);
    case pb::S3_PRECONDITION_FAILED: return S3Error(S3ErrorCode::kPreconditionFailed);
    case pb::S3_NO_SUCH_KEY: return S3Error(S3ErrorCode::kNoSuchKey);
    default: return S3Error(S3ErrorCode::kInvalidRequest, r.message());
  }
}

pb::ObjectVersion TemplateOf(const S3Call& call) {
  pb::ObjectVersion t;
  t.set_owner(call.user);
  t.set_content_type(std::string(call.Header("content-type").value_or("binary/octet-stream")));
  if (auto encoding = call.Header("content-encoding")) {
    if (auto stripped = StripAwsChunked(*encoding)) t.set_content_encoding(*stripped);
  }
  t.set_content_disposition(std::string(call.Header("content-disposition").value_or("")));
  t.set_cache_control(std::string(call.Header("cache-control").value_or("")));
  t.set_content_language(std::string(call.Header("content-language").value_or("")));
  t.set_expires(std::string(call.Header("expires").value_or("")));
  return t;
}

}  // namespace

void CreateMultipartUpload(CallPtr call) {
  const http::RequestHead& head = call->head();
  auto metadata = CollectUserMetadata(std::vector<HeaderField>(head.headers.begin(), head.headers.end()));
  if (!metadata.ok()) return call->Fail(metadata.error());
  WithOwnedBucket(call, [call, metadata = std::move(metadata).value()] {
    const std::string upload_id = NewUploadId();
    if (upload_id.empty()) return call->Fail(S3Error(S3ErrorCode::kInternalError));
    pb::S3Op op;
    pb::CreateUploadOp* create = op.mutable_create_upload();
    create->set_bucket_id(call->bucket_info.bucket_id());
    create->set_key(call->key);
    pb::UploadRecord* upload = create->mutable_upload();
    upload->set_upload_id(upload_id);
    upload->set_initiated_ms(NowMs());
    *upload->mutable_template_() = TemplateOf(*call);
    for (const auto& [name, value] : metadata) {
      pb::MetadataPair* pair = upload->mutable_template_()->add_user_metadata();
      pair->set_name(name.substr(std::string_view("x-amz-meta-").size()));
      pair->set_value(value);
    }
    if (auto algorithm = call->Header("x-amz-checksum-algorithm")) {
      upload->set_checksum_algorithm(std::string(*algorithm));
    }
    call->front.index().Apply(std::move(op), [call, upload_id](Result<pb::S3OpResult> r) {
      if (!r.ok()) return call->Fail(r.status());
      if (r->outcome() != pb::S3_OK) return call->Fail(OutcomeError(*r));
      call->RespondXml(200, InitiateMultipartUploadXml(call->bucket, call->key, upload_id));
    });
  });
}

void CompleteMultipartUpload(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call, id = *upload_id](
                                                       S3Result<std::string> body) {
    if (!body.ok()) return call->Fail(body.error());
    auto parts = ParseCompleteMultipartUpload(*body);
    if (!parts.ok()) return call->Fail(parts.error());
    if (parts->size() > limits::kS3PartNumberMax) {
      return call->Fail(S3Error(S3ErrorCode::kInvalidArgument, "too many parts"));
    }
    pb::S3Op op;
    pb::CompleteUploadOp* complete = op.mutable_complete_upload();
    std::string md5s;
    for (const CompletedPart& p : *parts) {
      const std::string etag(UnquoteEtag(p.etag));
      auto raw = Md5Bytes(etag);
      if (!raw) return call->Fail(S3Error(S3ErrorCode::kInvalidPart));
      md5s += *raw;
      pb::CompletePart* listed = complete->add_parts();
      listed->set_part_number(p.part_number);
      listed->set_etag(etag);
    }
    const std::string digest = auth::ComputeChecksum(auth::ChecksumAlgorithm::kMd5, md5s);
    const std::string etag = auth::HexEncode(digest) + "-" + std::to_string(parts->size());
    WithOwnedBucket(call, [call, id, etag, op = std::move(op)]() mutable {
      pb::CompleteUploadOp* complete = op.mutable_complete_upload();
      complete->set_bucket_id(call->bucket_info.bucket_id());
      complete->set_key(call->key);
      complete->set_upload_id(id);
      complete->set_etag(etag);
      complete->set_versioning(call->bucket_info.versioning());
      complete->set_now_ms(NowMs());
      complete->set_min_part_bytes(limits::kS3MinPartBytes);
      if (auto none_match = call->Header("if-none-match"); none_match && *none_match == "*") {
        complete->set_if_none_match_any(true);
      }
      if (auto match = call->Header("if-match")) {
        complete->set_if_match_etag(std::string(UnquoteEtag(*match)));
      }
      call->front.index().Apply(std::move(op), [call, etag](Result<pb::S3OpResult> r) {
        if (!r.ok()) return call->Fail(r.status());
        if (r->outcome() != pb::S3_OK) return call->Fail(OutcomeError(*r));
        CompleteMultipartUploadResult result;
        const std::string host(call->Header("host").value_or("localhost"));
        result.location = (call->head().tls ? "https://" : "http://") + host + "/" +
                          call->bucket + "/" + PercentEncode(call->key, /*keep_slash=*/true);
        result.bucket = call->bucket;
        result.key = call->key;
        result.etag = "\"" + etag + "\"";
        http::Headers headers;
        if (call->bucket_info.versioning() != pb::VERSIONING_UNSET) {
          headers.emplace_back("x-amz-version-id", r->version_id());
        }
        call->RespondXml(200, CompleteMultipartUploadXml(result), std::move(headers));
      });
    });
  });
}

void AbortMultipartUpload(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  WithOwnedBucket(call, [call, id = *upload_id] {
    pb::S3Op op;
    pb::AbortUploadOp* abort = op.mutable_abort_upload();
    abort->set_bucket_id(call->bucket_info.bucket_id());
    abort->set_key(call->key);
    abort->set_upload_id(id);
    call->front.index().Apply(std::move(op), [call](Result<pb::S3OpResult> r) {
      if (!r.ok()) return call->Fail(r.status());
      if (r->outcome() != pb::S3_OK) return call->Fail(OutcomeError(*r));
      call->Respond(204, {}, "");
    });
  });
}

void ListParts(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  uint32_t max_parts = 1000;
  uint32_t marker = 0;
  if (const QueryParam* p = call->Param("max-parts")) {
    auto [end, ec] = std::from_chars(p->value.data(), p->value.data() + p->value.size(), max_parts);
    if (ec != std::errc() || end != p->value.data() + p->value.size()) {
      return call->Fail(S3Error(S3ErrorCode::kInvalidArgument, "max-parts is not an integer"));
    }
    max_parts = std::clamp<uint32_t>(max_parts, 1, 1000);
  }
  if (const QueryParam* p = call->Param("part-number-marker")) {
    auto [end, ec] = std::from_chars(p->value.data(), p->value.data() + p->value.size(), marker);
    if (ec != std::errc() || end != p->value.data() + p->value.size()) {
      return call->Fail(S3Error(S3ErrorCode::kInvalidArgument, "bad part-number-marker"));
    }
  }
  WithOwnedBucket(call, [call, id = *upload_id, max_parts, marker] {
    const uint64_t bucket = call->bucket_info.bucket_id();
    call->front.index().ReadUpload(
        bucket, call->key, id, [call, id, max_parts, marker, bucket](
                                   Result<std::optional<pb::UploadRecord>> upload) {
          if (!upload.ok()) return call->Fail(upload.status());
          if (!upload->has_value()) return call->Fail(S3Error(S3ErrorCode::kNoSuchUpload));
          // max_parts parts, then (when the page is full) a probe of one
          // more for an exact IsTruncated; both within the scan limit.
          call->front.index().ListUploadParts(
              bucket, call->key, id, marker, max_parts,
              [call, id, max_parts, marker, bucket](Result<std::vector<pb::PartRecord>> parts) {
                if (!parts.ok()) return call->Fail(parts.status());
                ListPartsResult result;
                result.bucket = call->bucket;
                result.key = call->key;
                result.upload_id = id;
                result.initiator = result.owner = Owner{call->user, call->user};
                result.part_number_marker = marker;
                result.max_parts = max_parts;
                for (const pb::PartRecord& p : *parts) {
                  result.parts.push_back(
                      PartEntry{p.part_number(), p.last_modified_ms(), QuoteEtag(p.etag()), p.size()});
                }
                if (!parts->empty()) result.next_part_number_marker = parts->back().part_number();
                if (parts->size() < max_parts) return call->RespondXml(200, ListPartsXml(result));
                call->front.index().ListUploadParts(
                    bucket, call->key, id, result.next_part_number_marker, 1,
                    [call, result = std::move(result)](
                        Result<std::vector<pb::PartRecord>> more) mutable {
                      if (!more.ok()) return call->Fail(more.status());
                      result.is_truncated = !more->empty();
                      call->RespondXml(200, ListPartsXml(result));
                    });
              });
        });
  });
}

}  // namespace tessera::s3::front
