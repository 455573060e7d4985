// Helpers every node rpc handler uses: parse the request payload, find the
// addressed replication group; each answers the request itself when it
// fails (InvalidArgument for an unparseable payload, NotFound for a group
// this node does not host).
#pragma once

#include <memory>
#include <string>

#include "node/replication_host.h"
#include "rpc/server.h"
#include "tessera/rpc.pb.h"

namespace tessera::node {

template <class Message>
bool ParsePayload(const pb::Envelope& request, const rpc::Responder& responder, Message* out) {
  if (out->ParseFromString(request.payload())) return true;
  responder.Fail(Status::InvalidArgument("payload of " + request.method() + " does not parse"));
  return false;
}

inline std::shared_ptr<GroupHost> FindGroupOrFail(const ReplicationHost& replication,
                                                  uint64_t group_id,
                                                  const rpc::Responder& responder) {
  std::shared_ptr<GroupHost> host = replication.Find(group_id);
  if (!host) responder.Fail(Status::NotFound("group " + std::to_string(group_id) + " not hosted here"));
  return host;
}

// An rpc::Handler that serves a request with `serve` against this node's
// groups (the peer's identity is not needed: the transport checked it).
using ReplicationRequestHandler = void (*)(ReplicationHost*, const pb::Envelope&, rpc::Responder);
inline rpc::Handler ServeWith(ReplicationHost* replication, ReplicationRequestHandler serve) {
  return [replication, serve](const rpc::PeerInfo&, const pb::Envelope& request,
                              rpc::Responder responder) {
    serve(replication, request, std::move(responder));
  };
}

}  // namespace tessera::node
