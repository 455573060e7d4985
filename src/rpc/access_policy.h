// AccessPolicy: which roles may call which methods of an RpcServer
// (server.h, contract 7). Roles are those of rpc::Identity; over TLS they
// come from the caller's certificate, so a process cannot claim another
// role than the one the cluster CA gave it.
//
// Default deny: a method without a rule is callable by no one, and
// RpcServer refuses to register a handler for it (so a new method cannot
// go live without a rule).
//
// Thread safety: build it, then share it immutable (const) among servers.
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tessera::rpc {

class AccessPolicy {
 public:
  // Lets every role in `roles` call `method` (adds to earlier rules).
  AccessPolicy& Allow(std::string_view method, std::initializer_list<std::string_view> roles);

  // Whether `method` has a rule at all.
  bool Covers(std::string_view method) const;
  // Whether `role` may call `method`.
  bool Allows(std::string_view role, std::string_view method) const;

 private:
  std::unordered_map<std::string, std::set<std::string, std::less<>>> roles_by_method_;
};

}  // namespace tessera::rpc
