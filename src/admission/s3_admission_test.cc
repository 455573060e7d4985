// Goal: the S3 admission policy refuses with Throttled exactly when a
// bucket's or a user's budget is empty, charges both budgets or neither,
// keeps other buckets and users unaffected, treats rate 0 as unlimited,
// honours a per-bucket rate set through the GAC seam, stays within its
// memory bound, and counts admitted/throttled per scope.
#include "admission/s3_admission.h"

#include <gtest/gtest.h>

namespace tessera::admission {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class S3AdmissionTest : public ::testing::Test {
 protected:
  std::unique_ptr<S3Admission> Make(S3AdmissionOptions options) {
    return std::make_unique<S3Admission>(options, metrics_, [this] { return now_; });
  }
  // The value of `name`{scope="scope"} in the Prometheus text, or -1.
  double Counter(const std::string& name, const std::string& scope) {
    const std::string text = metrics_.RenderText();
    const std::string series = name + "{scope=\"" + scope + "\"} ";
    const size_t at = text.find(series);
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size()));
  }

  metrics::Registry metrics_;
  Clock::time_point now_ = Clock::time_point(seconds(500));
};

S3AdmissionOptions Limited(double bucket_rate, double bucket_burst, double user_rate,
                           double user_burst) {
  S3AdmissionOptions o;
  o.bucket_rate_per_s = bucket_rate;
  o.bucket_burst = bucket_burst;
  o.user_rate_per_s = user_rate;
  o.user_burst = user_burst;
  return o;
}

TEST_F(S3AdmissionTest, BucketBudgetThrottlesOnlyThatBucket) {
  auto a = Make(Limited(2, 3, 0, 0));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(a->Admit("ann", "hot").ok()) << i;
  const Status refused = a->Admit("ann", "hot");
  EXPECT_EQ(refused.code(), StatusCode::kThrottled);
  EXPECT_NE(refused.message().find("bucket 'hot'"), std::string::npos);
  EXPECT_TRUE(a->Admit("ann", "cold").ok());
  EXPECT_TRUE(a->Admit("bob", "cold").ok());
  EXPECT_TRUE(a->Admit("ann", "").ok());  // service level: no bucket budget
  now_ += milliseconds(500);              // one token back
  EXPECT_TRUE(a->Admit("ann", "hot").ok());
  EXPECT_FALSE(a->Admit("ann", "hot").ok());
  EXPECT_EQ(Counter("tessera_router_admission_throttled_total", "bucket"), 2);
  EXPECT_EQ(Counter("tessera_router_admission_admitted_total", "bucket"), 6);
  EXPECT_EQ(Counter("tessera_router_admission_admitted_total", "user"), 0);  // unlimited
}

TEST_F(S3AdmissionTest, UserBudgetSpansBuckets) {
  auto a = Make(Limited(0, 0, 1, 2));
  EXPECT_TRUE(a->Admit("ann", "b1").ok());
  EXPECT_TRUE(a->Admit("ann", "b2").ok());
  const Status refused = a->Admit("ann", "b3");
  EXPECT_EQ(refused.code(), StatusCode::kThrottled);
  EXPECT_NE(refused.message().find("user 'ann'"), std::string::npos);
  EXPECT_TRUE(a->Admit("bob", "b3").ok());
  EXPECT_EQ(Counter("tessera_router_admission_throttled_total", "user"), 1);
}

TEST_F(S3AdmissionTest, RefusalChargesNeitherBudget) {
  auto a = Make(Limited(10, 2, 10, 1));
  EXPECT_TRUE(a->Admit("ann", "b").ok());   // bucket 1 left, ann 0 left
  EXPECT_FALSE(a->Admit("ann", "b").ok());  // ann empty: bucket not drained
  EXPECT_TRUE(a->Admit("bob", "b").ok());   // the bucket's last token
  EXPECT_FALSE(a->Admit("carl", "b").ok());  // bucket empty: carl not drained
  EXPECT_TRUE(a->Admit("carl", "other").ok());
}

