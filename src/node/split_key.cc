#include "node/split_key.h"

#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

namespace s3m = tessera::s3::model;

constexpr size_t kBucketIdBytes = 8;
// The highest record type byte after `B K 00` (s3_keys.h RecordType).
constexpr unsigned char kLastRecordType = static_cast<unsigned char>(s3m::RecordType::kData);

// Invariant 2: `key` does not fall between two records of one object and
// lies past every partition-internal record.
bool AtObjectBoundary(std::string_view key) {
  if (key < s3m::BucketPrefix(s3m::kInternalBucketId + 1)) return false;
  if (key.size() <= kBucketIdBytes) return true;
  const std::string_view rest = key.substr(kBucketIdBytes);
  const size_t separator = rest.find('\0');
  if (separator == std::string_view::npos) return true;  // B K: before K's records
  const std::string_view suffix = rest.substr(separator + 1);
  // Records of K are `B K 00 t ...` with t in 01..05, and every S3 op on K
  // is routed (and range-checked) by its prefix `B K`, which sorts before
  // `B K 00`: a key `B K 00 ...` splits K unless it lies past the last
  // type byte (then `B K` and every record of K stay left).
  if (suffix.empty()) return false;
  return static_cast<unsigned char>(suffix[0]) > kLastRecordType;
}

}  // namespace

bool HalfBytesCursor::Feed(std::string_view key, uint64_t bytes) {
  if (crossing_) return true;
  if (any_row_ && bytes_before_ >= half_bytes_) {
    crossing_ = std::string(key);
    return true;
  }
  any_row_ = true;
  bytes_before_ += bytes;
  return false;
}

bool SplitKeyAllowed(std::string_view split_key, const SplitKeyRules& rules) {
  if (split_key <= rules.start_key) return false;
  if (!rules.end_key.empty() && split_key >= rules.end_key) return false;
  return !rules.whole_objects || AtObjectBoundary(split_key);
}

std::optional<std::string> ChooseSplitKey(std::string_view crossing_key, const SplitKeyRules& rules) {
  auto allowed = [&rules](std::string key) -> std::optional<std::string> {
    if (SplitKeyAllowed(key, rules)) return key;
    return std::nullopt;
  };
  if (!rules.whole_objects) return allowed(std::string(crossing_key));
  const std::string first_bucket = s3m::BucketPrefix(s3m::kInternalBucketId + 1);
  if (crossing_key < first_bucket) return allowed(first_bucket);
  const auto parsed = s3m::ParseObjectRecordKey(crossing_key);
  if (!parsed) return allowed(std::string(crossing_key));
  if (auto down = allowed(s3m::ObjectPrefix(parsed->bucket_id, parsed->object_key))) return down;
  return allowed(s3m::ObjectEnd(parsed->bucket_id, parsed->object_key));
}

}  // namespace tessera::node
