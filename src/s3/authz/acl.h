// S3 access control lists: the grants of a bucket or an object version,
// the canned ACLs, the x-amz-grant-* headers, and which permission each
// action needs (AWS's "Access control list (ACL) overview", "Canned ACL"
// and "Mapping of ACL permissions and access policy permissions").
//
// A grant names its grantee as S3 stores it: a canonical user id or a
// group URI. Requests may also name users by email address; those are
// RequestedGrant values the front resolves to canonical ids against the
// user registry before anything is stored (UnresolvableGrantByEmailAddress
// when no user has the address).
//
// Pure functions; thread safety: stateless, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "s3/protocol/s3_result.h"

namespace tessera::s3::authz {

enum class Permission : uint8_t { kRead, kWrite, kReadAcp, kWriteAcp, kFullControl };
// "READ", "WRITE", "READ_ACP", "WRITE_ACP", "FULL_CONTROL".
std::string_view PermissionName(Permission permission);
std::optional<Permission> ParsePermission(std::string_view name);

// The predefined groups S3 knows (anything else is "Invalid group uri").
inline constexpr std::string_view kAllUsersUri = "http://acs.amazonaws.com/groups/global/AllUsers";
inline constexpr std::string_view kAuthenticatedUsersUri =
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
inline constexpr std::string_view kLogDeliveryUri = "http://acs.amazonaws.com/groups/s3/LogDelivery";

// The canonical id S3 gives the anonymous principal: the owner of what it
// writes (public-read-write buckets), the id its requests are logged under.
inline constexpr std::string_view kAnonymousCanonicalId = "65a011a29cdf8ec533ec3d1ccaae921c";
inline constexpr std::string_view kAnonymousDisplayName = "anonymous";

// A stored grant: to a canonical user id, or to a group URI.
struct Grant {
  enum class Kind : uint8_t { kCanonicalUser, kGroup };
  Kind kind = Kind::kCanonicalUser;
  std::string grantee;  // the 64-hex canonical id, or the group URI
  Permission permission = Permission::kRead;
  bool operator==(const Grant&) const = default;
};

// A grant as a request names it (x-amz-grant-* or AccessControlPolicy):
// id, emailAddress or uri, before resolution.
struct RequestedGrant {
  enum class Kind : uint8_t { kCanonicalUser, kEmail, kGroup };
  Kind kind = Kind::kCanonicalUser;
  std::string value;
  Permission permission = Permission::kRead;
};

// The grants of canned ACL `name` for a resource owned by `owner_id`
// (for an object, `bucket_owner_id` is its bucket's owner; for a bucket
// pass the owner twice). private, public-read, public-read-write,
// authenticated-read, bucket-owner-read, bucket-owner-full-control,
// log-delivery-write. nullopt: not a canned ACL S3 knows (aws-exec-read,
// which names EC2's account, included).
std::optional<std::vector<Grant>> CannedAcl(std::string_view name, const std::string& owner_id,
                                            const std::string& bucket_owner_id);

// The x-amz-grant-* headers and the permission each grants.
struct GrantHeader {
  std::string_view name;
  Permission permission;
};
inline constexpr GrantHeader kGrantHeaders[] = {
    {"x-amz-grant-read", Permission::kRead},
    {"x-amz-grant-write", Permission::kWrite},
    {"x-amz-grant-read-acp", Permission::kReadAcp},
    {"x-amz-grant-write-acp", Permission::kWriteAcp},
    {"x-amz-grant-full-control", Permission::kFullControl},
};
// One x-amz-grant-* value: comma-separated `type="value"` pairs, type one
// of id, emailAddress, uri (quotes optional). InvalidArgument naming the
// header otherwise.
S3Result<std::vector<RequestedGrant>> ParseGrantHeader(std::string_view header,
                                                       std::string_view value,
                                                       Permission permission);
// A group URI S3 knows; InvalidArgument "Invalid group uri" otherwise.
S3Status CheckGroupUri(std::string_view uri);

// Who a grant may match: the principal's canonical id (anonymous:
// kAnonymousCanonicalId, whatever `canonical_id` says). True when `grants`
// give `needed` (or FULL_CONTROL) to this principal, directly or through
// AllUsers (anyone) / AuthenticatedUsers (any signed request).
bool Grants(const std::vector<Grant>& grants, const std::string& canonical_id, bool anonymous,
            Permission needed);

// True when the grants give anything to AllUsers or AuthenticatedUsers
// (a "public" ACL, as the public access block defines it).
bool IsPublic(const std::vector<Grant>& grants);

}  // namespace tessera::s3::authz
