// Conversion between the public client types (include/tessera/kv_client.h)
// and the native API's protobuf messages (proto/tessera/kv_api.proto).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "tessera/kv_api.pb.h"
#include "tessera/kv_client.h"

namespace tessera::kvapi {

// The wire request for `request`, or kInvalidArgument for a request the
// router would refuse anyway (empty table, scan limit out of 1..1000, empty
// or oversized batch, a condition on another key than a put's or delete's).
KvResult<pb::KvApiRequest> ToProto(const KvRequest& request, uint64_t request_id);

// The client's answer for a response to a request of kind `op`.
KvResult<KvReply> FromProto(const pb::KvApiResponse& response, KvRequest::Op op);

// kAborted for codes this client does not know.
KvCode CodeFromWire(uint32_t code);

}  // namespace tessera::kvapi
