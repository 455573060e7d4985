// blob.read's response (pb::BlobReadResponse) on the wire without copying
// its data: the node sends every other field first and the data field
// last, its bytes as the frame's shared tail straight from the read buffer;
// the reader views the data where it arrived. Protobuf parses fields in any
// order, so either side also understands a response serialized whole.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "blob/blob_store.h"
#include "rpc/types.h"
#include "tessera/blob.pb.h"

namespace tessera::blob {

// The response carrying `read` (its crc32c as the tail's CRC: trusted).
rpc::SplitPayload EncodeReadResponse(BlobReadResult read);

// Parses a serialized BlobReadResponse except its data field, which
// `*data` views inside `payload` (the last one when repeated, as protobuf
// does; empty when absent). False when `payload` is not a valid message.
bool ParseReadResponse(std::string_view payload, pb::BlobReadResponse* fields, std::string_view* data);

}  // namespace tessera::blob
