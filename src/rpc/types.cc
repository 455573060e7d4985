#include "rpc/types.h"

#include "common/limits.h"
#include "rpc/auth.h"
#include "rpc/tls.h"

namespace tessera::rpc {

Status ValidateIdentity(const Identity& identity) {
  if (identity.peer_id == 0) return Status::InvalidArgument("rpc identity: peer_id must not be 0");
  if (identity.role.empty() || identity.role.size() > limits::kRpcRoleBytesMax) {
    return Status::InvalidArgument("rpc identity: role must have 1 to " +
                                   std::to_string(limits::kRpcRoleBytesMax) + " bytes");
  }
  if (identity.cluster_secret.size() < kClusterSecretBytesMin) {
    return Status::InvalidArgument("rpc identity: cluster secret must have at least " +
                                   std::to_string(kClusterSecretBytesMin) + " bytes");
  }
  if (identity.tls != nullptr &&
      !(identity.tls->self() == CertificateIdentity{identity.role, identity.peer_id})) {
    return Status::InvalidArgument("rpc identity: the certificate names " + identity.tls->self().role +
                                   " " + std::to_string(identity.tls->self().peer_id) + ", not " +
                                   identity.role + " " + std::to_string(identity.peer_id));
  }
  return Status::Ok();
}

}  // namespace tessera::rpc
