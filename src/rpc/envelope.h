// Building and reading pb::Envelope requests and responses
// (docs/formats/rpc.md, "Envelope").
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tessera/rpc.pb.h"

namespace tessera::rpc {

// Transport messages ("rpc." methods) used during the handshake.
inline constexpr std::string_view kChallengeMethod = "rpc.Challenge";
inline constexpr std::string_view kHelloMethod = "rpc.Hello";
inline constexpr std::string_view kWelcomeMethod = "rpc.Welcome";

// InvalidArgument unless `method` is non-empty, at most
// limits::kRpcMethodBytesMax bytes and outside the reserved "rpc." prefix.
Status ValidateMethod(std::string_view method);

// A request; call_id 0 makes it one-way.
pb::Envelope MakeRequest(uint64_t call_id, std::string_view method, std::string payload);

// The response to call `call_id`: the payload when `result` is OK, else
// its status (code, message, leader hint).
pb::Envelope MakeResponse(uint64_t call_id, Result<std::string> result);

// A status code read off the wire; one this build does not know reads as
// Aborted.
StatusCode StatusCodeFromWire(uint32_t code);

// What MakeResponse encoded. A status code this build does not know reads
// as Aborted, keeping the message. A status read here is the peer's answer
// (SendOutcome::kAnswered); the sender's own send outcome is not sent.
Result<std::string> ResultFromResponse(pb::Envelope& response);

}  // namespace tessera::rpc
