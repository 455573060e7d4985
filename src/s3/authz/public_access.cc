#include "s3/authz/public_access.h"

#include <algorithm>

namespace tessera::s3::authz {
namespace {

bool IsPublicGrant(const Grant& g) {
  return g.kind == Grant::Kind::kGroup &&
         (g.grantee == kAllUsersUri || g.grantee == kAuthenticatedUsersUri);
}

}  // namespace

bool IsPublicCannedAcl(std::string_view name) {
  return name == "public-read" || name == "public-read-write" || name == "authenticated-read";
}

bool IsPublicAcl(const std::vector<Grant>& grants) {
  return std::any_of(grants.begin(), grants.end(), IsPublicGrant);
}

std::vector<Grant> WithoutPublicGrants(const std::vector<Grant>& grants) {
  std::vector<Grant> out;
  std::copy_if(grants.begin(), grants.end(), std::back_inserter(out),
               [](const Grant& g) { return !IsPublicGrant(g); });
  return out;
}

}  // namespace tessera::s3::authz
