// TLS for the cluster's own RPC (docs/formats/rpc.md, "TLS"): every
// connection between processes is TLS 1.3, both ends present a certificate
// issued by the cluster CA (pki/certificates.h), and each end reads the
// other's role and peer id from that certificate.
//
// A process certificate's subject is O=Tessera, OU=<role>, CN=<peer id in
// decimal>; its extended key usages allow it as client and server.
//
// Contract:
//  1. The contexts accept TLS 1.3 only, verify the peer's certificate
//     against the cluster CA and nothing else (no system trust store), with
//     strict X.509 checks, and refuse a peer without one; they issue no
//     session tickets (connections are long-lived).
//  2. PeerIdentityOf answers only for a verified peer certificate.
//
// Thread safety: TlsCredentials is immutable after Load; its contexts may
// be used by streams on any thread (OpenSSL contexts are thread-safe once
// configured).
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace tessera::rpc {

// Who a certificate names.
struct CertificateIdentity {
  std::string role;
  uint32_t peer_id = 0;
  bool operator==(const CertificateIdentity&) const = default;
};

class TlsCredentials {
 public:
  // Loads the CA certificate and this process's certificate and key (PEM).
  // InvalidArgument (with the path and reason) when a file is missing or
  // unreadable, the key does not match, or the certificate names no
  // role/peer id.
  static Result<std::shared_ptr<const TlsCredentials>> Load(const std::string& ca_cert_path,
                                                            const std::string& cert_path,
                                                            const std::string& key_path);

  // What this process's own certificate says.
  const CertificateIdentity& self() const { return self_; }
  boost::asio::ssl::context& server_context() const { return *server_; }
  boost::asio::ssl::context& client_context() const { return *client_; }

 private:
  TlsCredentials() = default;

  CertificateIdentity self_;
  std::unique_ptr<boost::asio::ssl::context> server_;
  std::unique_ptr<boost::asio::ssl::context> client_;
};

// The role and peer id in the certificate of `ssl`'s peer, after a
// completed handshake whose verification passed; InvalidArgument when
// there is none or it names no role/peer id.
Result<CertificateIdentity> PeerIdentityOf(SSL* ssl);

}  // namespace tessera::rpc
