// Signed S3 requests for the S3 object workload: path-style targets,
// SigV4 header signing with the server's own signer (s3/auth/sigv4.h:
// SignV4, the one the router's verifier is tested against), and the
// parsing of a ListObjectsV2 answer.
//
// Contract:
//  1. Object keys and prefixes are UriEncoded in targets ('/' kept in an
//     object path, encoded in a query value), as the AWS SDKs send them.
//  2. SignS3Request signs every header given plus Host, x-amz-date and
//     x-amz-content-sha256 (UNSIGNED-PAYLOAD: the body is not hashed, as
//     S3 allows and the SDKs do over TLS); the result carries every header
//     to send, Host included.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tessera::experiment {

struct S3Endpoint {
  std::string host;  // the router's address
  uint16_t port = 0;  // its s3_port (plain HTTP)
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
};

using S3Headers = std::vector<std::pair<std::string, std::string>>;

// "/BUCKET/KEY" and "/BUCKET".
std::string ObjectTarget(std::string_view bucket, std::string_view key);
std::string BucketTarget(std::string_view bucket);
// "/BUCKET/KEY?versionId=V" and "/BUCKET?versioning" (PutBucketVersioning,
// with VersioningEnabledBody()).
std::string VersionTarget(std::string_view bucket, std::string_view key,
                          std::string_view version_id);
std::string VersioningTarget(std::string_view bucket);
std::string VersioningEnabledBody();
// "/BUCKET?list-type=2&max-keys=1000&prefix=P[&continuation-token=T]".
std::string ListTarget(std::string_view bucket, std::string_view prefix,
                       std::string_view continuation_token);

// Multipart upload targets: "/BUCKET/KEY?uploads" (create),
// "?partNumber=N&uploadId=U" (a part), "?uploadId=U" (complete).
std::string CreateUploadTarget(std::string_view bucket, std::string_view key);
std::string PartTarget(std::string_view bucket, std::string_view key, std::string_view upload_id,
                       uint32_t part_number);
std::string CompleteTarget(std::string_view bucket, std::string_view key,
                           std::string_view upload_id);
// The CompleteMultipartUpload body of parts 1..N with `etags` in part
// order (as each part's answer gave it, quotes included).
std::string CompleteBody(const std::vector<std::string>& etags);

// The text of the first <tag> element of `xml` (entities decoded), or
// nullopt: an upload's <UploadId>, an answer's <Error><Code>.
std::optional<std::string> XmlElement(std::string_view xml, std::string_view tag);

// The headers to send for `method` `target` (with `extra` headers, e.g.
// x-amz-meta-*), signed at `now_unix_s`.
S3Headers SignS3Request(const S3Endpoint& endpoint, std::string_view method,
                        std::string_view target, S3Headers extra, int64_t now_unix_s);

// One page of ListObjectsV2: the keys in order, and the token of the next
// page when IsTruncated. Corruption when the XML is not a
// ListBucketResult.
struct ListPage {
  std::vector<std::string> keys;
  std::optional<std::string> next_token;
};
Result<ListPage> ParseListObjectsV2(std::string_view xml);

}  // namespace tessera::experiment
