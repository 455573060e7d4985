// The conditions of a conditional delete (DeleteObject's If-Match,
// x-amz-if-match-last-modified-time and x-amz-if-match-size headers;
// DeleteObjects' per-object ETag, LastModifiedTime and Size elements),
// checked by the model's DeleteObjectOp inside the key's partition, never
// by a read before the delete.
#pragma once

#include <optional>
#include <string>

#include "s3/protocol/s3_result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

// The conditions as the request wrote them; nullopt: absent.
struct DeleteConditionTexts {
  std::optional<std::string> etag;           // quoted or not; "*": any
  std::optional<std::string> last_modified;  // an HTTP date or ISO 8601
  std::optional<std::string> size;           // decimal bytes
};

// Sets the conditions on `op`. InvalidArgument naming the condition
// (`*_name`, the header or element the client sent) when a value cannot be
// parsed; nothing is set then.
struct DeleteConditionNames {
  const char* etag = "If-Match";
  const char* last_modified = "x-amz-if-match-last-modified-time";
  const char* size = "x-amz-if-match-size";
};
S3Status SetDeleteConditions(const DeleteConditionTexts& texts, const DeleteConditionNames& names,
                             pb::DeleteObjectOp& op);

}  // namespace tessera::s3::front
