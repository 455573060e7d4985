#include "s3/authz/authorize.h"

#include <array>
#include <utility>

#include "s3/protocol/names.h"

namespace tessera::s3::authz {
namespace {

// Indexed by Action (checked by the unit test: every entry, in order).
constexpr std::array<std::pair<Action, std::string_view>, 45> kActionNames{{
    {Action::kListAllMyBuckets, "s3:ListAllMyBuckets"},
    {Action::kCreateBucket, "s3:CreateBucket"},
    {Action::kDeleteBucket, "s3:DeleteBucket"},
    {Action::kListBucket, "s3:ListBucket"},
    {Action::kListBucketVersions, "s3:ListBucketVersions"},
    {Action::kListBucketMultipartUploads, "s3:ListBucketMultipartUploads"},
    {Action::kGetBucketLocation, "s3:GetBucketLocation"},
    {Action::kGetBucketAcl, "s3:GetBucketAcl"},
    {Action::kPutBucketAcl, "s3:PutBucketAcl"},
    {Action::kGetBucketVersioning, "s3:GetBucketVersioning"},
    {Action::kPutBucketVersioning, "s3:PutBucketVersioning"},
    {Action::kGetBucketPolicy, "s3:GetBucketPolicy"},
    {Action::kGetBucketCors, "s3:GetBucketCORS"},
    {Action::kPutBucketCors, "s3:PutBucketCORS"},
    {Action::kGetBucketTagging, "s3:GetBucketTagging"},
    {Action::kGetLifecycleConfiguration, "s3:GetLifecycleConfiguration"},
    {Action::kGetBucketLogging, "s3:GetBucketLogging"},
    {Action::kGetBucketRequestPayment, "s3:GetBucketRequestPayment"},
    {Action::kGetBucketConfiguration, "s3:GetBucketConfiguration"},
    {Action::kGetObject, "s3:GetObject"},
    {Action::kGetObjectVersion, "s3:GetObjectVersion"},
    {Action::kGetObjectAttributes, "s3:GetObjectAttributes"},
    {Action::kGetObjectVersionAttributes, "s3:GetObjectVersionAttributes"},
    {Action::kPutObject, "s3:PutObject"},
    {Action::kDeleteObject, "s3:DeleteObject"},
    {Action::kDeleteObjectVersion, "s3:DeleteObjectVersion"},
    {Action::kGetObjectAcl, "s3:GetObjectAcl"},
    {Action::kGetObjectVersionAcl, "s3:GetObjectVersionAcl"},
    {Action::kPutObjectAcl, "s3:PutObjectAcl"},
    {Action::kPutObjectVersionAcl, "s3:PutObjectVersionAcl"},
    {Action::kGetObjectTagging, "s3:GetObjectTagging"},
    {Action::kGetObjectVersionTagging, "s3:GetObjectVersionTagging"},
    {Action::kPutObjectTagging, "s3:PutObjectTagging"},
    {Action::kPutObjectVersionTagging, "s3:PutObjectVersionTagging"},
    {Action::kDeleteObjectTagging, "s3:DeleteObjectTagging"},
    {Action::kDeleteObjectVersionTagging, "s3:DeleteObjectVersionTagging"},
    {Action::kListMultipartUploadParts, "s3:ListMultipartUploadParts"},
    {Action::kAbortMultipartUpload, "s3:AbortMultipartUpload"},
    {Action::kPutBucketOwnershipControls, "s3:PutBucketOwnershipControls"},
    {Action::kGetBucketOwnershipControls, "s3:GetBucketOwnershipControls"},
    {Action::kPutBucketPolicy, "s3:PutBucketPolicy"},
    {Action::kDeleteBucketPolicy, "s3:DeleteBucketPolicy"},
    {Action::kGetBucketPolicyStatus, "s3:GetBucketPolicyStatus"},
    {Action::kPutBucketPublicAccessBlock, "s3:PutBucketPublicAccessBlock"},
    {Action::kGetBucketPublicAccessBlock, "s3:GetBucketPublicAccessBlock"},
}};
static_assert(kActionNames.back().first == Action::kGetBucketPublicAccessBlock);

using P = Permission;
constexpr ActionRule Service() { return ActionRule{Scope::kService, std::nullopt}; }
constexpr ActionRule Bucket(std::optional<P> p = std::nullopt) { return ActionRule{Scope::kBucket, p}; }
constexpr ActionRule Object(std::optional<P> p = std::nullopt) { return ActionRule{Scope::kObject, p}; }

// Indexed by Action, like kActionNames.
constexpr std::array<ActionRule, 45> kRules{{
    Service(),                // kListAllMyBuckets
    Service(),                // kCreateBucket
    Bucket(),                 // kDeleteBucket
    Bucket(P::kRead),         // kListBucket
    Bucket(P::kRead),         // kListBucketVersions
    Bucket(P::kRead),         // kListBucketMultipartUploads
    Bucket(),                 // kGetBucketLocation
    Bucket(P::kReadAcp),      // kGetBucketAcl
    Bucket(P::kWriteAcp),     // kPutBucketAcl
    Bucket(),                 // kGetBucketVersioning
    Bucket(),                 // kPutBucketVersioning
    Bucket(),                 // kGetBucketPolicy
    Bucket(),                 // kGetBucketCors
    Bucket(),                 // kPutBucketCors
    Bucket(),                 // kGetBucketTagging
    Bucket(),                 // kGetLifecycleConfiguration
    Bucket(),                 // kGetBucketLogging
    Bucket(),                 // kGetBucketRequestPayment
    Bucket(),                 // kGetBucketConfiguration
    Object(P::kRead),         // kGetObject
    Object(P::kRead),         // kGetObjectVersion
    Object(P::kRead),         // kGetObjectAttributes
    Object(P::kRead),         // kGetObjectVersionAttributes
    Bucket(P::kWrite),        // kPutObject
    Bucket(P::kWrite),        // kDeleteObject
    Bucket(P::kWrite),        // kDeleteObjectVersion
    Object(P::kReadAcp),      // kGetObjectAcl
    Object(P::kReadAcp),      // kGetObjectVersionAcl
    Object(P::kWriteAcp),     // kPutObjectAcl
    Object(P::kWriteAcp),     // kPutObjectVersionAcl
    Object(),                 // kGetObjectTagging
    Object(),                 // kGetObjectVersionTagging
    Object(),                 // kPutObjectTagging
    Object(),                 // kPutObjectVersionTagging
    Object(),                 // kDeleteObjectTagging
    Object(),                 // kDeleteObjectVersionTagging
    Bucket(P::kWrite),        // kListMultipartUploadParts
    Bucket(P::kWrite),        // kAbortMultipartUpload
    Bucket(),                 // kPutBucketOwnershipControls
    Bucket(),                 // kGetBucketOwnershipControls
    Bucket(),                 // kPutBucketPolicy
    Bucket(),                 // kDeleteBucketPolicy
    Bucket(),                 // kGetBucketPolicyStatus
    Bucket(),                 // kPutBucketPublicAccessBlock
    Bucket(),                 // kGetBucketPublicAccessBlock
}};
static_assert(kRules.size() == kActionNames.size());

// Rules 2-4 of the header for one resource (a bucket or an object).
// `anonymous_owned`: the resource is an object the anonymous principal wrote.
Decision OnResource(const Request& r, const ActionRule& rule, const std::string& owner,
                    bool anonymous_owned, const std::optional<std::vector<Grant>>& acl,
                    Reason owner_reason, Reason acl_reason, Reason denied) {
  const Principal& p = r.principal;
  const bool is_owner = p.anonymous ? anonymous_owned : !owner.empty() && p.user == owner;
  const Reason deny = p.anonymous ? Reason::kAnonymous : denied;
  if (!rule.permission) return is_owner ? Decision{true, owner_reason} : Decision{false, deny};
  const Permission needed = *rule.permission;
  if (is_owner && (needed == Permission::kReadAcp || needed == Permission::kWriteAcp)) {
    return Decision{true, owner_reason};
  }
  // No stored ACL: the private one, which grants the owner alone.
  if (!acl) return is_owner ? Decision{true, owner_reason} : Decision{false, deny};
  if (Grants(*acl, p.canonical_id, p.anonymous, needed)) {
    return Decision{true, is_owner ? owner_reason : acl_reason};
  }
  return Decision{false, deny};
}

// Bytes outside printable ASCII, spaces and backslashes as \xNN: an object
// key may hold anything, a log line may not be split or forged by it.
std::string Escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f || c == '\\') {
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The calls the bucket owner always keeps (rule P1) and no policy grants
// to anyone else (rule P3).
bool IsPolicyCall(Action action) {
  switch (action) {
    case Action::kGetBucketPolicy:
    case Action::kPutBucketPolicy:
    case Action::kDeleteBucketPolicy:
    case Action::kGetBucketPolicyStatus:
    case Action::kPutBucketPublicAccessBlock:
    case Action::kGetBucketPublicAccessBlock: return true;
    default: return false;
  }
}

// Get/Put/DeleteBucketPolicy: the calls AWS answers 405 when a policy
// grants them to another account (rule P3).
bool IsBucketPolicyCall(Action action) {
  return action == Action::kGetBucketPolicy || action == Action::kPutBucketPolicy ||
         action == Action::kDeleteBucketPolicy;
}

// Rules P1-P3 of the header; nullopt: the policy does not decide.
std::optional<Decision> ByPolicy(const Request& r) {
  const Principal& p = r.principal;
  const bool is_owner = !p.anonymous && !r.bucket_owner.empty() && p.user == r.bucket_owner;
  if (is_owner && IsPolicyCall(r.action)) return std::nullopt;
  PolicyRequest pr;
  pr.anonymous = p.anonymous;
  pr.canonical_id = p.canonical_id;
  pr.user = p.user;
  pr.action = std::string(ActionName(r.action));
  pr.resource = ResourceArn(r.bucket, r.key);
  pr.values = r.policy_values;
  const PolicyVerdict verdict = EvaluatePolicy(*r.bucket_policy, pr);
  std::string statement =
      verdict.sid.empty() ? "#" + std::to_string(verdict.statement) : verdict.sid;
  switch (verdict.kind) {
    case PolicyVerdict::Kind::kNone: return std::nullopt;
    case PolicyVerdict::Kind::kDeny:
      return Decision{false, Reason::kBucketPolicyDeny, std::move(statement)};
    case PolicyVerdict::Kind::kAllow: break;
  }
  if (!is_owner && r.public_access_block.restrict_public_buckets &&
      (r.bucket_policy_public ? *r.bucket_policy_public : IsPublicPolicy(*r.bucket_policy))) {
    return std::nullopt;
  }
  if (!is_owner && IsBucketPolicyCall(r.action)) {
    return Decision{false, Reason::kNotOwnerAccount, std::move(statement)};
  }
  if (!is_owner && IsPolicyCall(r.action)) return std::nullopt;
  return Decision{true, Reason::kBucketPolicyAllow, std::move(statement)};
}

// IgnorePublicAcls (rule P4): the ACL without its public grants.
std::optional<std::vector<Grant>> EffectiveAcl(const Request& r,
                                               const std::optional<std::vector<Grant>>& acl) {
  if (!acl || !r.public_access_block.ignore_public_acls) return acl;
  return WithoutPublicGrants(*acl);
}

}  // namespace

std::string_view ActionName(Action action) {
  const auto index = static_cast<size_t>(action);
  return index < kActionNames.size() ? kActionNames[index].second : "s3:Unknown";
}

Action BucketSubresourceAction(std::string_view sub_resource) {
  static constexpr std::array<std::pair<std::string_view, Action>, 11> kSubs{{
      {"location", Action::kGetBucketLocation},
      {"acl", Action::kGetBucketAcl},
      {"versioning", Action::kGetBucketVersioning},
      {"policy", Action::kGetBucketPolicy},
      {"cors", Action::kGetBucketCors},
      {"tagging", Action::kGetBucketTagging},
      {"lifecycle", Action::kGetLifecycleConfiguration},
      {"logging", Action::kGetBucketLogging},
      {"requestPayment", Action::kGetBucketRequestPayment},
      {"policyStatus", Action::kGetBucketPolicyStatus},
      {"publicAccessBlock", Action::kGetBucketPublicAccessBlock},
  }};
  for (const auto& [name, action] : kSubs) {
    if (name == sub_resource) return action;
  }
  return Action::kGetBucketConfiguration;
}

std::string_view ReasonName(Reason reason) {
  switch (reason) {
    case Reason::kAnonymous: return "anonymous";
    case Reason::kAuthenticated: return "authenticated";
    case Reason::kBucketOwner: return "bucket-owner";
    case Reason::kNotBucketOwner: return "not-bucket-owner";
    case Reason::kObjectOwner: return "object-owner";
    case Reason::kNotObjectOwner: return "not-object-owner";
    case Reason::kBucketAcl: return "bucket-acl";
    case Reason::kObjectAcl: return "object-acl";
    case Reason::kExpectedBucketOwner: return "expected-bucket-owner";
    case Reason::kBucketPolicyAllow: return "bucket-policy-allow";
    case Reason::kBucketPolicyDeny: return "bucket-policy-deny";
    case Reason::kNotOwnerAccount: return "not-owner-account";
  }
  return "unknown";
}

ActionRule RuleOf(Action action) {
  const auto index = static_cast<size_t>(action);
  return index < kRules.size() ? kRules[index] : Bucket();
}

Decision Authorize(const Request& request) {
  const ActionRule rule = RuleOf(request.action);
  if (rule.scope == Scope::kService) {
    if (request.principal.anonymous) return Decision{false, Reason::kAnonymous};
    return Decision{true, Reason::kAuthenticated};
  }
  if (request.expected_bucket_owner &&
      *request.expected_bucket_owner != CanonicalUserId(request.bucket_owner)) {
    return Decision{false, Reason::kExpectedBucketOwner};
  }
  if (request.bucket_policy) {
    if (std::optional<Decision> by_policy = ByPolicy(request)) return *by_policy;
  }
  if (rule.scope == Scope::kBucket) {
    return OnResource(request, rule, request.bucket_owner, false, EffectiveAcl(request, request.bucket_acl),
                      Reason::kBucketOwner, Reason::kBucketAcl, Reason::kNotBucketOwner);
  }
  const std::string& owner = request.object_owner.value_or(request.bucket_owner);
  const bool anonymous_owned = request.object_owner && request.object_owner->empty();
  return OnResource(request, rule, owner, anonymous_owned, EffectiveAcl(request, request.object_acl),
                    Reason::kObjectOwner, Reason::kObjectAcl, Reason::kNotObjectOwner);
}

std::string DecisionLogLine(const Request& request, const Decision& decision) {
  std::string line = "s3.authz principal=";
  line += request.principal.anonymous ? std::string("anonymous") : request.principal.user;
  line += " action=";
  line += ActionName(request.action);
  line += " bucket=" + (request.bucket.empty() ? std::string("-") : request.bucket);
  line += " key=" + (request.key.empty() ? std::string("-") : Escaped(request.key));
  line += decision.allowed ? " decision=allow reason=" : " decision=deny reason=";
  line += ReasonName(decision.reason);
  if (!decision.statement.empty()) line += " statement=" + Escaped(decision.statement);
  return line;
}

}  // namespace tessera::s3::authz
