#include "meta/registry_keys.h"

#include <cctype>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::meta {
namespace {

std::string Prefixed(std::string_view prefix, std::string_view rest) {
  std::string key(prefix);
  key.append(rest);
  return key;
}

bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerOrDigit(c) || (c >= 'A' && c <= 'Z'); }

// True for four dot-separated groups of 1..3 digits (S3 refuses such names).
bool LooksLikeIpv4(std::string_view name) {
  int groups = 0;
  size_t digits = 0;
  for (char c : name) {
    if (c == '.') {
      if (digits == 0) return false;
      ++groups;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 3) {
      ++digits;
    } else {
      return false;
    }
  }
  return groups == 3 && digits > 0;
}

uint64_t Prefix8(std::string_view key) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v = (v << 8) | (i < key.size() ? static_cast<unsigned char>(key[i]) : 0u);
  }
  return v;
}

}  // namespace

std::string BucketKey(std::string_view name) { return Prefixed(kBucketPrefix, name); }
std::string BucketIdKey(uint64_t bucket_id) {
  return Prefixed(kBucketIdPrefix, EncodeBucketId(bucket_id));
}
std::string UserKey(std::string_view name) { return Prefixed(kUserPrefix, name); }
std::string AccessKeyKey(std::string_view access_key) {
  return Prefixed(kAccessKeyPrefix, access_key);
}

bool IsRegistryKey(std::string_view key) {
  return key.starts_with(kBucketPrefix) || key.starts_with(kBucketIdPrefix) ||
         key.starts_with(kUserPrefix) || key.starts_with(kAccessKeyPrefix);
}

std::string EncodeBucketId(uint64_t bucket_id) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(bucket_id & 0xff);
    bucket_id >>= 8;
  }
  return out;
}

std::optional<uint64_t> ParseBucketIdKey(std::string_view key) {
  if (!key.starts_with(kBucketIdPrefix) || key.size() != kBucketIdPrefix.size() + 8) {
    return std::nullopt;
  }
  return Prefix8(key.substr(kBucketIdPrefix.size()));
}

Status ValidateBucketName(std::string_view name) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("bucket name '" + std::string(name) + "': " + why);
  };
  if (name.size() < 3 || name.size() > 63) return bad("must be 3..63 bytes");
  for (char c : name) {
    if (!IsLowerOrDigit(c) && c != '.' && c != '-') {
      return bad("may hold only lowercase letters, digits, '.' and '-'");
    }
  }
  if (!IsLowerOrDigit(name.front()) || !IsLowerOrDigit(name.back())) {
    return bad("must begin and end with a letter or digit");
  }
  if (name.find("..") != std::string_view::npos) return bad("must not hold \"..\"");
  if (LooksLikeIpv4(name)) return bad("must not be formatted as an IP address");
  if (name.starts_with("xn--") || name.starts_with("sthree-")) return bad("reserved prefix");
  if (name.ends_with("-s3alias") || name.ends_with("--ol-s3")) return bad("reserved suffix");
  return Status::Ok();
}

Status ValidateUserName(std::string_view name) {
  if (name.empty() || name.size() > limits::kS3UserNameBytesMax) {
    return Status::InvalidArgument("user name must be 1.." +
                                   std::to_string(limits::kS3UserNameBytesMax) + " bytes");
  }
  for (char c : name) {
    if (!IsAlnum(c) && std::string_view("+=,.@_-").find(c) == std::string_view::npos) {
      return Status::InvalidArgument("user name may hold only [A-Za-z0-9+=,.@_-]");
    }
  }
  return Status::Ok();
}

Status ValidateDisplayName(std::string_view display_name) {
  if (display_name.size() > limits::kS3UserDisplayNameBytesMax) {
    return Status::InvalidArgument("display name must be at most " +
                                   std::to_string(limits::kS3UserDisplayNameBytesMax) + " bytes");
  }
  for (char c : display_name) {
    if (c < 0x20 || c > 0x7e) {
      return Status::InvalidArgument("display name may hold only printable ASCII characters");
    }
  }
  return Status::Ok();
}

