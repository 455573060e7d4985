#include "rpc/access_policy.h"

namespace tessera::rpc {

AccessPolicy& AccessPolicy::Allow(std::string_view method,
                                  std::initializer_list<std::string_view> roles) {
  auto& allowed = roles_by_method_[std::string(method)];
  for (std::string_view role : roles) allowed.emplace(role);
  return *this;
}

bool AccessPolicy::Covers(std::string_view method) const {
  return roles_by_method_.count(std::string(method)) > 0;
}

bool AccessPolicy::Allows(std::string_view role, std::string_view method) const {
  const auto it = roles_by_method_.find(std::string(method));
  return it != roles_by_method_.end() && it->second.count(role) > 0;
}

}  // namespace tessera::rpc
