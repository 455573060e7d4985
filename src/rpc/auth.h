// Handshake cryptography (docs/formats/rpc.md, "Handshake"): fresh nonces
// and the HMAC-SHA256 proofs that each side knows the cluster secret.
//
// Thread safety: pure functions (RAND_bytes is thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::rpc {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kMacBytes = 32;
// Shorter cluster secrets are refused when a server or channel is created.
inline constexpr size_t kClusterSecretBytesMin = 16;

// kNonceBytes from the OpenSSL CSPRNG.
std::string RandomNonce();

// The Hello and Welcome MACs: HMAC-SHA256(secret, label || server_nonce ||
// client_nonce || u32be(peer_id) || role), labels differing per message.
std::string HelloMac(std::string_view secret, std::string_view server_nonce,
                     std::string_view client_nonce, uint32_t peer_id, std::string_view role);
std::string WelcomeMac(std::string_view secret, std::string_view server_nonce,
                       std::string_view client_nonce, uint32_t peer_id, std::string_view role);

// Constant-time equality (CRYPTO_memcmp); false when sizes differ.
bool MacEquals(std::string_view a, std::string_view b);

}  // namespace tessera::rpc
