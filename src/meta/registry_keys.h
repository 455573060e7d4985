// The S3 bucket registry's and the S3 users' keys in the meta group's state,
// the S3 table's layout, and the pure checks of names and keys.
// Format: docs/formats/meta-keys.md ("S3 bucket registry and users").
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tessera::meta {

// The KV table holding every S3 bucket's records, created at cluster
// bootstrap (`tessera cluster up`). Its keys start with the bucket id
// (uint64 big-endian); bucket id 0 is reserved for partition-internal
// records. A leading underscore marks a reserved table name.
inline constexpr std::string_view kS3TableName = "_s3";
// Partitions of the S3 table at bootstrap (even split of the bucket ids).
inline constexpr uint32_t kS3TablePartitions = 8;

inline constexpr std::string_view kBucketPrefix = "b/";     // + name -> BucketDescriptor
inline constexpr std::string_view kBucketIdPrefix = "bid/"; // + 8-byte id -> bucket name
inline constexpr std::string_view kUserPrefix = "u/";       // + user name -> UserRecord
inline constexpr std::string_view kAccessKeyPrefix = "k/";  // + access key -> AccessKeyRecord

std::string BucketKey(std::string_view name);
std::string BucketIdKey(uint64_t bucket_id);
std::string UserKey(std::string_view name);
std::string AccessKeyKey(std::string_view access_key);
// True for a key under one of the four prefixes above.
bool IsRegistryKey(std::string_view key);

// 8 bytes big-endian, the first bytes of every S3-table key of the bucket.
std::string EncodeBucketId(uint64_t bucket_id);
// The bucket id of a "bid/" key; nullopt for another or malformed key.
std::optional<uint64_t> ParseBucketIdKey(std::string_view key);

// S3 bucket naming rules (general purpose buckets): 3..63 bytes of
// [a-z0-9.-], starting and ending with a letter or digit, no "..", not an
// IPv4 address, not starting with "xn--" or "sthree-", not ending with
// "-s3alias" or "--ol-s3". InvalidArgument naming the rule otherwise.
Status ValidateBucketName(std::string_view name);
// User names: 1..kS3UserNameBytesMax bytes of [A-Za-z0-9+=,.@_-].
Status ValidateUserName(std::string_view name);
// Access keys: 1..kS3UserAccessKeyBytesMax bytes of [A-Za-z0-9_-] (what
// the router's credentials file accepts). Secret keys: 16..
// kS3UserSecretKeyBytesMax printable ASCII bytes without spaces.
Status ValidateAccessKey(std::string_view access_key);
Status ValidateSecretKey(std::string_view secret_key);
// Display names: 0..kS3UserDisplayNameBytesMax bytes of printable ASCII
// (no control characters; they appear in XML and CLI output). Emails:
// 0..kS3UserEmailBytesMax bytes of printable ASCII without spaces, exactly
// one '@' with something on both sides; compared case-insensitively
// (stored lowercased by create_user, see NormalizeEmail).
Status ValidateDisplayName(std::string_view display_name);
Status ValidateEmail(std::string_view email);
std::string NormalizeEmail(std::string_view email);
// Regions: 0..kS3RegistryRegionBytesMax bytes of [a-z0-9-].
Status ValidateRegion(std::string_view region);

// partitions - 1 split points of the S3 table dividing the bucket-id space
// evenly: point k is the 8-byte big-endian value floor(k * 2^64 /
// partitions). 1 <= partitions <= kMetaPartitionsPerTableMax (checked).
std::vector<std::string> S3TableSplitPoints(uint32_t partitions);

// The bucket ids whose EVERY key lies in the partition range
// [start_key, end_key) (empty end_key: unbounded), as an inclusive
// [first, last] pair; id 0 (reserved) is never included. nullopt when no
// id fits (e.g. a range inside one bucket's keys).
std::optional<std::pair<uint64_t, uint64_t>> BucketIdRange(std::string_view start_key,
                                                           std::string_view end_key);

}  // namespace tessera::meta
