// Goal: the after-heal blob check fails on a referenced blob with no copy
// left and on a check that could not look, and only reports what the
// sweeper repairs or collects later.
#include "experiment/blob_check.h"

#include <gtest/gtest.h>

namespace tessera::experiment {
namespace {

cli::S3CheckReport Clean() {
  cli::S3CheckReport r;
  r.referenced_blobs = 10;
  r.copies[3] = 10;
  return r;
}

TEST(BlobCheckTest, ACleanCheckPasses) {
  const pb::CheckerResult r = JudgeBlobCheck(Clean());
  EXPECT_EQ(r.name(), kBlobCheckName);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.summary().rfind("clean: 10 referenced blobs", 0), 0u) << r.summary();
}

TEST(BlobCheckTest, ALostBlobFails) {
  cli::S3CheckReport report = Clean();
  report.copies[3] = 9;
  report.copies[0] = 1;
  report.under_replicated = 1;
  report.healthy = false;
  report.problems = {"blob 0001-abc referenced, 0 copies"};
  const pb::CheckerResult r = JudgeBlobCheck(report);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("1 referenced blobs have no copy left"), std::string::npos);
  EXPECT_NE(r.summary().find("0001-abc"), std::string::npos) << r.summary();
}

TEST(BlobCheckTest, RepairableAndCollectableFindingsAreReportedNotFailed) {
  cli::S3CheckReport report = Clean();
  report.copies[3] = 8;
  report.copies[2] = 2;
  report.under_replicated = 2;
  report.unreferenced_files = 6;
  report.healthy = false;
  const pb::CheckerResult r = JudgeBlobCheck(report);
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_NE(r.summary().find("2=2"), std::string::npos);
  EXPECT_NE(r.summary().find("6 unreferenced files"), std::string::npos);
}

TEST(BlobCheckTest, ACheckThatCouldNotLookFails) {
  const pb::CheckerResult r =
      JudgeBlobCheck(Result<cli::S3CheckReport>(Status::Unavailable("node 3 did not answer")));
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("node 3 did not answer"), std::string::npos);
}

}  // namespace
}  // namespace tessera::experiment
