// Types shared by the RPC server and channels.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/shared_bytes.h"
#include "common/status.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tessera::metrics {
class Registry;
}  // namespace tessera::metrics

namespace tessera::rpc {

class FaultInjector;
class TlsCredentials;

// Who this process is, the secret every member of the cluster shares, and
// its TLS credentials (rpc/tls.h). With credentials, every connection is
// TLS 1.3 with certificates both ways, and the peer's role and id are those
// its certificate names; without (tests of the transport alone), the
// connection is plain TCP and the HMAC handshake alone authenticates it.
// Both ends of a connection must agree: a TLS end refuses a plain one.
struct Identity {
  uint32_t peer_id = 0;        // not 0; unique in the cluster
  std::string role;            // "node", "meta", "router"...; at most limits::kRpcRoleBytesMax
  std::string cluster_secret;  // at least kClusterSecretBytesMin bytes; never logged or sent
  std::shared_ptr<const TlsCredentials> tls = nullptr;  // when set, names this role and peer_id
};

// The authenticated sender of a request, as the server saw its Hello (and,
// over TLS, its certificate).
struct PeerInfo {
  uint32_t peer_id = 0;
  std::string role;
  std::string address;  // "ip:port" of the remote socket
};

// The process-wide pieces every server and channel uses. All three must
// outlive every server and channel built on them, and the io_context must
// also outlive the registry's and injector's users: destroy servers and
// channels, then stop and join the io threads, then destroy the
// io_context, then the registry and injector.
struct RpcContext {
  boost::asio::io_context& io;
  metrics::Registry& metrics;
  FaultInjector& faults;
};

// InvalidArgument unless `identity` is complete and within limits.
Status ValidateIdentity(const Identity& identity);

// A payload whose large part is shared, not copied: the envelope's payload
// is head || tail. tail_crc32c must equal Crc32c(tail): the caller
// computed it already (trusted here; the receiver verifies the frame).
struct SplitPayload {
  std::string head;
  SharedBytes tail;
  uint32_t tail_crc32c = 0;
};

}  // namespace tessera::rpc