TEST_F(S3AdmissionTest, ZeroMeansUnlimited) {
  auto a = Make(Limited(0, 0, 0, 0));
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(a->Admit("ann", "b").ok());
  EXPECT_EQ(a->tracked_buckets(), 0u);
  EXPECT_EQ(a->tracked_users(), 0u);
}

TEST_F(S3AdmissionTest, BurstZeroIsOneSecondOfRate) {
  auto a = Make(Limited(4, 0, 0, 0));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(a->Admit("ann", "b").ok());
  EXPECT_FALSE(a->Admit("ann", "b").ok());
}

TEST_F(S3AdmissionTest, DefaultsDoNotBiteNormalUse) {
  auto a = Make(S3AdmissionOptions{});
  for (int i = 0; i < 5'000; ++i) ASSERT_TRUE(a->Admit("ann", "b").ok());
}

TEST_F(S3AdmissionTest, GacSeamSetsOneBucketsRate) {
  auto a = Make(Limited(100, 2, 0, 0));
  a->SetBucketRate("slow", 1);  // before the budget exists
  EXPECT_TRUE(a->Admit("ann", "slow").ok());
  EXPECT_TRUE(a->Admit("ann", "slow").ok());
  EXPECT_FALSE(a->Admit("ann", "slow").ok());
  now_ += milliseconds(100);  // 10 tokens at the default, 0.1 at 1/s
  EXPECT_FALSE(a->Admit("ann", "slow").ok());
  EXPECT_TRUE(a->Admit("ann", "fast").ok());
  now_ += seconds(1);
  EXPECT_TRUE(a->Admit("ann", "slow").ok());
  EXPECT_FALSE(a->Admit("ann", "slow").ok());
  a->ClearBucketRate("slow");  // back to the default from now on
  now_ += milliseconds(10);
  EXPECT_TRUE(a->Admit("ann", "slow").ok());
  a->SetBucketRate("slow", 0);  // an existing budget: no refill at all
  now_ += seconds(100);
  EXPECT_FALSE(a->Admit("ann", "slow").ok());
  EXPECT_TRUE(a->Admit("ann", "fast").ok());
}

TEST_F(S3AdmissionTest, MemoryStaysBounded) {
  S3AdmissionOptions o = Limited(1, 1, 1, 1);
  o.tracked_max = 64;
  auto a = Make(o);
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_TRUE(a->Admit("u" + std::to_string(i), "b" + std::to_string(i)).ok());
  }
  EXPECT_LE(a->tracked_buckets(), 64u);
  EXPECT_LE(a->tracked_users(), 64u);
}

TEST_F(S3AdmissionTest, IdleBudgetsAreForgottenFirst) {
  S3AdmissionOptions o = Limited(1, 1, 0, 0);
  o.tracked_max = limits::kAdmissionShards;  // one budget per shard
  auto a = Make(o);
  EXPECT_TRUE(a->Admit("ann", "busy").ok());
  EXPECT_FALSE(a->Admit("ann", "busy").ok());
  // Other names take the shards; "busy" is not full, so it is kept unless
  // its own shard must start over, which only happens with no idle budget.
  now_ += seconds(2);  // now every budget is full again: all idle
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(a->Admit("ann", "n" + std::to_string(i)).ok());
  EXPECT_LE(a->tracked_buckets(), limits::kAdmissionShards);
}

TEST(S3AdmissionOptions, Validation) {
  S3AdmissionOptions o;
  EXPECT_TRUE(ValidateS3AdmissionOptions(o).ok());
  o.bucket_rate_per_s = -1;
  EXPECT_EQ(ValidateS3AdmissionOptions(o).code(), StatusCode::kInvalidArgument);
  o.bucket_rate_per_s = 1;
  o.user_burst = 1e12;
  EXPECT_EQ(ValidateS3AdmissionOptions(o).code(), StatusCode::kInvalidArgument);
  o.user_burst = 1;
  o.tracked_max = 0;
  EXPECT_EQ(ValidateS3AdmissionOptions(o).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::admission
