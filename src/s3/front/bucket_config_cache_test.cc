// Goal: the bucket configuration cache answers copies younger than its TTL
// only, never caches a read that an invalidation overtook, and holds at
// most its bound of entries.
#include "s3/front/bucket_config_cache.h"

#include <gtest/gtest.h>

namespace tessera::s3::front {
namespace {

using std::chrono::milliseconds;
using Clock = BucketConfigCache::Clock;

BucketConfigCache::Config WithOrigin(const std::string& origin) {
  auto config = std::make_shared<pb::BucketConfig>();
  config->add_cors_rules()->add_allowed_origins(origin);
  return config;
}

TEST(BucketConfigCache, AnswersUntilTheTtlExpires) {
  BucketConfigCache cache(10, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(cache.Find(1, t0).has_value());
  cache.Put(1, WithOrigin("a"), cache.FetchToken(), t0);
  auto hit = cache.Find(1, t0 + milliseconds(999));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ((*hit)->cors_rules(0).allowed_origins(0), "a");
  EXPECT_FALSE(cache.Find(1, t0 + milliseconds(1000)).has_value());
  EXPECT_FALSE(cache.Find(2, t0).has_value());
}

TEST(BucketConfigCache, AReadOvertakenByAnInvalidationIsNotCached) {
  BucketConfigCache cache(10, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  cache.Put(1, WithOrigin("old"), cache.FetchToken(), t0);
  const uint64_t token = cache.FetchToken();  // a read starts
  cache.Invalidate(1);                         // a write through this router
  EXPECT_FALSE(cache.Find(1, t0).has_value());
  cache.Put(1, WithOrigin("old"), token, t0);  // the read answers the old record
  EXPECT_FALSE(cache.Find(1, t0).has_value());
  cache.Put(1, WithOrigin("new"), cache.FetchToken(), t0);
  ASSERT_TRUE(cache.Find(1, t0).has_value());
  EXPECT_EQ((*cache.Find(1, t0))->cors_rules(0).allowed_origins(0), "new");
}

TEST(BucketConfigCache, BoundedAndTtlZeroCachesNothing) {
  BucketConfigCache cache(3, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  for (uint64_t b = 1; b <= 10; ++b) {
    cache.Put(b, WithOrigin("x"), cache.FetchToken(), t0);
    EXPECT_LE(cache.size(), 3u);
  }
  EXPECT_TRUE(cache.Find(10, t0).has_value());
  BucketConfigCache off(3, milliseconds(0));
  off.Put(1, WithOrigin("x"), off.FetchToken(), t0);
  EXPECT_FALSE(off.Find(1, t0).has_value());
}

}  // namespace
}  // namespace tessera::s3::front
