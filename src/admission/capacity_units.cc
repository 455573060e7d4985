#include "admission/capacity_units.h"

namespace tessera::admission {
namespace {

// Started `unit_bytes` blocks in `bytes`, at least one.
uint64_t BlocksOf(uint64_t bytes, uint64_t unit_bytes) {
  const uint64_t blocks = bytes / unit_bytes + (bytes % unit_bytes != 0 ? 1 : 0);
  return blocks == 0 ? 1 : blocks;
}

// Strong reads of an object's metadata record (one item, under 4 KiB).
constexpr double kRecordRead = 1;
// Writes of one metadata record (an object, part or bucket record, under 1 KiB).
constexpr double kRecordWrite = 1;

}  // namespace

double ReadUnits(uint64_t bytes, ReadConsistency consistency) {
  const double units = static_cast<double>(BlocksOf(bytes, kReadUnitBytes));
  return consistency == ReadConsistency::kStrong ? units : units / 2;
}

double WriteUnits(uint64_t bytes) { return static_cast<double>(BlocksOf(bytes, kWriteUnitBytes)); }

double BatchWriteUnits(std::span<const uint64_t> write_bytes, uint64_t conditions) {
  double units = static_cast<double>(conditions);
  for (uint64_t bytes : write_bytes) units += WriteUnits(bytes);
  return units < 1 ? 1 : units;
}

S3Charge S3OperationUnits(S3Operation operation, uint64_t record_bytes, uint64_t records) {
  const double record_write = WriteUnits(record_bytes);
  const double parts = static_cast<double>(records);
  switch (operation) {
    case S3Operation::kHeadObject:
    case S3Operation::kHeadBucket:
    case S3Operation::kGetObject:
    case S3Operation::kReadConfig: return {kRecordRead, 0};
    case S3Operation::kPutObject:
    case S3Operation::kCreateMultipartUpload: return {0, record_write};
    case S3Operation::kDeleteObject:
    case S3Operation::kUploadPart:
    case S3Operation::kWriteConfig: return {0, kRecordWrite};
    case S3Operation::kCopyObject: return {kRecordRead, record_write};
    case S3Operation::kListObjects: return {ReadUnits(record_bytes, ReadConsistency::kStrong), 0};
    case S3Operation::kCompleteMultipartUpload: return {kRecordRead * parts, kRecordWrite * (parts + 1)};
    case S3Operation::kAbortMultipartUpload: return {0, kRecordWrite * (parts + 1)};
    case S3Operation::kCreateBucket:
    case S3Operation::kDeleteBucket: return {kRecordRead, kRecordWrite};
  }
  return {};
}

std::string BucketGacName(std::string_view bucket) { return "s3:" + std::string(bucket); }

}  // namespace tessera::admission
