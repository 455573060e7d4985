#include "rpc/bytes_field.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/message_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <string>

namespace tessera::rpc {

bool ParseAroundBytesField(std::string_view bytes, int field_number, google::protobuf::MessageLite* others,
                           std::string_view* field) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::string rest;  // every other field, for the generated parser
  *field = {};
  for (;;) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (WireFormatLite::GetTagFieldNumber(tag) == field_number &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const auto at = static_cast<size_t>(in.CurrentPosition());
      if (length > bytes.size() - at || !in.Skip(static_cast<int>(length))) return false;
      *field = bytes.substr(at, length);
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
    rest.append(bytes.substr(static_cast<size_t>(start), static_cast<size_t>(in.CurrentPosition() - start)));
  }
  return in.ConsumedEntireMessage() && others->ParseFromString(rest);
}

}  // namespace tessera::rpc
