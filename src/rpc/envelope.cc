#include "rpc/envelope.h"

#include "common/limits.h"

namespace tessera::rpc {

Status ValidateMethod(std::string_view method) {
  if (method.empty() || method.size() > limits::kRpcMethodBytesMax) {
    return Status::InvalidArgument("rpc method name must have 1 to " +
                                   std::to_string(limits::kRpcMethodBytesMax) + " bytes");
  }
  if (method.starts_with("rpc.")) {
    return Status::InvalidArgument("rpc method prefix \"rpc.\" is reserved: " +
                                   std::string(method));
  }
  return Status::Ok();
}

pb::Envelope MakeRequest(uint64_t call_id, std::string_view method, std::string payload) {
  pb::Envelope envelope;
  envelope.set_call_id(call_id);
  envelope.set_method(std::string(method));
  envelope.set_payload(std::move(payload));
  return envelope;
}

pb::Envelope MakeResponse(uint64_t call_id, Result<std::string> result) {
  pb::Envelope envelope;
  envelope.set_call_id(call_id);
  envelope.set_is_response(true);
  if (result.ok()) {
    envelope.set_payload(std::move(result).value());
    return envelope;
  }
  const Status& status = result.status();
  envelope.set_status_code(static_cast<uint32_t>(status.code()));
  envelope.set_status_message(status.message());
  envelope.set_status_leader_hint(status.leader_hint());
  return envelope;
}

StatusCode StatusCodeFromWire(uint32_t code) {
  return code < kStatusCodeCount ? static_cast<StatusCode>(code) : StatusCode::kAborted;
}

Result<std::string> ResultFromResponse(pb::Envelope& response) {
  const uint32_t code = response.status_code();
  if (code == static_cast<uint32_t>(StatusCode::kOk)) {
    return std::move(*response.mutable_payload());
  }
  return Status(StatusCodeFromWire(code), std::move(*response.mutable_status_message()),
                response.status_leader_hint())
      .WithSendOutcome(SendOutcome::kAnswered);
}

}  // namespace tessera::rpc
