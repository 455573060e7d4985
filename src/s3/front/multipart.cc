// Multipart uploads: CreateMultipartUpload, CompleteMultipartUpload,
// AbortMultipartUpload and ListParts, each one op (or one read) on the
// object's partition, and ListMultipartUploads (a partition walk).
// UploadPart streams its body like PutObject (object_put.cc), UploadPartCopy
// copies (object_copy.cc). Uploads created with x-amz-checksum-algorithm
// complete with a composite checksum (composite_checksum.h): Complete reads
// the upload record for its algorithm, requires each listed part's
// checksum, and the op checks them against the stored parts.
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <limits>

#include "common/limits.h"
#include "s3/auth/checksum.h"
#include "s3/front/composite_checksum.h"
#include "s3/front/object_metadata.h"
#include "s3/front/charge_rest.h"
#include "s3/front/s3_charge.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/model/full_object_checksum.h"
#include "s3/model/s3_keys.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

// 32 lowercase hex digits: the initiation time in microseconds since the
// epoch (16), then 8 random bytes (16). Upload records sort by upload id
// under their object key, so the listing shows one key's uploads oldest
// first, as S3 does. Empty when the random source fails.
std::string NewUploadId(int64_t initiated_us) {
  unsigned char raw[8];
  if (RAND_bytes(raw, sizeof(raw)) != 1) return {};
  char time_hex[17];
  std::snprintf(time_hex, sizeof(time_hex), "%016" PRIx64, static_cast<uint64_t>(initiated_us));
  return time_hex +
         auth::HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
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
    call->Fail(NoSuchUploadError(id ? id->value : ""));
    return std::nullopt;
  }
  return id->value;
}

// The listed part's checksum of `algorithm` (base64 as sent; empty: none).
const std::string& ListedChecksum(const CompletedPart& part, auth::ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case auth::ChecksumAlgorithm::kCrc32c: return part.checksum_crc32c;
    case auth::ChecksumAlgorithm::kSha1: return part.checksum_sha1;
    case auth::ChecksumAlgorithm::kSha256: return part.checksum_sha256;
    case auth::ChecksumAlgorithm::kCrc64Nvme: return part.checksum_crc64nvme;
    default: return part.checksum_crc32;
  }
}

// The first listed part that names a checksum, or nullptr.
const CompletedPart* FirstWithChecksum(const std::vector<CompletedPart>& parts) {
  for (const CompletedPart& p : parts) {
    if (!p.checksum_crc32.empty() || !p.checksum_crc32c.empty() || !p.checksum_sha1.empty() ||
        !p.checksum_sha256.empty() || !p.checksum_crc64nvme.empty()) {
      return &p;
    }
  }
  return nullptr;
}

// Full-object uploads: the listed parts' checksums (optional; the op checks
// the given ones) and the whole-object checksum the request declares
// (x-amz-checksum-<alg>; optional), which the op compares with the one it
// combines from the stored parts.
S3Status AddFullObjectChecksums(const S3Call& call, const std::vector<CompletedPart>& parts,
                                const std::string& name, pb::CompleteUploadOp* complete) {
  auto algorithm = auth::ChecksumFromAlgorithmValue(name);
  if (!algorithm) return S3Error(S3ErrorCode::kInternalError, "unknown upload checksum");
  for (size_t i = 0; i < parts.size(); ++i) {
    complete->mutable_parts(static_cast<int>(i))->set_checksum(ListedChecksum(parts[i], *algorithm));
  }
  complete->set_checksum_algorithm(name);
  if (auto declared = call.Header(auth::ChecksumHeaderName(*algorithm))) {
    complete->set_declared_full_object_checksum(std::string(*declared));
  }
  return S3Status::Ok();
}

// Composite uploads: each listed part's checksum into the op, and the
// composite checksum over them. InvalidRequest when one is missing.
S3Status AddListedChecksums(const std::vector<CompletedPart>& parts, const std::string& name,
                            pb::CompleteUploadOp* complete) {
  auto algorithm = CompositeAlgorithm(name);
  if (!algorithm) return S3Error(S3ErrorCode::kInternalError, "unknown upload checksum");
  std::vector<std::string> values;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& value = ListedChecksum(parts[i], *algorithm);
    if (value.empty()) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "The upload was created using a " + lower +
                         " checksum. The complete request must include the checksum for each "
                         "part. It was missing for part " +
                         std::to_string(parts[i].part_number) + " in the request.");
    }
    complete->mutable_parts(static_cast<int>(i))->set_checksum(value);
    values.push_back(value);
  }
  auto composite = CompositeChecksum(*algorithm, values);
  if (!composite.ok()) return composite.error();
  complete->set_checksum_algorithm(name);
  complete->set_composite_checksum(*composite);
  return S3Status::Ok();
}

