// Full-object checksums of multipart uploads (x-amz-checksum-type
// FULL_OBJECT): the CRC of the whole object, computed at completion from
// each part's stored CRC and size without reading any data
// (common/crc_combine.h).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tessera::s3::model {

// True for the algorithms a full-object checksum can use: "CRC32",
// "CRC32C", "CRC64NVME".
bool IsFullObjectAlgorithm(std::string_view algorithm);

struct PartCrc {
  std::string checksum_base64;  // the part's stored checksum of the algorithm
  uint64_t size = 0;
};

// base64 of the CRC of the parts' concatenation, in the given order.
// InvalidArgument for another algorithm or a value that is not base64 of
// the algorithm's width.
Result<std::string> CombineFullObjectChecksum(std::string_view algorithm,
                                              const std::vector<PartCrc>& parts);

// True for a composite value ("base64-n": the checksum of the parts'
// checksums, n parts); a full-object value has no "-n".
bool IsCompositeChecksum(std::string_view value);

// "COMPOSITE" or "FULL_OBJECT": the ChecksumType S3 reports for `value`.
std::string_view ChecksumTypeOf(std::string_view value);

}  // namespace tessera::s3::model
