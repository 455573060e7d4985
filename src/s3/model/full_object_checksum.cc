#include "s3/model/full_object_checksum.h"

#include "common/base64.h"
#include "common/crc_combine.h"

namespace tessera::s3::model {
namespace {

// A checksum value is the big-endian CRC.
template <typename Word>
Result<Word> DecodeCrc(std::string_view base64) {
  Result<std::string> raw = Base64Decode(base64);
  if (!raw.ok() || raw->size() != sizeof(Word)) {
    return Status::InvalidArgument("part checksum is not base64 of a " +
                                   std::to_string(sizeof(Word) * 8) + "-bit CRC");
  }
  Word value = 0;
  for (unsigned char c : *raw) value = static_cast<Word>(value << 8) | c;
  return value;
}

template <typename Word>
std::string EncodeCrc(Word value) {
  std::string raw(sizeof(Word), '\0');
  for (size_t i = 0; i < sizeof(Word); ++i) {
    raw[sizeof(Word) - 1 - i] = static_cast<char>(value & 0xFF);
    value = static_cast<Word>(value >> 8);
  }
  return Base64Encode(raw);
}

template <typename Word>
Result<std::string> Combine(Word polynomial, const std::vector<PartCrc>& parts) {
  Word crc = 0;  // the CRC of no bytes
  for (const PartCrc& part : parts) {
    Result<Word> part_crc = DecodeCrc<Word>(part.checksum_base64);
    if (!part_crc.ok()) return part_crc.status();
    crc = CrcCombine(polynomial, crc, *part_crc, part.size);
  }
  return EncodeCrc(crc);
}

}  // namespace

bool IsFullObjectAlgorithm(std::string_view algorithm) {
  return algorithm == "CRC32" || algorithm == "CRC32C" || algorithm == "CRC64NVME";
}

Result<std::string> CombineFullObjectChecksum(std::string_view algorithm,
                                              const std::vector<PartCrc>& parts) {
  if (algorithm == "CRC32") return Combine(kCrc32Polynomial, parts);
  if (algorithm == "CRC32C") return Combine(kCrc32cPolynomial, parts);
  if (algorithm == "CRC64NVME") return Combine(kCrc64NvmePolynomial, parts);
  return Status::InvalidArgument("no full-object checksum for " + std::string(algorithm));
}

bool IsCompositeChecksum(std::string_view value) {
  const size_t dash = value.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == value.size()) return false;
  for (char c : value.substr(dash + 1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string_view ChecksumTypeOf(std::string_view value) {
  return IsCompositeChecksum(value) ? "COMPOSITE" : "FULL_OBJECT";
}

}  // namespace tessera::s3::model