struct UploadChecksum {
  std::string algorithm;  // canonical name; empty: none
  bool full_object = false;
};

// The upload's checksum from x-amz-checksum-algorithm and
// x-amz-checksum-type, as S3 allows them: COMPOSITE (the default for
// CRC32, CRC32C, SHA1, SHA256) or FULL_OBJECT (CRC32, CRC32C, CRC64NVME;
// the only type of CRC64NVME).
S3Result<UploadChecksum> UploadChecksumOf(const S3Call& call) {
  const std::string type(call.Header("x-amz-checksum-type").value_or(""));
  auto value = call.Header("x-amz-checksum-algorithm");
  if (!value) {
    if (type.empty()) return UploadChecksum{};
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "The x-amz-checksum-type header can only be used with the "
                   "x-amz-checksum-algorithm header.");
  }
  auto algorithm = auth::ChecksumFromAlgorithmValue(*value);
  if (!algorithm || *algorithm == auth::ChecksumAlgorithm::kMd5) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "Checksum algorithm provided is unsupported. Please try again with any of the "
                   "valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]");
  }
  const std::string name(auth::ChecksumName(*algorithm));
  const bool crc64 = *algorithm == auth::ChecksumAlgorithm::kCrc64Nvme;
  if (type == "FULL_OBJECT" || (type.empty() && crc64)) {
    if (!model::IsFullObjectAlgorithm(name)) {
      return S3Error(S3ErrorCode::kInvalidRequest, "The FULL_OBJECT checksum type cannot be used "
                                                   "with the " + name + " checksum algorithm.");
    }
    return UploadChecksum{name, true};
  }
  if (type.empty() || type == "COMPOSITE") {
    if (crc64) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "The COMPOSITE checksum type cannot be used with the CRC64NVME checksum "
                     "algorithm.");
    }
    return UploadChecksum{name, false};
  }
  return S3Error(S3ErrorCode::kInvalidRequest,
                 "Value for x-amz-checksum-type header is invalid.");
}

// A ListParts page holds at most this many parts, as in S3.
constexpr uint32_t kPartsPerPageMax = 1000;

// ListParts' max-parts / part-number-marker: absent or empty -> `absent`;
// otherwise an integer in [0, 2^31), refused with the message S3 gives for
// a negative value and for anything else.
S3Result<uint32_t> ParsePartListArgument(const S3Call& call, std::string_view name,
                                         uint32_t absent) {
  const QueryParam* p = call.Param(name);
  if (p == nullptr || p->value.empty()) return absent;
  const char* const last = p->value.data() + p->value.size();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(p->value.data(), last, value);
  const bool integer = ec == std::errc() && end == last;
  if (integer && value < 0) {
    return InvalidArgumentError(
        "Argument " + std::string(name) + " must be an integer between 0 and 2147483647",
        std::string(name), p->value);
  }
  if (!integer || value > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError(
        "Provided " + std::string(name) + " not an integer or within integer range",
        std::string(name), p->value);
  }
  return static_cast<uint32_t>(value);
}

// Commits a completed upload (the op with its listed parts and checksums)
// and answers the result document.
void CommitComplete(CallPtr call, const std::string& id, const std::string& etag, pb::S3Op op) {
  pb::CompleteUploadOp* complete = op.mutable_complete_upload();
  complete->set_bucket_id(call->bucket_info.bucket_id());
  complete->set_key(call->stored_key());
  complete->set_upload_id(id);
  complete->set_etag(etag);
  complete->set_versioning(call->bucket_info.versioning());
  complete->set_now_ms(NowMs());
  complete->set_min_part_bytes(call->front.options().min_part_bytes);
  if (auto none_match = call->Header("if-none-match"); none_match && *none_match == "*") {
    complete->set_if_none_match_any(true);
  }
  if (auto match = call->Header("if-match")) {
    complete->set_if_match_etag(std::string(UnquoteEtag(*match)));
  }
  const OutcomeContext context{id, complete->min_part_bytes()};
  call->front.index().Apply(std::move(op), [call, etag, context](Result<pb::S3OpResult> r) {
    if (!r.ok()) return call->Fail(r.status());
    if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r, context));
    CompleteMultipartUploadResult result;
    const std::string host(call->Header("host").value_or("localhost"));
    result.location = (call->head().tls ? "https://" : "http://") + host + "/" +
                      call->bucket + "/" + PercentEncode(call->key, /*keep_slash=*/true);
    result.bucket = call->bucket;
    result.key = call->key;
    result.etag = "\"" + etag + "\"";
    http::Headers headers;
    AddWrittenVersionHeader(call->bucket_info, r->version_id(), headers);
    call->RespondXml(200,
                     AddChecksumElements(CompleteMultipartUploadXml(result),
                                         "CompleteMultipartUploadResult",
                                         r->object().checksums()),
                     std::move(headers));
  });
}

