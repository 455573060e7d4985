#include "rpc/types.h"

#include "common/limits.h"
#include "rpc/auth.h"

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
  return Status::Ok();
}

}  // namespace tessera::rpc
