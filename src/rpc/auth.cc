#include "rpc/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/big_endian.h"
#include "common/check.h"

namespace tessera::rpc {
namespace {

std::string Mac(std::string_view label, std::string_view secret, std::string_view server_nonce,
                std::string_view client_nonce, uint32_t peer_id, std::string_view role) {
  std::string message;
  message.reserve(label.size() + server_nonce.size() + client_nonce.size() + 4 + role.size());
  message += label;
  message += server_nonce;
  message += client_nonce;
  AppendBigEndian32(&message, peer_id);
  message += role;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_bytes = 0;
  const unsigned char* ok =
      HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_bytes);
  TESSERA_CHECK(ok != nullptr && mac_bytes == kMacBytes);
  return std::string(reinterpret_cast<const char*>(mac), mac_bytes);
}

}  // namespace

std::string RandomNonce() {
  std::string nonce(kNonceBytes, '\0');
  TESSERA_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()),
                           static_cast<int>(nonce.size())) == 1);
  return nonce;
}

std::string HelloMac(std::string_view secret, std::string_view server_nonce,
                     std::string_view client_nonce, uint32_t peer_id, std::string_view role) {
  return Mac("tessera-rpc-hello/1", secret, server_nonce, client_nonce, peer_id, role);
}

std::string WelcomeMac(std::string_view secret, std::string_view server_nonce,
                       std::string_view client_nonce, uint32_t peer_id, std::string_view role) {
  return Mac("tessera-rpc-welcome/1", secret, server_nonce, client_nonce, peer_id, role);
}

bool MacEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tessera::rpc
