// The cluster directory's certificates (docs/security.md):
//
//   DIR/pki/ca.pem, ca.key      the cluster CA (key 0600, directory 0700)
//   DIR/pki/NAME.pem, NAME.key  one per process of the layout: OU = its
//                               role, CN = its peer id, IP = its host
//   DIR/pki/cli.pem, cli.key    the operator's (`tessera` commands)
//   DIR/tls/ca.pem, ca.key      the CA that S3 and KV clients trust
//   DIR/tls/cert.pem, key.pem   the routers' HTTPS certificate (issued by it)
//
// `tessera cluster up` ensures them (keeping what is still good); every
// process loads its own with LoadIdentity.
//
// Thread safety: as pki/certificates.h (one writer of the directory).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/process_table.h"
#include "common/result.h"
#include "rpc/types.h"

namespace tessera::cluster {

// Certificates are issued for this long (and renewed by `cluster up` when
// within a day of expiry).
inline constexpr int kClusterCertificateDays = 3650;

// Ensures the cluster CA and the certificates of every process of `table`
// and of the operator.
Status EnsureClusterPki(const std::string& dir, const ProcessTable& table);

// Ensures the HTTPS CA and the routers' certificate for these names.
Status EnsureHttpsCertificate(const std::string& dir, const std::vector<std::string>& dns_names,
                              const std::vector<std::string>& ip_addresses);

// DIR/tls/ca.pem, DIR/tls/cert.pem, DIR/tls/key.pem.
std::string HttpsCaPath(const std::string& dir);
std::string HttpsCertPath(const std::string& dir);
std::string HttpsKeyPath(const std::string& dir);

// The identity of process `name` (or "cli" for the operator): the cluster
// secret and the TLS credentials of DIR/pki/NAME.*, which must name
// `role` and `peer_id`. NotFound (with a hint) when the cluster was never
// set up, InvalidArgument when the files do not fit.
Result<rpc::Identity> LoadIdentity(const std::string& dir, const std::string& name,
                                   uint32_t peer_id, std::string role);

}  // namespace tessera::cluster
