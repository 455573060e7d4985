// Key encoding of the `_s3` table (docs/formats/s3-keys.md is normative):
//
//   object records   bucket_id(8, BE) | object key | 0x00 | type | suffix
//     type 0x01  head              (ObjectHead)
//     type 0x02  version           suffix: ~seq (8, BE: newest first)
//     type 0x03  multipart upload  suffix: upload id
//     type 0x04  part              suffix: upload id | 0x00 | part number (4, BE)
//     type 0x05  data              suffix: ~seq (8, BE), seq 0 = the latest of a
//                                  key without version records
//   bucket records
//     bucket_id(8) | 0x00 | 'c'    BucketConfig (before every object record:
//                                  object keys are non-empty, without 0x00)
//   partition-internal records (bucket id 0, never a real bucket)
//     0(8) | 'u' | bucket_id(8)    BucketUsage of this partition
//     0(8) | 'g' | slot(8, BE)     GcRecord written at that slot
//
// Object keys never contain 0x00 (the S3 front refuses them), so the first
// 0x00 after the bucket id ends the object key. Since 0x00 is the smallest
// byte, all records of key K sort together and before every key extending
// K ("a" 0x00 .. < "a/.." < "ab.."): the table's key order is S3's key
// order, and a listing skips K's non-head records by seeking to
// ObjectEnd(K).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/big_endian.h"

namespace tessera::s3::model {

enum class RecordType : uint8_t {
  kHead = 0x01,
  kVersion = 0x02,
  kUpload = 0x03,
  kPart = 0x04,
  kData = 0x05,  // ObjectData: the inline bytes of one version
};

inline constexpr uint64_t kInternalBucketId = 0;

// bucket_id(8): the start of a bucket's key space.
std::string BucketPrefix(uint64_t bucket_id);
// bucket_id(8) | key: where key's records (and keys extending it) start.
std::string ObjectPrefix(uint64_t bucket_id, std::string_view key);
std::string HeadKey(uint64_t bucket_id, std::string_view key);
std::string VersionKey(uint64_t bucket_id, std::string_view key, uint64_t seq);
// The data record of version `seq` (0: the latest of a key that has no
// version records, i.e. head.latest_seq == 0).
std::string DataKey(uint64_t bucket_id, std::string_view key, uint64_t seq);
std::string UploadKey(uint64_t bucket_id, std::string_view key, std::string_view upload_id);
std::string PartKey(uint64_t bucket_id, std::string_view key, std::string_view upload_id,
                    uint32_t part_number);
// [PartsBegin, PartsEnd): every part record of one upload.
std::string PartsBegin(uint64_t bucket_id, std::string_view key, std::string_view upload_id);
std::string PartsEnd(uint64_t bucket_id, std::string_view key, std::string_view upload_id);
// The first table key past every record of exactly `key` (but before keys
// that extend it, e.g. "key/..."): bucket | key | 0x00 | 0xFF.
std::string ObjectEnd(uint64_t bucket_id, std::string_view key);
// ObjectEnd written over `out`, reusing its storage (a listing's cursor).
void AssignObjectEnd(uint64_t bucket_id, std::string_view key, std::string* out);
// The smallest string greater than every string starting with `prefix`
// (empty when none exists: prefix is all 0xFF or empty).
std::string PrefixSuccessor(std::string_view prefix);

// The bucket's configuration record: B | 00 | 'c'. It sorts after
// BucketPrefix(B) and before every object record of B, so it lives in the
// partition holding the start of the bucket's key space.
std::string BucketConfigKey(uint64_t bucket_id);

std::string UsageKey(uint64_t bucket_id);
std::string GcKey(uint64_t slot);
// The first and the past-the-end keys of all GC records.
std::string GcKeysBegin();
std::string GcKeysEnd();

struct ParsedKey {
  uint64_t bucket_id = 0;
  std::string_view object_key;
  RecordType type = RecordType::kHead;
  std::string_view suffix;
};
// Splits an object record key; nullopt for internal records and for keys
// that do not follow the layout.
std::optional<ParsedKey> ParseObjectRecordKey(std::string_view table_key);

// Ids are written with common/big_endian.h (AppendBigEndian64,
// ReadBigEndian64), which this header provides to its users.

}  // namespace tessera::s3::model
