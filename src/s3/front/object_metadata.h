// The one mapping from a request's headers to an object version's
// metadata, shared by PutObject, CreateMultipartUpload (the upload's
// template) and CopyObject with x-amz-metadata-directive: REPLACE; and the
// x-amz-tagging header (PutObject, CreateMultipartUpload, CopyObject with
// x-amz-tagging-directive: REPLACE).
//
// Thread safety: pure functions of the call's request head.
#pragma once

#include <string_view>
#include <vector>

#include "s3/front/s3_call.h"
#include "s3/protocol/s3_result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

// Sets owner (the caller), Content-Type (default binary/octet-stream),
// Content-Encoding (without aws-chunked), Content-Disposition,
// Cache-Control, Content-Language, Expires, x-amz-storage-class and the
// x-amz-meta-* pairs (sorted by name, prefix stripped) of `out`, replacing
// what it held there; size, etag, data, checksums and tags are untouched.
// Errors: CollectUserMetadata's (MetadataTooLarge, InvalidArgument).
S3Status FillObjectMetadata(const S3Call& call, pb::ObjectVersion* out);

// Parses an x-amz-tagging value ("k1=v1&k2=v2", URL-encoded) into tags,
// validated like PutObjectTagging (at most 10, ...); InvalidArgument when
// malformed.
S3Result<std::vector<pb::MetadataPair>> ParseTaggingHeader(std::string_view value);

}  // namespace tessera::s3::front
