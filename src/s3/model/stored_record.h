// Parsing of the S3 layer's stored records (the protobuf values of the
// `_s3` table's rows, docs/formats/s3-keys.md) from a view of their bytes.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::s3::model {

// The record in `bytes`; Corruption "unparseable <kind> record" when they
// do not parse as a `Message`.
template <typename Message>
Result<Message> ParseStoredRecord(std::string_view bytes, const char* kind) {
  Message message;
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::Corruption(std::string("unparseable ") + kind + " record");
  }
  return message;
}

}  // namespace tessera::s3::model
