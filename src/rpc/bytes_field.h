// Parsing a serialized protobuf message around one large bytes field,
// which is left where it lies instead of copied into the message (a blob's
// data inside a blob.put request or a blob.read response). The sending
// side's counterpart is AppendLengthDelimitedFieldHeader (rpc/frame.h):
// the other fields, then the field's header, then its bytes as a frame's
// shared tail.
//
// Thread safety: pure function.
#pragma once

#include <string_view>

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace tessera::rpc {

// Parses `bytes` as `*others` except field `field_number` (wire type
// length-delimited), which `*field` views inside `bytes`: the last
// occurrence, as protobuf keeps for a repeated singular field; empty when
// absent. Fields may come in any order. False when `bytes` is not a valid
// message (then *others and *field are unspecified).
bool ParseAroundBytesField(std::string_view bytes, int field_number, google::protobuf::MessageLite* others,
                           std::string_view* field);

}  // namespace tessera::rpc
