#include "s3/auth/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/check.h"

namespace tessera::s3::auth {
namespace {

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  TESSERA_CHECK(EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) == 1);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const unsigned char* result =
      HMAC(md, key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  TESSERA_CHECK(result != nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

std::string Sha256(std::string_view data) { return Digest(EVP_sha256(), data); }

std::string HmacSha256(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha256(), key, data);
}

std::string HmacSha1(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha1(), key, data);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tessera::s3::auth
