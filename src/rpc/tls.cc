#include "rpc/tls.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <charconv>

#include "common/limits.h"

namespace tessera::rpc {
namespace {

namespace ssl = boost::asio::ssl;

// The text of the subject's only `nid` entry; empty when absent or repeated.
std::string OnlySubjectEntry(X509* cert, int nid) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(name, nid, -1);
  if (index < 0 || X509_NAME_get_index_by_NID(name, nid, index) >= 0) return {};
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(ASN1_STRING_length(data)));
}

Result<CertificateIdentity> IdentityOf(X509* cert) {
  CertificateIdentity identity;
  identity.role = OnlySubjectEntry(cert, NID_organizationalUnitName);
  const std::string id = OnlySubjectEntry(cert, NID_commonName);
  const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), identity.peer_id);
  if (identity.role.empty() || identity.role.size() > limits::kRpcRoleBytesMax || id.empty() ||
      error != std::errc() || end != id.data() + id.size() || identity.peer_id == 0) {
    return Status::InvalidArgument("the certificate names no role (OU) and peer id (CN)");
  }
  return identity;
}

// TLS 1.3 only; the peer must present a certificate that verifies against
// `ca_cert_path` alone; this process presents its own.
Status Configure(ssl::context& context, const std::string& ca_cert_path,
                 const std::string& cert_path, const std::string& key_path) {
  SSL_CTX* native = context.native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(native, TLS1_3_VERSION) != 1) {
    return Status::InvalidArgument("rpc tls: this OpenSSL has no TLS 1.3");
  }
  SSL_CTX_set_num_tickets(native, 0);
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  boost::system::error_code error;
  context.load_verify_file(ca_cert_path, error);
  if (error) return Status::InvalidArgument("rpc tls: CA " + ca_cert_path + ": " + error.message());
  context.use_certificate_chain_file(cert_path, error);
  if (error) return Status::InvalidArgument("rpc tls: certificate " + cert_path + ": " + error.message());
  context.use_private_key_file(key_path, ssl::context::pem, error);
  if (error) return Status::InvalidArgument("rpc tls: key " + key_path + ": " + error.message());
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("rpc tls: " + key_path + " does not match " + cert_path);
  }
  X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(native), X509_V_FLAG_X509_STRICT);
  context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const TlsCredentials>> TlsCredentials::Load(const std::string& ca_cert_path,
                                                                   const std::string& cert_path,
                                                                   const std::string& key_path) {
  std::shared_ptr<TlsCredentials> credentials(new TlsCredentials());
  credentials->server_ = std::make_unique<ssl::context>(ssl::context::tls_server);
  credentials->client_ = std::make_unique<ssl::context>(ssl::context::tls_client);
  TESSERA_RETURN_IF_ERROR(Configure(*credentials->server_, ca_cert_path, cert_path, key_path));
  TESSERA_RETURN_IF_ERROR(Configure(*credentials->client_, ca_cert_path, cert_path, key_path));
  X509* own = SSL_CTX_get0_certificate(credentials->server_->native_handle());
  if (own == nullptr) return Status::InvalidArgument("rpc tls: no certificate in " + cert_path);
  Result<CertificateIdentity> self = IdentityOf(own);
  if (!self.ok()) return Status::InvalidArgument("rpc tls: " + cert_path + ": " + self.status().message());
  credentials->self_ = std::move(self).value();
  return std::shared_ptr<const TlsCredentials>(std::move(credentials));
}

Result<CertificateIdentity> PeerIdentityOf(SSL* ssl) {
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) {
    return Status::InvalidArgument("no verified peer certificate");
  }
  return IdentityOf(peer);
}

}  // namespace tessera::rpc
