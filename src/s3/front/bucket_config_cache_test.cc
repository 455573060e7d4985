// Goal: the bucket configuration cache answers copies younger than its TTL
// only, never caches a read that an invalidation overtook, holds at most
// its bound of entries, and parses a record's policy once (the same facts
// object until the policy or public access block changes).
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
  cache.Put(1, "b", WithOrigin("a"), cache.FetchToken(), t0);
  auto hit = cache.Find(1, t0 + milliseconds(999));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record->cors_rules(0).allowed_origins(0), "a");
  EXPECT_FALSE(cache.Find(1, t0 + milliseconds(1000)).has_value());
  EXPECT_FALSE(cache.Find(2, t0).has_value());
}

TEST(BucketConfigCache, AReadOvertakenByAnInvalidationIsNotCached) {
  BucketConfigCache cache(10, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  cache.Put(1, "b", WithOrigin("old"), cache.FetchToken(), t0);
  const uint64_t token = cache.FetchToken();  // a read starts
  cache.Invalidate(1);                         // a write through this router
  EXPECT_FALSE(cache.Find(1, t0).has_value());
  cache.Put(1, "b", WithOrigin("old"), token, t0);  // the read answers the old record
  EXPECT_FALSE(cache.Find(1, t0).has_value());
  cache.Put(1, "b", WithOrigin("new"), cache.FetchToken(), t0);
  ASSERT_TRUE(cache.Find(1, t0).has_value());
  EXPECT_EQ(cache.Find(1, t0)->record->cors_rules(0).allowed_origins(0), "new");
}

TEST(BucketConfigCache, BoundedAndTtlZeroCachesNothing) {
  BucketConfigCache cache(3, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  for (uint64_t b = 1; b <= 10; ++b) {
    cache.Put(b, "b", WithOrigin("x"), cache.FetchToken(), t0);
    EXPECT_LE(cache.size(), 3u);
  }
  EXPECT_TRUE(cache.Find(10, t0).has_value());
  BucketConfigCache off(3, milliseconds(0));
  off.Put(1, "b", WithOrigin("x"), off.FetchToken(), t0);
  EXPECT_FALSE(off.Find(1, t0).has_value());
}

std::shared_ptr<pb::BucketConfig> WithPolicy(const std::string& sid, bool restrict_public = false) {
  auto config = std::make_shared<pb::BucketConfig>();
  config->set_policy(R"({"Version":"2012-10-17","Statement":[{"Sid":")" + sid +
                     R"(","Effect":"Allow","Principal":"*","Action":"s3:GetObject",)"
                     R"("Resource":"arn:aws:s3:::b/*"}]})");
  config->add_cors_rules()->add_allowed_origins(sid);
  if (restrict_public) config->mutable_public_access_block()->set_restrict_public_buckets(true);
  return config;
}

TEST(BucketConfigCache, ParsesAPolicyOncePerRecord) {
  BucketConfigCache cache(10, milliseconds(1000));
  const Clock::time_point t0 = Clock::now();
  const BucketConfigCache::Cached put = cache.Put(1, "b", WithPolicy("one"), cache.FetchToken(), t0);
  ASSERT_NE(put.facts->policy, nullptr);
  EXPECT_EQ(put.facts->policy->statements.at(0).sid, "one");
  EXPECT_TRUE(put.facts->policy_public);
  // Every hit answers the same parsed object.
  const auto hit1 = cache.Find(1, t0 + milliseconds(1));
  const auto hit2 = cache.Find(1, t0 + milliseconds(2));
  ASSERT_TRUE(hit1 && hit2);
  EXPECT_EQ(hit1->facts.get(), put.facts.get());
  EXPECT_EQ(hit2->facts->policy.get(), put.facts->policy.get());
  // A refetch of an equal policy after the TTL keeps it, even with other CORS rules.
  auto same = WithPolicy("one");
  same->mutable_cors_rules(0)->add_allowed_origins("x");
  const auto refetched = cache.Put(1, "b", same, cache.FetchToken(), t0 + milliseconds(1500));
  EXPECT_EQ(refetched.facts.get(), put.facts.get());
  EXPECT_EQ(refetched.record.get(), same.get());
  // A changed policy, or a changed public access block, gets new facts.
  const auto changed = cache.Put(1, "b", WithPolicy("two"), cache.FetchToken(), t0);
  EXPECT_NE(changed.facts.get(), put.facts.get());
  EXPECT_EQ(changed.facts->policy->statements.at(0).sid, "two");
  EXPECT_EQ(cache.Find(1, t0)->facts.get(), changed.facts.get());
  const auto blocked = cache.Put(1, "b", WithPolicy("two", true), cache.FetchToken(), t0);
  EXPECT_NE(blocked.facts.get(), changed.facts.get());
  EXPECT_TRUE(blocked.facts->public_access_block.restrict_public_buckets);
  // No policy: no parsed object.
  EXPECT_EQ(cache.Put(2, "b", WithOrigin("a"), cache.FetchToken(), t0).facts->policy, nullptr);
}

TEST(BucketConfigCache, AnUnreadablePolicyDeniesEverything) {
  BucketConfigCache cache(10, milliseconds(1000));
  auto config = std::make_shared<pb::BucketConfig>();
  config->set_policy("{not json");
  const auto put = cache.Put(1, "b", config, cache.FetchToken(), Clock::now());
  ASSERT_NE(put.facts->policy, nullptr);
  ASSERT_EQ(put.facts->policy->statements.size(), 1u);
  EXPECT_EQ(put.facts->policy->statements[0].effect, authz::Effect::kDeny);
}

}  // namespace
}  // namespace tessera::s3::front
