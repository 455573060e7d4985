// Parsing of CopyObject / UploadPartCopy request headers: the copy source
// (x-amz-copy-source) and the source range (x-amz-copy-source-range).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "s3/protocol/s3_result.h"

namespace tessera::s3::front {

struct CopySource {
  std::string bucket;
  std::string key;         // decoded
  std::string version_id;  // empty: the latest version
};

// "bucket/key" or "/bucket/key", URL-encoded (percent-decoded here; '+'
// stays '+'), optionally followed by "?versionId=ID". InvalidArgument
// ("Invalid copy source ...") when the bucket or key is missing or the
// encoding is bad, or for another query parameter; the key is validated
// like a request key (ValidateObjectKey).
S3Result<CopySource> ParseCopySource(std::string_view header);

struct CopyRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

// x-amz-copy-source-range "bytes=first-last" against the source size.
// Malformed (not that exact form, first > last) -> InvalidArgument; first
// past the source -> InvalidRequest; last past it -> InvalidArgument (both
// as AWS answers them). nullopt header: the whole source (an empty source copies
// nothing: nullopt).
S3Result<std::optional<CopyRange>> ParseCopyRange(std::optional<std::string_view> header,
                                                  uint64_t source_size);

}  // namespace tessera::s3::front
