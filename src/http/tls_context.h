// The TLS context of Tessera's public listeners (S3 HTTPS, KV HTTPS, KV
// native over TLS): TLS 1.2 and 1.3 only, over TLS 1.2 forward-secret AEAD
// suites only (Mozilla's "intermediate" list: no CBC, no SHA-1 MAC, no
// static RSA key exchange; TLS 1.3's suites are all AEAD), the given
// certificate chain and key (docs/security.md).
//
// Thread safety: the returned context is configured; share it among the
// listener's connections.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "common/result.h"

namespace tessera::http {

struct TlsFiles {
  std::string cert_pem_path;  // certificate (chain), PEM
  std::string key_pem_path;   // private key, PEM, unencrypted
};

// IOError (naming the file and reason) when a file does not load or the
// key does not match the certificate.
Result<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsFiles& files);

}  // namespace tessera::http
