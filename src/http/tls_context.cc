#include "http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace tessera::http {
namespace {

namespace ssl = boost::asio::ssl;

constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

Result<std::unique_ptr<ssl::context>> MakeServerTlsContext(const TlsFiles& files) {
  std::unique_ptr<ssl::context> context;
  try {
    context = std::make_unique<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& e) {
    return Status::IOError(std::string("tls: cannot create a context: ") + e.what());
  }
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  if (!ec && SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    ec = boost::asio::error::invalid_argument;
  }
  if (!ec && SSL_CTX_set_cipher_list(context->native_handle(), kTls12Ciphers) != 1) {
    ec = boost::asio::error::invalid_argument;
  }
  if (ec) return Status::IOError("tls: options: " + ec.message());
  context->use_certificate_chain_file(files.cert_pem_path, ec);
  if (ec) return Status::IOError("tls: certificate " + files.cert_pem_path + ": " + ec.message());
  context->use_private_key_file(files.key_pem_path, ssl::context::pem, ec);
  if (ec) return Status::IOError("tls: key " + files.key_pem_path + ": " + ec.message());
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    ERR_clear_error();
    return Status::IOError("tls: the key " + files.key_pem_path + " does not match the certificate");
  }
  return context;
}

}  // namespace tessera::http
