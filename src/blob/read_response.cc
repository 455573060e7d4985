#include "blob/read_response.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <string>

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
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                                            static_cast<int>(payload.size()));
  std::string others;  // every field but data, for the generated parser
  *data = {};
  for (;;) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (WireFormatLite::GetTagFieldNumber(tag) == pb::BlobReadResponse::kDataFieldNumber &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const int at = in.CurrentPosition();
      if (length > payload.size() - static_cast<size_t>(at) || !in.Skip(static_cast<int>(length))) {
        return false;
      }
      *data = payload.substr(static_cast<size_t>(at), length);
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
    others.append(payload.substr(static_cast<size_t>(start), static_cast<size_t>(in.CurrentPosition() - start)));
  }
  return in.ConsumedEntireMessage() && fields->ParseFromString(others);
}

}  // namespace tessera::blob
