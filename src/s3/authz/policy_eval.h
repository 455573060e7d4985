// Evaluation of a bucket policy (policy.h) for one request, as IAM
// evaluates a resource policy: a statement applies when its principal,
// action, resource and every condition match; any applying Deny decides
// kDeny; otherwise any applying Allow decides kAllow; otherwise kNone (the
// policy says nothing, the ACLs and ownership decide: authorize.h).
//
// Conditions. A request carries the values of the condition keys the front
// knows (lower-case names; a key with no value is absent). For one key:
//  - absent: true for ...IfExists, for the negated operators
//    (String/Numeric/Date/ArnNotEquals, StringNotLike, NotIpAddress...), for
//    ForAllValues and for Null "true"; false otherwise;
//  - single-valued (no set qualifier): the request's first value is
//    compared; a positive operator holds when it matches any of the
//    policy's values, a negated one when it matches none;
//  - ForAnyValue / ForAllValues: some / every request value satisfies it.
// Policy variables (a statement's `variables`, Version "2012-10-17" only):
// "${key}" in a Resource or a condition value is replaced by the request's
// value of condition key `key` (aws:username, aws:userid, aws:SourceIp,
// aws:CurrentTime, aws:EpochTime, aws:SecureTransport, s3:prefix, ...; any
// key the request carries), as literal text (never a wildcard); ${*},
// ${?} and ${$} are a literal '*', '?' and '$'. A variable without a value
// in the request makes its element not match: that Resource (or
// NotResource) pattern matches nothing, that condition does not hold.
//
// Pure; thread safety: stateless.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "s3/authz/policy.h"

namespace tessera::s3::authz {

// The condition keys of a request and their values.
using ConditionValues = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct PolicyRequest {
  bool anonymous = true;
  std::string canonical_id;  // the principal's (empty: anonymous)
  std::string user;          // the principal's user name
  std::string action;        // "s3:GetObject"
  std::string resource;      // "arn:aws:s3:::bucket" or "arn:aws:s3:::bucket/key"
  ConditionValues values;    // keys in lower case
};

struct PolicyVerdict {
  enum class Kind : uint8_t { kNone, kAllow, kDeny };
  Kind kind = Kind::kNone;
  int statement = -1;  // index of the deciding statement (-1: none)
  std::string sid;     // its Sid
};

PolicyVerdict EvaluatePolicy(const Policy& policy, const PolicyRequest& request);

// Whether one statement applies to the request (exposed for tests).
bool StatementApplies(const Statement& statement, const PolicyRequest& request);

// "arn:aws:s3:::bucket" / "arn:aws:s3:::bucket/key".
std::string ResourceArn(std::string_view bucket, std::string_view key);

}  // namespace tessera::s3::authz
