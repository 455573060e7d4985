#include "blob/read_response.h"

#include <utility>

#include "rpc/bytes_field.h"
#include "rpc/frame.h"

namespace tessera::blob {

rpc::SplitPayload EncodeReadResponse(BlobReadResult read) {
  pb::BlobReadResponse fields;
  fields.set_crc32c(read.crc32c);
  fields.set_total_size(read.total_size);
  fields.set_owner(std::move(read.owner));
  rpc::SplitPayload payload{fields.SerializeAsString(), std::move(read.data), read.crc32c};
  rpc::AppendLengthDelimitedFieldHeader(&payload.head, pb::BlobReadResponse::kDataFieldNumber,
                                        payload.tail.size());
  return payload;
}

bool ParseReadResponse(std::string_view payload, pb::BlobReadResponse* fields, std::string_view* data) {
  return rpc::ParseAroundBytesField(payload, pb::BlobReadResponse::kDataFieldNumber, fields, data);
}

}  // namespace tessera::blob
