// The one entry point of S3 request authentication: picks the mechanism a
// request uses and verifies it.
//
//   Authorization "AWS4-HMAC-SHA256 ..."   -> SigV4 header   (sigv4.h)
//   Authorization "AWS ..."                -> SigV2 header   (sigv2.h)
//   query X-Amz-Algorithm / X-Amz-Credential / X-Amz-Signature
//                                          -> SigV4 presigned
//   query AWSAccessKeyId / Signature       -> SigV2 presigned
//   none of these                          -> anonymous (context.anonymous)
//
// Both a header and query auth -> InvalidArgument "Only one auth mechanism
// allowed; only the X-Amz-Algorithm query parameter, Signature query string
// parameter or the Authorization header should be specified". Another
// Authorization scheme (e.g. SigV4a "AWS4-ECDSA-P256-SHA256") ->
// NotImplemented for SigV4a, else InvalidArgument "Unsupported Authorization
// Type".
//
// After success the caller: answers AccessDenied for anonymous requests it
// does not allow; for mode kSignedHex checks the body with
// VerifyPayloadSha256; for IsStreaming(mode) decodes the body with
// AwsChunkedDecoder (aws_chunked.h).
//
// Thread safety: pure; the lookup is called at most once, on this thread.
#pragma once

#include <string_view>

#include "s3/auth/auth_context.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

// `virtual_host_bucket`: the bucket the Host header names (virtual-hosted
// style), empty for path-style; only SigV2 needs it.
S3Result<AuthContext> Authenticate(const RequestHead& request,
                                   std::string_view virtual_host_bucket,
                                   const AuthConfig& config, const CredentialLookup& lookup);

}  // namespace tessera::s3::auth
