// ClusterClient: synchronous admin and metadata calls from the command line
// (or a test) to the processes of a cluster, over the internal RPC transport
// with the operator's identity (cluster_pki.h). Owns its io_context and one
// io thread.
//
// Thread safety: Call may be used from several threads.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "cluster/process_table.h"
#include "common/result.h"
#include "rpc/types.h"

namespace tessera::cluster {

// Peer id the command line uses on the transport (not a layout process).
inline constexpr uint32_t kCliPeerId = 999;

class ClusterClient {
 public:
  // `identity`: whom to call as (cluster::LoadIdentity), normally the
  // operator's (role cli, kCliPeerId).
  static Result<std::unique_ptr<ClusterClient>> Create(const ProcessTable& table,
                                                       rpc::Identity identity);
  ~ClusterClient();

  // Calls `method` on process `id` and waits for the answer (payload).
  Result<std::string> Call(uint32_t id, const std::string& method, const std::string& payload,
                           std::chrono::milliseconds timeout);

  // Makes process `id` (a storage node added to the cluster since the
  // table was read) callable at host:port. InvalidArgument as
  // rpc::ChannelPool::SetPeerAddress.
  Status AddPeer(uint32_t id, const std::string& host, uint16_t port);

  // Tries each process of `role` in turn until one answers OK; returns the
  // first answer or the last error.
  Result<std::string> CallAny(ProcessRole role, const std::string& method,
                              const std::string& payload, std::chrono::milliseconds timeout);

 private:
  struct State;
  explicit ClusterClient(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Reads DIR/secret; NotFound with a hint when the cluster was never set up.
Result<std::string> ReadClusterSecret(const std::string& dir);
// Creates DIR/secret with a fresh random secret unless it exists (mode 0600).
Result<std::string> EnsureClusterSecret(const std::string& dir);

}  // namespace tessera::cluster
