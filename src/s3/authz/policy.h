// S3 bucket policies: the JSON access policy language as S3 accepts it for
// one bucket (AWS's "Policies and permissions in Amazon S3" and the IAM
// JSON policy element reference), parsed into a model that Evaluate
// (policy_eval.h) reads.
//
// Parsing is validation: ParsePolicy either returns a policy every element
// of which Evaluate understands, or MalformedPolicy with S3's message for
// the first fault ("Policies must be valid JSON and the first byte must be
// '{'", "Missing required field Principal", "Policy has invalid action",
// "Policy has invalid resource", "Invalid principal in policy",
// "Invalid Condition type : X", "Policy has an invalid condition key", ...).
// The document itself is stored as sent (GetBucketPolicy returns it byte for
// byte); the model is rebuilt from it when a request needs it.
//
// Principals. Tessera has no AWS accounts: each user is its own account,
// named by its canonical id (the id x-amz-expected-bucket-owner compares).
// A principal names users as {"CanonicalUser": "<id>"}, {"AWS": "<id>"},
// {"AWS": "arn:aws:iam::<id>:root"} or {"AWS": "arn:aws:iam::<any>:user/
// <user name>"}; "*" and {"AWS": "*"} name everyone, anonymous included.
//
// Thread safety: values; the functions are stateless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "s3/protocol/s3_result.h"

namespace tessera::s3::authz {

enum class Effect : uint8_t { kAllow, kDeny };

// The base condition operators (the "IfExists" suffix and the set
// qualifiers are separate fields of a Condition).
enum class ConditionOp : uint8_t {
  kStringEquals,
  kStringNotEquals,
  kStringEqualsIgnoreCase,
  kStringNotEqualsIgnoreCase,
  kStringLike,
  kStringNotLike,
  kNumericEquals,
  kNumericNotEquals,
  kNumericLessThan,
  kNumericLessThanEquals,
  kNumericGreaterThan,
  kNumericGreaterThanEquals,
  kDateEquals,
  kDateNotEquals,
  kDateLessThan,
  kDateLessThanEquals,
  kDateGreaterThan,
  kDateGreaterThanEquals,
  kBool,
  kIpAddress,
  kNotIpAddress,
  kArnEquals,
  kArnNotEquals,
  kArnLike,
  kArnNotLike,
  kBinaryEquals,
  kNull,
};

enum class SetQualifier : uint8_t { kNone, kForAnyValue, kForAllValues };

// One key of one condition operator: `"StringLike": {"s3:prefix": ["a/*"]}`.
struct Condition {
  ConditionOp op = ConditionOp::kStringEquals;
  SetQualifier qualifier = SetQualifier::kNone;
  bool if_exists = false;
  std::string key;                  // lower case ("aws:sourceip")
  std::vector<std::string> values;  // as text: numbers and booleans as written
};

// The principals of a statement. `everyone`: "*" or {"AWS": "*"}.
struct Principals {
  bool everyone = false;
  std::vector<std::string> canonical_ids;  // CanonicalUser, AWS <id>, arn:...:<id>:root
  std::vector<std::string> user_names;     // arn:aws:iam::<any>:user/<name>
};

struct Statement {
  std::string sid;
  Effect effect = Effect::kAllow;
  bool not_principal = false;
  Principals principals;
  bool not_action = false;
  std::vector<std::string> actions;  // lower case patterns ("s3:get*", "*")
  bool not_resource = false;
  std::vector<std::string> resources;  // "arn:aws:s3:::bucket/key*" patterns
  std::vector<Condition> conditions;   // all must hold
  // Policy variables ("${aws:username}") in resources or condition values
  // are substituted per request (policy_eval.h): only in a policy of
  // Version "2012-10-17"; elsewhere "${...}" is literal text.
  bool variables = false;
};

struct Policy {
  std::string version;  // "2012-10-17", "2008-10-17" or empty
  std::string id;
  std::vector<Statement> statements;
};

// Parses and validates `document` as the policy of bucket `bucket`: every
// Resource must name that bucket or objects in it. At most
// limits::kS3BucketPolicyBytesMax bytes and kS3BucketPolicyStatementsMax
// statements. MalformedPolicy (S3's messages) for anything else.
S3Result<Policy> ParsePolicy(std::string_view document, std::string_view bucket);

// Glob match as the policy language does it: `*` any run of characters
// (also none), `?` exactly one; everything else literal (case-sensitive).
bool GlobMatch(std::string_view pattern, std::string_view text);
// The same, where pattern[i] is literal when literal[i] (a substituted
// policy variable's text, or the escapes ${*} and ${?}).
bool GlobMatchWithLiterals(std::string_view pattern, const std::vector<bool>& literal,
                           std::string_view text);

// Whether the policy is "public" as S3's GetBucketPolicyStatus and the
// public access block define it: some Allow statement applies to everyone
// ("*", {"AWS": "*"}, or NotPrincipal) without a condition that fixes one
// of the keys that confine access: aws:SourceIp to CIDR blocks (none of
// them /0), aws:SourceArn, aws:SourceVpc, aws:SourceVpce, aws:SourceOwner,
// aws:SourceAccount, aws:PrincipalOrgID, aws:PrincipalAccount, aws:userid,
// s3:DataAccessPointArn, s3:DataAccessPointAccount with a positive,
// wildcard-free operator (StringEquals, ArnEquals, IpAddress; ...Like
// without `*` or `?`).
bool IsPublicPolicy(const Policy& policy);

}  // namespace tessera::s3::authz
