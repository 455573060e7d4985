// S3 object checksums (x-amz-checksum-*, Content-MD5) and the encodings
// they travel in. An x-amz-checksum-* value is the base64 of the raw digest;
// a CRC's raw digest is its value in big-endian bytes (CRC32: 4 bytes).
//
// Algorithms: CRC32 (ISO-HDLC, zlib's; computed by isa-l), CRC32C (Castagnoli, common/crc32c.h),
// CRC64NVME (reflected poly 0xad93d23594c93659, the AWS CLI's default),
// SHA1, SHA256 (OpenSSL EVP), and MD5 for Content-MD5.
//
// Thread safety: functions are pure; a Checksummer is owned by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/base64.h"
#include "common/result.h"
#include "s3/auth/auth_context.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

enum class ChecksumAlgorithm { kCrc32, kCrc32c, kSha1, kSha256, kMd5, kCrc64Nvme };

// "CRC32", "CRC32C", "SHA1", "SHA256", "MD5", "CRC64NVME" (as S3 spells
// them in x-amz-checksum-algorithm and in error messages).
std::string_view ChecksumName(ChecksumAlgorithm algorithm);
// "x-amz-checksum-crc32", ..., and "content-md5" for kMd5.
std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm);
// Raw digest length: 4, 4, 20, 32, 16, 8.
size_t ChecksumDigestBytes(ChecksumAlgorithm algorithm);

// The algorithm of an x-amz-checksum-<alg> header or trailer name (any
// case); nullopt for other names (content-md5 included).
std::optional<ChecksumAlgorithm> ChecksumFromHeaderName(std::string_view name);
// The algorithm of an x-amz-checksum-algorithm / x-amz-sdk-checksum-algorithm
// value ("CRC32", "crc32c", ...; any case; MD5 is not a valid value).
std::optional<ChecksumAlgorithm> ChecksumFromAlgorithmValue(std::string_view value);

// Incremental checksum. Update any number of times, then Finish once.
class Checksummer {
 public:
  explicit Checksummer(ChecksumAlgorithm algorithm);
  ~Checksummer();
  Checksummer(Checksummer&&) noexcept;
  Checksummer& operator=(Checksummer&&) noexcept;
  Checksummer(const Checksummer&) = delete;
  Checksummer& operator=(const Checksummer&) = delete;

  ChecksumAlgorithm algorithm() const { return algorithm_; }
  void Update(std::string_view data);
  // The raw digest (ChecksumDigestBytes long, CRCs big-endian). Precondition:
  // not yet finished; Update after Finish is a bug.
  std::string Finish();

 private:
  struct Impl;
  ChecksumAlgorithm algorithm_;
  std::unique_ptr<Impl> impl_;
};

// One-shot form of Checksummer.
std::string ComputeChecksum(ChecksumAlgorithm algorithm, std::string_view data);

// Standard base64 (common/base64.h).
using tessera::Base64Decode;
using tessera::Base64Encode;
// Lowercase hex.
std::string HexEncode(std::string_view raw);
// Lowercase hex of SHA-256(data).
std::string Sha256Hex(std::string_view data);

// Compares a declared checksum (base64, as in the header or trailer) with
// the computed raw digest. Declared not base64 of the right length ->
// InvalidRequest "Value for x-amz-checksum-crc32 header is invalid."
// (InvalidDigest for MD5); mismatch -> BadDigest "The CRC32 you specified
// did not match the calculated checksum." ("The Content-MD5 you specified
// did not match what we received." for MD5).
S3Status VerifyChecksum(ChecksumAlgorithm algorithm, std::string_view declared_base64,
                        std::string_view computed_raw);

// A checksum value sent up front in a request header.
struct DeclaredChecksum {
  ChecksumAlgorithm algorithm;
  std::string value_base64;
};
// The request's x-amz-checksum-<alg> header, if any (Content-MD5 is not
// considered). More than one -> InvalidRequest "Expecting a single
// x-amz-checksum- header. Multiple checksum Types are not allowed."; an
// unknown x-amz-checksum-<alg> -> InvalidRequest. x-amz-checksum-type,
// x-amz-checksum-algorithm and x-amz-checksum-mode are not values and are
// skipped.
S3Result<std::optional<DeclaredChecksum>> FindDeclaredChecksum(const HeaderList& headers);

}  // namespace tessera::s3::auth