// Creates the upload record (the owner and ACL are in its template, which
// becomes the completed version) and answers the upload id.
void StartUpload(CallPtr call, pb::UploadRecord upload) {
  const int64_t initiated_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  const std::string upload_id = NewUploadId(initiated_us);
  if (upload_id.empty()) return call->Fail(S3Error(S3ErrorCode::kInternalError));
  upload.set_upload_id(upload_id);
  upload.set_initiated_ms(initiated_us / 1000);
  const std::string upload_algorithm = upload.checksum_algorithm();
  const bool full_object = upload.checksum_full_object();
  pb::S3Op op;
  pb::CreateUploadOp* create = op.mutable_create_upload();
  create->set_bucket_id(call->bucket_info.bucket_id());
  create->set_key(call->stored_key());
  *create->mutable_upload() = std::move(upload);
  call->front.index().Apply(std::move(op), [call, upload_id, upload_algorithm, full_object](
                                                Result<pb::S3OpResult> r) {
    if (!r.ok()) return call->Fail(r.status());
    if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r, {upload_id}));
    http::Headers headers;
    if (!upload_algorithm.empty()) {
      headers.emplace_back("x-amz-checksum-algorithm", upload_algorithm);
      headers.emplace_back("x-amz-checksum-type", full_object ? "FULL_OBJECT" : "COMPOSITE");
    }
    call->RespondXml(200, InitiateMultipartUploadXml(call->bucket, call->key, upload_id),
                     std::move(headers));
  });
}

}  // namespace

void CreateMultipartUpload(CallPtr call) {
  pb::UploadRecord upload;
  if (auto st = FillObjectMetadata(*call, upload.mutable_template_()); !st.ok()) {
    return call->Fail(st.error());
  }
  if (auto tagging = call->Header("x-amz-tagging")) {
    auto tags = ParseTaggingHeader(*tagging);
    if (!tags.ok()) return call->Fail(tags.error());
    for (pb::MetadataPair& t : *tags) *upload.mutable_template_()->add_tags() = std::move(t);
  }
  auto checksum = UploadChecksumOf(*call);
  if (!checksum.ok()) return call->Fail(checksum.error());
  upload.set_checksum_algorithm(checksum->algorithm);
  upload.set_checksum_full_object(checksum->full_object);
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call, upload = std::move(upload)]() mutable {
    WithObjectWriteAccess(call, [call, upload = std::move(upload)](ObjectWriteAccess access) mutable {
      upload.mutable_template_()->set_owner(access.owner);
      if (access.acl) *upload.mutable_template_()->mutable_acl() = std::move(*access.acl);
      StartUpload(call, std::move(upload));
    });
  });
}