Status ValidateEmail(std::string_view email) {
  if (email.empty()) return Status::Ok();
  if (email.size() > limits::kS3UserEmailBytesMax) {
    return Status::InvalidArgument("email must be at most " +
                                   std::to_string(limits::kS3UserEmailBytesMax) + " bytes");
  }
  for (char c : email) {
    if (c <= 0x20 || c > 0x7e) {
      return Status::InvalidArgument("email may hold only printable ASCII characters, no spaces");
    }
  }
  const size_t at = email.find('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == email.size() ||
      email.find('@', at + 1) != std::string_view::npos) {
    return Status::InvalidArgument("email must be LOCAL@DOMAIN with exactly one '@'");
  }
  return Status::Ok();
}

std::string NormalizeEmail(std::string_view email) {
  std::string out(email);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status ValidateAccessKey(std::string_view access_key) {
  if (access_key.empty() || access_key.size() > limits::kS3UserAccessKeyBytesMax) {
    return Status::InvalidArgument("access key must be 1.." +
                                   std::to_string(limits::kS3UserAccessKeyBytesMax) + " bytes");
  }
  for (char c : access_key) {
    if (!IsAlnum(c) && c != '_' && c != '-') {
      return Status::InvalidArgument("access key may hold only [A-Za-z0-9_-]");
    }
  }
  return Status::Ok();
}

Status ValidateSecretKey(std::string_view secret_key) {
  if (secret_key.size() < 16 || secret_key.size() > limits::kS3UserSecretKeyBytesMax) {
    return Status::InvalidArgument("secret key must be 16.." +
                                   std::to_string(limits::kS3UserSecretKeyBytesMax) + " bytes");
  }
  for (char c : secret_key) {
    if (c <= ' ' || c > '~') {
      return Status::InvalidArgument("secret key must be printable ASCII without spaces");
    }
  }
  return Status::Ok();
}

Status ValidateRegion(std::string_view region) {
  if (region.size() > limits::kS3RegistryRegionBytesMax) {
    return Status::InvalidArgument("region of more than " +
                                   std::to_string(limits::kS3RegistryRegionBytesMax) + " bytes");
  }
  for (char c : region) {
    if (!IsLowerOrDigit(c) && c != '-') {
      return Status::InvalidArgument("region may hold only [a-z0-9-]");
    }
  }
  return Status::Ok();
}

std::vector<std::string> S3TableSplitPoints(uint32_t partitions) {
  TESSERA_CHECK(partitions >= 1 && partitions <= limits::kMetaPartitionsPerTableMax);
  // 2^64 = q * partitions + r, so floor(k * 2^64 / partitions) =
  // k * q + floor(k * r / partitions), with k * r < partitions^2 small.
  uint64_t q = UINT64_MAX / partitions;
  uint64_t r = UINT64_MAX % partitions + 1;
  if (r == partitions) {
    ++q;
    r = 0;
  }
  std::vector<std::string> points;
  for (uint32_t k = 1; k < partitions; ++k) {
    points.push_back(EncodeBucketId(k * q + (k * r) / partitions));
  }
  return points;
}

std::optional<std::pair<uint64_t, uint64_t>> BucketIdRange(std::string_view start_key,
                                                           std::string_view end_key) {
  // Every key of bucket X starts with BE(X), the smallest of them. They all
  // lie at or after start_key iff BE(X) >= start_key: X >= first8(start)
  // when start_key has at most 8 bytes, else X > first8(start).
  uint64_t first = Prefix8(start_key);
  if (start_key.size() > 8) {
    if (first == UINT64_MAX) return std::nullopt;
    ++first;
  }
  if (first == 0) first = 1;  // id 0 is reserved
  // They all lie before end_key iff BE(X) < end_key and end_key does not
  // start with BE(X): X < first8(end) in both cases (padding a shorter
  // end_key with zeros keeps that order; see meta-keys.md).
  uint64_t last = UINT64_MAX;
  if (!end_key.empty()) {
    const uint64_t end = Prefix8(end_key);
    if (end == 0) return std::nullopt;
    last = end - 1;
  }
  if (first > last) return std::nullopt;
  return std::make_pair(first, last);
}

}  // namespace tessera::meta
