#include "cluster/cluster_pki.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "cluster/cluster_client.h"
#include "cluster/rpc_access.h"
#include "pki/certificates.h"
#include "rpc/tls.h"

namespace tessera::cluster {
namespace {

std::string PkiDir(const std::string& dir) { return dir + "/pki"; }

pki::KeyPairFiles PkiPair(const std::string& dir, const std::string& stem) {
  return {PkiDir(dir) + "/" + stem + ".pem", PkiDir(dir) + "/" + stem + ".key"};
}

// Creates `path` with `mode` unless it exists; narrows an existing one.
Status EnsurePrivateDirectory(const std::string& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return Status::IOError("cannot create " + path + ": " + std::strerror(errno));
  }
  if (::chmod(path.c_str(), mode) != 0) {
    return Status::IOError("cannot chmod " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

pki::CertificateSpec ProcessSpec(std::string_view role, uint32_t peer_id, const std::string& host) {
  pki::CertificateSpec spec;
  spec.organizational_unit = std::string(role);
  spec.common_name = std::to_string(peer_id);
  if (!host.empty()) spec.ip_addresses = {host};
  spec.server_auth = true;
  spec.client_auth = true;
  return spec;
}

}  // namespace

Status EnsureClusterPki(const std::string& dir, const ProcessTable& table) {
  TESSERA_RETURN_IF_ERROR(EnsurePrivateDirectory(PkiDir(dir), 0700));
  const pki::KeyPairFiles ca = PkiPair(dir, "ca");
  TESSERA_RETURN_IF_ERROR(pki::EnsureAuthority(ca, "Tessera cluster CA", kClusterCertificateDays));
  for (const ProcessEntry& e : table.all()) {
    TESSERA_RETURN_IF_ERROR(pki::EnsureIssued(ca, PkiPair(dir, e.name),
                                              ProcessSpec(ProcessRoleName(e.role), e.id, e.host),
                                              kClusterCertificateDays));
  }
  return pki::EnsureIssued(ca, PkiPair(dir, std::string(kCliRole)),
                           ProcessSpec(kCliRole, kCliPeerId, ""), kClusterCertificateDays);
}

std::string HttpsCaPath(const std::string& dir) { return dir + "/tls/ca.pem"; }
std::string HttpsCertPath(const std::string& dir) { return dir + "/tls/cert.pem"; }
std::string HttpsKeyPath(const std::string& dir) { return dir + "/tls/key.pem"; }

Status EnsureHttpsCertificate(const std::string& dir, const std::vector<std::string>& dns_names,
                              const std::vector<std::string>& ip_addresses) {
  TESSERA_RETURN_IF_ERROR(EnsurePrivateDirectory(dir + "/tls", 0755));
  const pki::KeyPairFiles ca{HttpsCaPath(dir), dir + "/tls/ca.key"};
  TESSERA_RETURN_IF_ERROR(pki::EnsureAuthority(ca, "Tessera HTTPS CA", kClusterCertificateDays));
  pki::CertificateSpec spec;
  spec.common_name = dns_names.empty() ? "tessera" : dns_names.front();
  spec.dns_names = dns_names;
  spec.ip_addresses = ip_addresses;
  return pki::EnsureIssued(ca, {HttpsCertPath(dir), HttpsKeyPath(dir)}, spec, kClusterCertificateDays);
}

Result<rpc::Identity> LoadIdentity(const std::string& dir, const std::string& name,
                                   uint32_t peer_id, std::string role) {
  auto secret = ReadClusterSecret(dir);
  if (!secret.ok()) return secret.status();
  const pki::KeyPairFiles own = PkiPair(dir, name);
  struct stat st;
  if (::stat(own.cert_path.c_str(), &st) != 0) {
    return Status::NotFound("no certificate " + own.cert_path +
                            " (`tessera cluster up` issues one per process)");
  }
  auto tls = rpc::TlsCredentials::Load(PkiPair(dir, "ca").cert_path, own.cert_path, own.key_path);
  if (!tls.ok()) return tls.status();
  rpc::Identity identity{peer_id, std::move(role), std::move(secret).value(), std::move(tls).value()};
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(identity));
  return identity;
}

}  // namespace tessera::cluster
