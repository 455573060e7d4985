#include "client/kv_api_wire.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/check.h"
#include "common/crc32c.h"
#include "rpc/frame.h"

namespace tessera::kvapi {
namespace {

void PutBigEndian32(char* out, uint32_t v) {
  out[0] = static_cast<char>(v >> 24);
  out[1] = static_cast<char>(v >> 16);
  out[2] = static_cast<char>(v >> 8);
  out[3] = static_cast<char>(v);
}

std::string Proof(std::string_view label, std::string_view secret, std::string_view server_nonce,
                  std::string_view client_nonce, std::string_view access_key) {
  std::string message;
  message.reserve(label.size() + server_nonce.size() + client_nonce.size() + access_key.size());
  message += label;
  message += server_nonce;
  message += client_nonce;
  message += access_key;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_bytes = 0;
  const unsigned char* ok =
      HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_bytes);
  TESSERA_CHECK(ok != nullptr && mac_bytes == kProofBytes);
  return std::string(reinterpret_cast<const char*>(mac), mac_bytes);
}

}  // namespace

Result<std::string> EncodeFrame(const google::protobuf::MessageLite& message, size_t frame_bytes_max) {
  TESSERA_CHECK(frame_bytes_max <= UINT32_MAX);
  const size_t payload_bytes = message.ByteSizeLong();
  if (payload_bytes > frame_bytes_max) {
    return Status::InvalidArgument("frame of " + std::to_string(payload_bytes) +
                                   " bytes exceeds the maximum of " + std::to_string(frame_bytes_max));
  }
  std::string frame(rpc::kFrameHeaderBytes + payload_bytes, '\0');
  auto* payload = reinterpret_cast<uint8_t*>(frame.data() + rpc::kFrameHeaderBytes);
  message.SerializeWithCachedSizesToArray(payload);
  const uint32_t crc = Crc32c(std::string_view(frame.data() + rpc::kFrameHeaderBytes, payload_bytes));
  PutBigEndian32(frame.data(), static_cast<uint32_t>(payload_bytes));
  PutBigEndian32(frame.data() + 4, crc);
  return frame;
}

std::string RandomNonce() {
  std::string nonce(kNonceBytes, '\0');
  TESSERA_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()),
                           static_cast<int>(nonce.size())) == 1);
  return nonce;
}

std::string HelloProof(std::string_view secret, std::string_view server_nonce,
                       std::string_view client_nonce, std::string_view access_key) {
  return Proof("tessera-kv-hello/1", secret, server_nonce, client_nonce, access_key);
}

std::string WelcomeProof(std::string_view secret, std::string_view server_nonce,
                         std::string_view client_nonce, std::string_view access_key) {
  return Proof("tessera-kv-welcome/1", secret, server_nonce, client_nonce, access_key);
}

bool ProofEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tessera::kvapi
