#include "s3/protocol/names.h"

#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <string>

#include "common/limits.h"

namespace tessera::s3 {
namespace {

bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

S3Error BadName(std::string_view why) {
  return S3Error(S3ErrorCode::kInvalidBucketName,
                 "The specified bucket is not valid. " + std::string(why));
}

// Four dot-separated runs of digits: AWS rejects names "formatted as an IP
// address" without checking the octet ranges.
bool LooksLikeIpv4(std::string_view name) {
  int labels = 0;
  size_t run = 0;
  for (char c : name) {
    if (c == '.') {
      if (run == 0) return false;
      ++labels;
      run = 0;
    } else if (IsDigit(c)) {
      ++run;
    } else {
      return false;
    }
  }
  return run > 0 && labels == 3;
}

// Reserved by AWS (general purpose bucket naming rules, "Bucket naming
// rules" in the S3 user guide).
constexpr std::array<std::string_view, 3> kReservedPrefixes = {"xn--", "sthree-",
                                                               "amzn-s3-demo-"};
constexpr std::array<std::string_view, 5> kReservedSuffixes = {"-s3alias", "--ol-s3", ".mrap",
                                                               "--x-s3", "--table-s3"};

}  // namespace

S3Status ValidateBucketName(std::string_view name) {
  if (name.size() < limits::kS3BucketNameBytesMin || name.size() > limits::kS3BucketNameBytesMax) {
    return BadName("Bucket names must be between 3 and 63 characters long.");
  }
  for (char c : name) {
    if (!IsLowerOrDigit(c) && c != '.' && c != '-') {
      return BadName("Bucket names can consist only of lowercase letters, numbers, dots and "
                     "hyphens.");
    }
  }
  if (!IsLowerOrDigit(name.front()) || !IsLowerOrDigit(name.back())) {
    return BadName("Bucket names must begin and end with a letter or number.");
  }
  // s3-tests (test_bucket_create_naming_dns_dot_dash / dash_dot) expect
  // InvalidBucketName for "-." and ".-" as well as "..".
  if (name.find("..") != std::string_view::npos || name.find(".-") != std::string_view::npos ||
      name.find("-.") != std::string_view::npos) {
    return BadName("Bucket names must not contain two adjacent periods or a period next to a "
                   "hyphen.");
  }
  if (LooksLikeIpv4(name)) {
    return BadName("Bucket names must not be formatted as an IP address.");
  }
  for (std::string_view prefix : kReservedPrefixes) {
    if (name.starts_with(prefix)) return BadName("The bucket name prefix is reserved.");
  }
  for (std::string_view suffix : kReservedSuffixes) {
    if (name.ends_with(suffix)) return BadName("The bucket name suffix is reserved.");
  }
  return S3Status::Ok();
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<uint8_t>(text[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t extra = 0;
    uint32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
      extra = 1;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      extra = 2;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      extra = 3;
      cp = b0 & 0x07;
    } else {
      return false;
    }
    if (extra > text.size() - i - 1) return false;  // truncated sequence
    for (size_t k = 1; k <= extra; ++k) {
      const auto b = static_cast<uint8_t>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    constexpr std::array<uint32_t, 4> kMinForLength = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[extra]) return false;     // overlong
    if (cp > 0x10FFFF) return false;                 // beyond Unicode
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogate
    i += extra + 1;
  }
  return true;
}

S3Status ValidateObjectKey(std::string_view key) {
  if (key.empty()) return S3Error(S3ErrorCode::kInvalidArgument, "Object key must not be empty.");
  if (key.size() > limits::kS3ObjectKeyBytesMax) {
    return S3Error(S3ErrorCode::kKeyTooLongError)
        .With("Size", std::to_string(key.size()))
        .With("MaxSizeAllowed", std::to_string(limits::kS3ObjectKeyBytesMax));
  }
  if (!IsValidUtf8(key)) return S3ErrorCode::kInvalidURI;
  if (key.find('\0') != std::string_view::npos) {
    return S3Error(S3ErrorCode::kInvalidArgument, "Object key must not contain U+0000.");
  }
  return S3Status::Ok();
}

std::string CanonicalUserId(std::string_view user_name) {
  const std::string input = "tessera-s3-user/" + std::string(user_name);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

}  // namespace tessera::s3
