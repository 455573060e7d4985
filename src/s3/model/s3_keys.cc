#include "s3/model/s3_keys.h"

#include "common/check.h"

namespace tessera::s3::model {
namespace {

constexpr char kSeparator = '\0';
constexpr size_t kBucketIdBytes = 8;

std::string RecordKey(uint64_t bucket_id, std::string_view key, RecordType type) {
  std::string out = ObjectPrefix(bucket_id, key);
  out.push_back(kSeparator);
  out.push_back(static_cast<char>(type));
  return out;
}

std::string InternalKey(char kind) {
  std::string out;
  AppendBigEndian64(&out, kInternalBucketId);
  out.push_back(kind);
  return out;
}

}  // namespace

std::string BucketPrefix(uint64_t bucket_id) {
  std::string out;
  AppendBigEndian64(&out, bucket_id);
  return out;
}

std::string ObjectPrefix(uint64_t bucket_id, std::string_view key) {
  std::string out = BucketPrefix(bucket_id);
  out.append(key);
  return out;
}

std::string HeadKey(uint64_t bucket_id, std::string_view key) {
  return RecordKey(bucket_id, key, RecordType::kHead);
}

std::string VersionKey(uint64_t bucket_id, std::string_view key, uint64_t seq) {
  std::string out = RecordKey(bucket_id, key, RecordType::kVersion);
  AppendBigEndian64(&out, ~seq);
  return out;
}

std::string DataKey(uint64_t bucket_id, std::string_view key, uint64_t seq) {
  std::string out = RecordKey(bucket_id, key, RecordType::kData);
  AppendBigEndian64(&out, ~seq);
  return out;
}

std::string UploadKey(uint64_t bucket_id, std::string_view key, std::string_view upload_id) {
  std::string out = RecordKey(bucket_id, key, RecordType::kUpload);
  out.append(upload_id);
  return out;
}

std::string PartsBegin(uint64_t bucket_id, std::string_view key, std::string_view upload_id) {
  std::string out = RecordKey(bucket_id, key, RecordType::kPart);
  out.append(upload_id);
  out.push_back(kSeparator);
  return out;
}

std::string PartsEnd(uint64_t bucket_id, std::string_view key, std::string_view upload_id) {
  std::string out = PartsBegin(bucket_id, key, upload_id);
  out.back() = '\x01';
  return out;
}

std::string PartKey(uint64_t bucket_id, std::string_view key, std::string_view upload_id,
                    uint32_t part_number) {
  std::string out = PartsBegin(bucket_id, key, upload_id);
  AppendBigEndian32(&out, part_number);
  return out;
}

std::string ObjectEnd(uint64_t bucket_id, std::string_view key) {
  std::string out;
  AssignObjectEnd(bucket_id, key, &out);
  return out;
}

void AssignObjectEnd(uint64_t bucket_id, std::string_view key, std::string* out) {
  out->clear();
  AppendBigEndian64(out, bucket_id);
  out->append(key);
  out->push_back(kSeparator);
  out->push_back(static_cast<char>(0xFF));
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty()) {
    auto last = static_cast<uint8_t>(out.back());
    if (last != 0xFF) {
      out.back() = static_cast<char>(last + 1);
      return out;
    }
    out.pop_back();
  }
  return out;
}

std::string BucketConfigKey(uint64_t bucket_id) {
  std::string out = BucketPrefix(bucket_id);
  out.push_back(kSeparator);
  out.push_back('c');
  return out;
}

std::string UsageKey(uint64_t bucket_id) {
  std::string out = InternalKey('u');
  AppendBigEndian64(&out, bucket_id);
  return out;
}

std::string GcKey(uint64_t slot) {
  std::string out = InternalKey('g');
  AppendBigEndian64(&out, slot);
  return out;
}

std::string GcKeysBegin() { return InternalKey('g'); }
std::string GcKeysEnd() { return InternalKey('g' + 1); }

std::optional<ParsedKey> ParseObjectRecordKey(std::string_view table_key) {
  if (table_key.size() < kBucketIdBytes + 2) return std::nullopt;
  ParsedKey parsed;
  parsed.bucket_id = ReadBigEndian64(table_key);
  if (parsed.bucket_id == kInternalBucketId) return std::nullopt;
  std::string_view rest = table_key.substr(kBucketIdBytes);
  size_t sep = rest.find(kSeparator);
  if (sep == std::string_view::npos || sep == 0 || sep + 1 >= rest.size()) return std::nullopt;
  parsed.object_key = rest.substr(0, sep);
  auto type = static_cast<uint8_t>(rest[sep + 1]);
  if (type < 0x01 || type > 0x05) return std::nullopt;
  parsed.type = static_cast<RecordType>(type);
  parsed.suffix = rest.substr(sep + 2);
  return parsed;
}

}  // namespace tessera::s3::model
