// Who sent an S3 POST upload: the form's signature over its `policy` field
// (browser-based uploads carry no Authorization header).
//
//   SigV4: x-amz-algorithm = AWS4-HMAC-SHA256, x-amz-credential =
//          AKID/YYYYMMDD/REGION/s3/aws4_request, x-amz-date, and
//          x-amz-signature = hex HMAC-SHA256(signing key, policy)
//   SigV2: AWSAccessKeyId, signature = base64 HMAC-SHA1(secret, policy)
//   none of these and no policy: anonymous (context.anonymous)
//
// Contract:
//  1. Field names compare case-insensitively (fields: the form's fields
//     before the file, names as sent).
//  2. A signature without a policy, a policy without a signature, an
//     algorithm other than AWS4-HMAC-SHA256, a malformed credential or a
//     scope that is not this endpoint's (region, service, terminal, the
//     day of x-amz-date) are 400 InvalidArgument naming the field; an
//     unknown access key is 403 InvalidAccessKeyId; a wrong signature 403
//     SignatureDoesNotMatch. The request time is not checked against the
//     clock: the policy's expiration bounds the form's life (post_policy.h).
//  3. The context's payload mode is kUnsigned: the file's bytes are not
//     signed (content-length-range and checksums fields bound them).
//
// Thread safety: pure; the lookup is called at most once.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/auth/auth_context.h"
#include "s3/auth/post_policy.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

// The value of the field named `name` (case-insensitive), or nullptr.
const std::string* PostField(const PostFields& fields, std::string_view name);

S3Result<AuthContext> AuthenticatePostForm(const PostFields& fields, const AuthConfig& config,
                                           const CredentialLookup& lookup);

}  // namespace tessera::s3::auth