void CompleteMultipartUpload(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  if (auto st = CheckWriteConditionHeaders(call->Header("if-match"), call->Header("if-none-match"));
      !st.ok()) {
    return call->Fail(st.error());
  }
  // Authorization first: only a caller who may write gets its body read and parsed.
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call, id = *upload_id] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call, id](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      // S3 reads an empty body as a list without parts, and tells a caller
      // that the upload does not exist before what is wrong with its list.
      auto parts = body->empty() ? S3Result<std::vector<CompletedPart>>(NoPartsListed())
                                 : ParseCompleteMultipartUpload(*body);
      // Answers `error` once the upload is known to exist, NoSuchUpload
      // otherwise.
      auto fail_if_upload_exists = [call, id](S3Error error) {
        call->front.index().ReadUpload(
            call->bucket_info.bucket_id(), call->stored_key(), id,
            [call, id, error = std::move(error)](Result<std::optional<pb::UploadRecord>> upload) mutable {
              if (!upload.ok()) return call->Fail(upload.status());
              if (!upload->has_value()) return call->Fail(NoSuchUploadError(id));
              if (error.code == S3ErrorCode::kInvalidPartOrder) {
                error.details.emplace_back("UploadId", id);
              }
              call->Fail(error);
            });
      };
      if (!parts.ok()) return fail_if_upload_exists(parts.error());
      if (parts->size() > limits::kS3PartNumberMax) {
        return call->Fail(S3Error(S3ErrorCode::kInvalidArgument, "too many parts"));
      }
      ChargeRest(*call, S3RestAfterComplete(parts->size()));
      pb::S3Op op;
      pb::CompleteUploadOp* complete = op.mutable_complete_upload();
      std::string md5s;
      for (const CompletedPart& p : *parts) {
        const std::string etag(UnquoteEtag(p.etag));
        auto raw = Md5Bytes(etag);
        if (!raw) return fail_if_upload_exists(InvalidPartError(id, p.part_number, etag));
        md5s += *raw;
        pb::CompletePart* listed = complete->add_parts();
        listed->set_part_number(p.part_number);
        listed->set_etag(etag);
      }
      const std::string digest = auth::ComputeChecksum(auth::ChecksumAlgorithm::kMd5, md5s);
      const std::string etag = auth::HexEncode(digest) + "-" + std::to_string(parts->size());
      call->front.index().ReadUpload(
          call->bucket_info.bucket_id(), call->stored_key(), id,
          [call, id, etag, op = std::move(op), parts = std::move(parts).value()](
              Result<std::optional<pb::UploadRecord>> upload) mutable {
            if (!upload.ok()) return call->Fail(upload.status());
            // Gone: the op itself answers NoSuchUpload, or the first
            // answer when this completion already succeeded (a retry).
            if (!upload->has_value()) return CommitComplete(call, id, etag, std::move(op));
            const std::string& algorithm = (*upload)->checksum_algorithm();
            if (algorithm.empty()) {
              // An upload without a checksum has none to match: a listed
              // part checksum names a part that does not exist (S3's
              // InvalidPart).
              if (const CompletedPart* p = FirstWithChecksum(parts)) {
                return call->Fail(
                    InvalidPartError(id, p->part_number, std::string(UnquoteEtag(p->etag))));
              }
            } else {
              auto st = (*upload)->checksum_full_object()
                            ? AddFullObjectChecksums(*call, parts, algorithm,
                                                     op.mutable_complete_upload())
                            : AddListedChecksums(parts, algorithm, op.mutable_complete_upload());
              if (!st.ok()) return call->Fail(st.error());
            }
            CommitComplete(call, id, etag, std::move(op));
          });
    }, DeclaredChecksums::kObject);
  });
}


void AbortMultipartUpload(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  WithAuthorizedBucket(call, authz::Action::kAbortMultipartUpload, [call, id = *upload_id] {
    pb::S3Op op;
    pb::AbortUploadOp* abort = op.mutable_abort_upload();
    abort->set_bucket_id(call->bucket_info.bucket_id());
    abort->set_key(call->stored_key());
    abort->set_upload_id(id);
    call->front.index().Apply(std::move(op), [call, id](Result<pb::S3OpResult> r) {
      if (!r.ok()) return call->Fail(r.status());
      if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r, {id}));
      ChargeRest(*call, S3RestAfterAbort(r->parts_removed()));
      call->Respond(204, {}, "");
    });
  });
}

