// ReadSmallBody: the whole body of a request whose body is a small document
// (CreateBucketConfiguration, CompleteMultipartUpload, Delete, ...), decoded
// and verified exactly like an object body: aws-chunked framing and chunk
// signatures, x-amz-content-sha256, Content-MD5 and x-amz-checksum-*.
// Answers (through `done`) the body, or the S3 error to send: EntityTooLarge
// above `bytes_max`, IncompleteBody, BadDigest, XAmzContentSHA256Mismatch...
#pragma once

#include <functional>
#include <string>

#include "s3/front/s3_call.h"
#include "s3/protocol/s3_result.h"

namespace tessera::s3::front {

// What x-amz-checksum-<alg> headers of the request describe.
enum class DeclaredChecksums {
  kBody,    // the document itself: verified against the body
  kObject,  // the object the request completes (CompleteMultipartUpload):
            // the operation checks them, the body reader ignores them
};

void ReadSmallBody(CallPtr call, size_t bytes_max,
                   std::function<void(S3Result<std::string>)> done,
                   DeclaredChecksums declared = DeclaredChecksums::kBody);

}  // namespace tessera::s3::front
