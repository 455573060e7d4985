#include "s3/front/composite_checksum.h"

#include "common/check.h"
#include "s3/model/full_object_checksum.h"

namespace tessera::s3::front {

std::optional<auth::ChecksumAlgorithm> CompositeAlgorithm(std::string_view name) {
  auto algorithm = auth::ChecksumFromAlgorithmValue(name);
  if (!algorithm) return std::nullopt;
  switch (*algorithm) {
    case auth::ChecksumAlgorithm::kCrc32:
    case auth::ChecksumAlgorithm::kCrc32c:
    case auth::ChecksumAlgorithm::kSha1:
    case auth::ChecksumAlgorithm::kSha256: return algorithm;
    default: return std::nullopt;
  }
}

S3Result<std::string> CompositeChecksum(auth::ChecksumAlgorithm algorithm,
                                        const std::vector<std::string>& part_checksums_base64) {
  TESSERA_CHECK(!part_checksums_base64.empty());
  std::string raw;
  for (const std::string& value : part_checksums_base64) {
    auto decoded = auth::Base64Decode(value);
    if (!decoded.ok() || decoded->size() != auth::ChecksumDigestBytes(algorithm)) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "Value for x-amz-checksum-" +
                         std::string(auth::ChecksumName(algorithm)) + " is invalid.");
    }
    raw += *decoded;
  }
  return auth::Base64Encode(auth::ComputeChecksum(algorithm, raw)) + "-" +
         std::to_string(part_checksums_base64.size());
}

std::string AddChecksumElements(
    std::string xml, std::string_view root,
    const google::protobuf::RepeatedPtrField<pb::ObjectChecksum>& checksums) {
  const std::string closing = "</" + std::string(root) + ">";
  const size_t at = xml.rfind(closing);
  if (at == std::string::npos || checksums.empty()) return xml;
  std::string elements;
  for (const pb::ObjectChecksum& c : checksums) {
    const std::string name = "Checksum" + c.algorithm();
    elements += "<" + name + ">" + c.value() + "</" + name + ">";
    if (model::IsCompositeChecksum(c.value())) {
      elements += "<ChecksumType>COMPOSITE</ChecksumType>";
    } else if (root == "CompleteMultipartUploadResult") {
      elements += "<ChecksumType>FULL_OBJECT</ChecksumType>";
    }
  }
  xml.insert(at, elements);
  return xml;
}

}  // namespace tessera::s3::front
