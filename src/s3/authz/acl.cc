#include "s3/authz/acl.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tessera::s3::authz {
namespace {

constexpr std::array<std::pair<Permission, std::string_view>, 5> kPermissionNames{{
    {Permission::kRead, "READ"},
    {Permission::kWrite, "WRITE"},
    {Permission::kReadAcp, "READ_ACP"},
    {Permission::kWriteAcp, "WRITE_ACP"},
    {Permission::kFullControl, "FULL_CONTROL"},
}};

Grant UserGrant(const std::string& id, Permission p) {
  return Grant{Grant::Kind::kCanonicalUser, id, p};
}
Grant GroupGrant(std::string_view uri, Permission p) {
  return Grant{Grant::Kind::kGroup, std::string(uri), p};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view PermissionName(Permission permission) {
  return kPermissionNames[static_cast<size_t>(permission)].second;
}

std::optional<Permission> ParsePermission(std::string_view name) {
  for (const auto& [p, n] : kPermissionNames) {
    if (n == name) return p;
  }
  return std::nullopt;
}

std::optional<std::vector<Grant>> CannedAcl(std::string_view name, const std::string& owner_id,
                                            const std::string& bucket_owner_id) {
  std::vector<Grant> out{UserGrant(owner_id, Permission::kFullControl)};
  if (name == "private") return out;
  if (name == "public-read") {
    out.push_back(GroupGrant(kAllUsersUri, Permission::kRead));
  } else if (name == "public-read-write") {
    out.push_back(GroupGrant(kAllUsersUri, Permission::kRead));
    out.push_back(GroupGrant(kAllUsersUri, Permission::kWrite));
  } else if (name == "authenticated-read") {
    out.push_back(GroupGrant(kAuthenticatedUsersUri, Permission::kRead));
  } else if (name == "bucket-owner-read") {
    if (bucket_owner_id != owner_id) out.push_back(UserGrant(bucket_owner_id, Permission::kRead));
  } else if (name == "bucket-owner-full-control") {
    if (bucket_owner_id != owner_id) {
      out.push_back(UserGrant(bucket_owner_id, Permission::kFullControl));
    }
  } else if (name == "log-delivery-write") {
    out.push_back(GroupGrant(kLogDeliveryUri, Permission::kWrite));
    out.push_back(GroupGrant(kLogDeliveryUri, Permission::kReadAcp));
  } else {
    return std::nullopt;
  }
  return out;
}

S3Status CheckGroupUri(std::string_view uri) {
  if (uri == kAllUsersUri || uri == kAuthenticatedUsersUri || uri == kLogDeliveryUri) {
    return S3Status::Ok();
  }
  return InvalidArgumentError("Invalid group uri", "Group/URI", std::string(uri));
}

S3Result<std::vector<RequestedGrant>> ParseGrantHeader(std::string_view header,
                                                       std::string_view value,
                                                       Permission permission) {
  auto bad = [&] { return InvalidArgumentError("", std::string(header), std::string(value)); };
  std::vector<RequestedGrant> out;
  std::string_view rest = value;
  while (true) {
    // One `type="value"` pair; values never hold commas (ids, emails, URIs).
    const size_t comma = rest.find(',');
    const std::string_view pair = Trim(rest.substr(0, comma));
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return bad();
    const std::string_view type = Trim(pair.substr(0, eq));
    std::string_view v = Trim(pair.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    if (v.empty() || v.find('"') != std::string_view::npos) return bad();
    RequestedGrant g;
    g.permission = permission;
    g.value = std::string(v);
    if (type == "id") {
      g.kind = RequestedGrant::Kind::kCanonicalUser;
    } else if (type == "emailAddress") {
      g.kind = RequestedGrant::Kind::kEmail;
    } else if (type == "uri") {
      g.kind = RequestedGrant::Kind::kGroup;
    } else {
      return bad();
    }
    out.push_back(std::move(g));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

bool Grants(const std::vector<Grant>& grants, const std::string& canonical_id, bool anonymous,
            Permission needed) {
  return std::any_of(grants.begin(), grants.end(), [&](const Grant& g) {
    if (g.permission != needed && g.permission != Permission::kFullControl) return false;
    if (g.kind == Grant::Kind::kGroup) {
      return g.grantee == kAllUsersUri || (!anonymous && g.grantee == kAuthenticatedUsersUri);
    }
    return anonymous ? g.grantee == kAnonymousCanonicalId : g.grantee == canonical_id;
  });
}

bool IsPublic(const std::vector<Grant>& grants) {
  return std::any_of(grants.begin(), grants.end(), [](const Grant& g) {
    return g.kind == Grant::Kind::kGroup &&
           (g.grantee == kAllUsersUri || g.grantee == kAuthenticatedUsersUri);
  });
}

}  // namespace tessera::s3::authz