void ListParts(CallPtr call) {
  auto upload_id = UploadIdOf(call);
  if (!upload_id) return;
  auto max_parts = ParsePartListArgument(*call, "max-parts", kPartsPerPageMax);
  if (!max_parts.ok()) return call->Fail(max_parts.error());
  auto marker = ParsePartListArgument(*call, "part-number-marker", 0);
  if (!marker.ok()) return call->Fail(marker.error());
  const uint32_t page = std::clamp<uint32_t>(*max_parts, 1, kPartsPerPageMax);
  WithAuthorizedBucket(call, authz::Action::kListMultipartUploadParts,
                       [call, id = *upload_id, max_parts = page, marker = *marker] {
    const uint64_t bucket = call->bucket_info.bucket_id();
    call->front.index().ReadUpload(
        bucket, call->stored_key(), id, [call, id, max_parts, marker, bucket](
                                   Result<std::optional<pb::UploadRecord>> upload) {
          if (!upload.ok()) return call->Fail(upload.status());
          if (!upload->has_value()) return call->Fail(NoSuchUploadError(id));
          ListPartsResult result;
          result.bucket = call->bucket;
          result.key = call->key;
          result.upload_id = id;
          result.initiator = result.owner = OwnerOfUser(*call, call->user);
          result.part_number_marker = marker;
          result.max_parts = max_parts;
          result.checksum_algorithm = (*upload)->checksum_algorithm();
          if (!result.checksum_algorithm.empty()) {
            result.checksum_type = (*upload)->checksum_full_object() ? "FULL_OBJECT" : "COMPOSITE";
          }
          // max_parts parts, then (when the page is full) a probe of one
          // more for an exact IsTruncated; both within the scan limit.
          call->front.index().ListUploadParts(
              bucket, call->stored_key(), id, marker, max_parts,
              [call, id, max_parts, bucket, result = std::move(result)](
                  Result<std::vector<pb::PartRecord>> parts) mutable {
                if (!parts.ok()) return call->Fail(parts.status());
                // A part's checksum is the upload's: an upload created
                // without an algorithm lists none, whatever its parts
                // carried (as S3 lists them).
                for (const pb::PartRecord& p : *parts) {
                  PartEntry entry{p.part_number(), p.last_modified_ms(), QuoteEtag(p.etag()),
                                  p.size(), {}};
                  for (const pb::ObjectChecksum& c : p.checksums()) {
                    if (c.algorithm() != result.checksum_algorithm) continue;
                    entry.checksums.emplace_back(c.algorithm(), c.value());
                  }
                  result.parts.push_back(std::move(entry));
                }
                if (!parts->empty()) result.next_part_number_marker = parts->back().part_number();
                if (parts->size() < max_parts) return call->RespondXml(200, ListPartsXml(result));
                call->front.index().ListUploadParts(
                    bucket, call->stored_key(), id, result.next_part_number_marker, 1,
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

namespace {

// The ListMultipartUploads page from one walk of max-uploads + 1 items.
// NextKeyMarker / NextUploadIdMarker name the page's last upload, as S3's
// do: a page that ends in (or holds only) common prefixes does not move them
// past those prefixes, so a client pages on by passing the prefix as the
// key marker.
void AnswerUploads(CallPtr call, ListMultipartUploadsResult result, ListPage page) {
  result.is_truncated = page.items.size() > result.max_uploads;
  if (result.is_truncated) page.items.resize(result.max_uploads);
  ChargeListed(*call, page);
  for (const pb::S3ListItem& item : page.items) {
    if (item.has_entry()) {
      const pb::S3ListEntry& e = item.entry();
      UploadEntry u;
      u.key = e.key();
      u.upload_id = e.upload_id();
      u.initiator = u.owner = OwnerOfUser(*call, e.owner());
      if (!e.storage_class().empty()) u.storage_class = e.storage_class();
      u.checksum_algorithm = e.checksum_algorithm();
      u.checksum_type = e.checksum_type();
      u.initiated_ms = e.last_modified_ms();
      result.next_key_marker = e.key();
      result.next_upload_id_marker = e.upload_id();
      result.uploads.push_back(std::move(u));
    } else {
      result.common_prefixes.push_back(item.common_prefix());
    }
  }
  call->RespondXml(200, ListMultipartUploadsXml(result));
}

}  // namespace

void ListMultipartUploads(CallPtr call) {
  ListMultipartUploadsResult result;
  auto param = [&call](std::string_view name) {
    const QueryParam* p = call->Param(name);
    return p ? p->value : std::string();
  };
  result.bucket = call->bucket;
  if (const QueryParam* p = call->Param("prefix")) result.prefix = p->value;
  if (const QueryParam* d = call->Param("delimiter"); d && !d->value.empty()) {
    result.delimiter = d->value;
  }
  result.key_marker = param("key-marker");
  // S3 ignores the upload id marker without a key marker.
  if (!result.key_marker.empty()) result.upload_id_marker = param("upload-id-marker");
  auto max_uploads = ParseListLimit(*call, "max-uploads", 1000);
  if (!max_uploads.ok()) return call->Fail(max_uploads.error());
  result.max_uploads = *max_uploads;
  auto encoding_url = ParseEncodingType(*call);
  if (!encoding_url.ok()) return call->Fail(encoding_url.error());
  result.encoding_url = *encoding_url;
  WithAuthorizedBucket(call, authz::Action::kListBucketMultipartUploads,
                       [call, result = std::move(result)]() mutable {
    if (result.max_uploads == 0) return call->RespondXml(200, ListMultipartUploadsXml(result));
    ListQuery query;
    query.bucket_id = call->bucket_info.bucket_id();
    query.layout = model::KeyLayoutOf(call->bucket_info);
    query.prefix = result.prefix.value_or("");
    query.delimiter = result.delimiter.value_or("");
    query.start_after = result.key_marker;
    query.uploads = true;
    query.upload_id_marker = result.upload_id_marker;
    query.max_items = result.max_uploads + 1;
    call->front.index().List(query, [call, result = std::move(result)](
                                        Result<ListPage> page) mutable {
      if (!page.ok()) return call->Fail(page.status());
      AnswerUploads(call, std::move(result), std::move(page).value());
    });
  });
}

}  // namespace tessera::s3::front
