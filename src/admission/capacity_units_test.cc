// Goal: every KV and S3 operation costs the units docs/admission.md states:
// a read unit per started 4 KiB (half for eventual), a write unit per
// started 1 KiB, a minimum of one unit (half) for an operation touching
// nothing, and conditions charged as write units.
#include "admission/capacity_units.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::admission {
namespace {

TEST(CapacityUnits, ReadsByStartedFourKiB) {
  struct Row {
    uint64_t bytes;
    double strong;
    double eventual;
  };
  const std::vector<Row> rows = {
      {0, 1, 0.5},        {1, 1, 0.5},        {4096, 1, 0.5},         {4097, 2, 1},
      {8192, 2, 1},       {8193, 3, 1.5},     {1 << 20, 256, 128},
  };
  for (const Row& r : rows) {
    EXPECT_DOUBLE_EQ(ReadUnits(r.bytes, ReadConsistency::kStrong), r.strong) << r.bytes;
    EXPECT_DOUBLE_EQ(ReadUnits(r.bytes, ReadConsistency::kEventual), r.eventual) << r.bytes;
  }
}

TEST(CapacityUnits, WritesByStartedKiB) {
  const std::vector<std::pair<uint64_t, double>> rows = {
      {0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {2048, 2}, {2049, 3}, {400 << 10, 400}};
  for (const auto& [bytes, units] : rows) EXPECT_DOUBLE_EQ(WriteUnits(bytes), units) << bytes;
}

TEST(CapacityUnits, BatchesSumTheirWritesAndConditions) {
  const std::vector<uint64_t> none;
  EXPECT_DOUBLE_EQ(BatchWriteUnits(none, 0), 1);  // the minimum
  EXPECT_DOUBLE_EQ(BatchWriteUnits(none, 3), 3);  // conditions only
  const std::vector<uint64_t> writes = {10, 1024, 1025, 3000};
  EXPECT_DOUBLE_EQ(BatchWriteUnits(writes, 0), 1 + 1 + 2 + 3);
  EXPECT_DOUBLE_EQ(BatchWriteUnits(writes, 2), 1 + 1 + 2 + 3 + 2);
}

TEST(CapacityUnits, S3OperationsAsDocumented) {
  struct Row {
    S3Operation op;
    uint64_t bytes;
    uint64_t records;
    double read;
    double write;
  };
  const std::vector<Row> rows = {
      {S3Operation::kHeadObject, 0, 0, 1, 0},
      {S3Operation::kGetObject, 0, 0, 1, 0},
      {S3Operation::kGetObject, 10'000, 0, 1, 0},  // object bytes are the blob store's
      {S3Operation::kPutObject, 300, 0, 0, 1},
      {S3Operation::kPutObject, 2500, 0, 0, 3},    // a record with 2 KiB of user metadata
      {S3Operation::kDeleteObject, 0, 0, 0, 1},
      {S3Operation::kCopyObject, 4096, 0, 1, 4},
      {S3Operation::kListObjects, 0, 0, 1, 0},
      {S3Operation::kListObjects, 9000, 0, 3, 0},
      {S3Operation::kCreateMultipartUpload, 0, 0, 0, 1},
      {S3Operation::kUploadPart, 5 << 20, 0, 0, 1},
      {S3Operation::kCompleteMultipartUpload, 0, 3, 3, 4},
      {S3Operation::kAbortMultipartUpload, 0, 3, 0, 4},
      {S3Operation::kHeadBucket, 0, 0, 1, 0},
      {S3Operation::kCreateBucket, 0, 0, 1, 1},
      {S3Operation::kDeleteBucket, 0, 0, 1, 1},
      {S3Operation::kReadConfig, 0, 0, 1, 0},
      {S3Operation::kWriteConfig, 0, 0, 0, 1},
  };
  for (const Row& r : rows) {
    const S3Charge c = S3OperationUnits(r.op, r.bytes, r.records);
    EXPECT_DOUBLE_EQ(c.read_units, r.read) << static_cast<int>(r.op);
    EXPECT_DOUBLE_EQ(c.write_units, r.write) << static_cast<int>(r.op);
  }
  EXPECT_EQ(BucketGacName("logs"), "s3:logs");
}

}  // namespace
}  // namespace tessera::admission
