// The policy document of an S3 POST upload (browser-based upload): what
// the signer allows the form to do, checked against the form's fields.
//
//   {"expiration": "2030-01-01T00:00:00.000Z",
//    "conditions": [{"bucket": "b"}, ["starts-with", "$key", "user/"],
//                   {"acl": "public-read"}, ["content-length-range", 0, 1048576],
//                   ["eq", "$Content-Type", "image/png"], ...]}
//
// Contract:
//  1. ParsePostPolicy reads the base64 `policy` field. A document that is
//     not base64 of a JSON object, lacks "expiration" or "conditions"
//     (names are case-sensitive), has an expiration that is not ISO 8601,
//     or a condition of another shape is 400 InvalidPolicyDocument
//     ("Invalid Policy: ..."), as S3 answers.
//  2. Check (before any byte of the file is stored): an expired policy is
//     403 AccessDenied "Invalid according to Policy: Policy expired.";
//     a condition a field does not meet (the bucket condition is met by
//     the request's bucket; a field that is absent is "") is 403
//     AccessDenied "Invalid according to Policy: Policy Condition failed:
//     [...]"; a form field no condition names, except the exempt ones
//     (policy, file, x-amz-signature, signature, awsaccesskeyid and
//     x-ignore-*), is 403 AccessDenied "Invalid according to Policy: Extra
//     input fields: NAME". Field names compare case-insensitively, values
//     exactly.
//  3. CheckContentLength (once the file's size is known, before the
//     object is committed): outside ["content-length-range", min, max] is
//     400 EntityTooSmall / EntityTooLarge with ProposedSize and the bound.
//
// Thread safety: values; pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/protocol/s3_result.h"

namespace tessera::s3::auth {

struct PostCondition {
  enum class Kind { kEquals, kStartsWith };
  Kind kind = Kind::kEquals;
  std::string field;  // lowercase, without "$"
  std::string value;
  std::string text;   // as S3 names it in "Policy Condition failed: ..."
};

struct PostPolicy {
  int64_t expiration_ms = 0;
  std::vector<PostCondition> conditions;
  std::optional<std::pair<uint64_t, uint64_t>> content_length_range;  // [min, max]
};

// The form's fields before the file, names as sent.
using PostFields = std::vector<std::pair<std::string, std::string>>;

S3Result<PostPolicy> ParsePostPolicy(std::string_view base64_policy);

S3Status CheckPostPolicy(const PostPolicy& policy, const PostFields& fields, std::string_view bucket,
                         int64_t now_ms);

S3Status CheckContentLength(const PostPolicy& policy, uint64_t size);

}  // namespace tessera::s3::auth
