// Composite (multipart) checksums, as S3 computes them for an upload
// created with x-amz-checksum-algorithm: the checksum of the concatenated
// raw part checksums, base64, then "-" and the part count
// ("Checking object integrity", composite checksums).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "s3/auth/checksum.h"
#include "s3/protocol/s3_result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

// The algorithms allowed for a composite checksum (CRC32, CRC32C, SHA1,
// SHA256); nullopt for the others (CRC64NVME is full-object only, MD5 none).
std::optional<auth::ChecksumAlgorithm> CompositeAlgorithm(std::string_view name);

// base64(H(raw_1 | ... | raw_n)) + "-n" for the parts' base64 checksums in
// part order. InvalidRequest when a value is not base64 of the algorithm's
// digest length; at least one part (CHECKed).
S3Result<std::string> CompositeChecksum(auth::ChecksumAlgorithm algorithm,
                                        const std::vector<std::string>& part_checksums_base64);

// Adds <ChecksumXXX>value</ChecksumXXX> per checksum (and
// <ChecksumType>COMPOSITE</ChecksumType> after a composite one, or
// FULL_OBJECT after a whole-object one of a completed upload) just
// before the closing tag of `root` in a result document the protocol's
// writers produce without them (CopyObjectResult, CopyPartResult,
// CompleteMultipartUploadResult). Values are base64 (no escaping needed).
std::string AddChecksumElements(std::string xml, std::string_view root,
                                const google::protobuf::RepeatedPtrField<pb::ObjectChecksum>& checksums);

}  // namespace tessera::s3::front
