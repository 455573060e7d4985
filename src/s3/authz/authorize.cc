#include "s3/authz/authorize.h"

#include <array>
#include <utility>

namespace tessera::s3::authz {
namespace {

// Indexed by Action (checked by the unit test: every entry, in order).
constexpr std::array<std::pair<Action, std::string_view>, 37> kActionNames{{
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
}};
static_assert(kActionNames.back().first == Action::kAbortMultipartUpload);

bool IsServiceAction(Action action) {
  return action == Action::kListAllMyBuckets || action == Action::kCreateBucket;
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

}  // namespace

std::string_view ActionName(Action action) {
  const auto index = static_cast<size_t>(action);
  return index < kActionNames.size() ? kActionNames[index].second : "s3:Unknown";
}

Action BucketSubresourceAction(std::string_view sub_resource) {
  static constexpr std::array<std::pair<std::string_view, Action>, 9> kSubs{{
      {"location", Action::kGetBucketLocation},
      {"acl", Action::kGetBucketAcl},
      {"versioning", Action::kGetBucketVersioning},
      {"policy", Action::kGetBucketPolicy},
      {"cors", Action::kGetBucketCors},
      {"tagging", Action::kGetBucketTagging},
      {"lifecycle", Action::kGetLifecycleConfiguration},
      {"logging", Action::kGetBucketLogging},
      {"requestPayment", Action::kGetBucketRequestPayment},
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
  }
  return "unknown";
}

Decision Authorize(const Request& request) {
  if (request.principal.anonymous) return Decision{false, Reason::kAnonymous};
  if (IsServiceAction(request.action)) return Decision{true, Reason::kAuthenticated};
  if (!request.bucket_owner.empty() && request.principal.user == request.bucket_owner) {
    return Decision{true, Reason::kBucketOwner};
  }
  return Decision{false, Reason::kNotBucketOwner};
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
  return line;
}

}  // namespace tessera::s3::authz
