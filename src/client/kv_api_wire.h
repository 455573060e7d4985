// The native KV API's wire pieces shared by the client (src/client) and the
// router's server (src/router/native_api.h): frames and the handshake
// proofs. docs/formats/kv-api.md is the specification.
//
// Frames have the internal RPC's layout (big-endian u32 payload length,
// big-endian u32 CRC-32C of the payload, payload) and are reassembled with
// rpc::FrameDecoder; the payload is a KvApiClientFrame or KvApiServerFrame.
//
//   hello proof   = HMAC-SHA256(secret, "tessera-kv-hello/1"   || server_nonce
//                                       || client_nonce || access_key)
//   welcome proof = HMAC-SHA256(secret, "tessera-kv-welcome/1" || server_nonce
//                                       || client_nonce || access_key)
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

#include "common/result.h"

namespace tessera::kvapi {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kProofBytes = 32;

// `message` as one frame (header + payload). InvalidArgument when the
// payload would exceed `frame_bytes_max`.
Result<std::string> EncodeFrame(const google::protobuf::MessageLite& message, size_t frame_bytes_max);

// kNonceBytes from the OpenSSL CSPRNG.
std::string RandomNonce();

std::string HelloProof(std::string_view secret, std::string_view server_nonce,
                       std::string_view client_nonce, std::string_view access_key);
std::string WelcomeProof(std::string_view secret, std::string_view server_nonce,
                         std::string_view client_nonce, std::string_view access_key);

// Constant-time equality (CRYPTO_memcmp); false when sizes differ.
bool ProofEquals(std::string_view a, std::string_view b);

}  // namespace tessera::kvapi
