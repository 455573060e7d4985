// Goal: the route cache finds ranges, refreshes and invalidates entries, and
// the resolver keeps MemDS traffic at one lookup per resolution whether the
// cache is cold or warm, with a bounded number of asynchronous refreshes.
#include <gtest/gtest.h>

#include <deque>

#include "router/route_cache.h"
#include "router/route_resolver.h"
#include "router/router_test_util.h"

namespace tessera::router {
namespace {

pb::PartitionDescriptor Part(const std::string& table, const std::string& start,
                             const std::string& end, uint64_t group, uint64_t epoch = 1) {
  pb::PartitionDescriptor p;
  p.set_table(table);
  p.set_start_key(start);
  p.set_end_key(end);
  p.set_group_id(group);
  p.set_epoch(epoch);
  for (uint32_t node : {1u, 2u, 3u}) p.add_replicas()->set_node_id(node);
  return p;
}

TEST(RouteCacheTest, FindsTheRangeHoldingAKey) {
  RouteCache cache;
  cache.Update(Part("t", "", "g", 1));
  cache.Update(Part("t", "g", "p", 2));
  cache.Update(Part("t", "p", "", 3));
  EXPECT_EQ(cache.Find("t", "")->group_id(), 1u);
  EXPECT_EQ(cache.Find("t", "a")->group_id(), 1u);
  EXPECT_EQ(cache.Find("t", "g")->group_id(), 2u);  // start inclusive
  EXPECT_EQ(cache.Find("t", "ozz")->group_id(), 2u);
  EXPECT_EQ(cache.Find("t", "p")->group_id(), 3u);   // end exclusive
  EXPECT_EQ(cache.Find("t", "\xff\xff")->group_id(), 3u);
  EXPECT_FALSE(cache.Find("other", "a").has_value());
  EXPECT_EQ(cache.size(), 3u);
}

TEST(RouteCacheTest, GapsMiss) {
  RouteCache cache;
  cache.Update(Part("t", "b", "d", 1));
  EXPECT_FALSE(cache.Find("t", "a").has_value());
  EXPECT_FALSE(cache.Find("t", "d").has_value());
  EXPECT_TRUE(cache.Find("t", "c").has_value());
}

TEST(RouteCacheTest, RefreshReplacesOverlappingRangesAfterASplit) {
  RouteCache cache;
  cache.Update(Part("t", "a", "z", 1, 1));
  // The split: [a, m) stays group 1 at a new epoch, [m, z) is group 2.
  cache.Update(Part("t", "m", "z", 2, 1));
  EXPECT_FALSE(cache.Find("t", "b").has_value()) << "the stale wide range must be gone";
  EXPECT_EQ(cache.Find("t", "q")->group_id(), 2u);
  cache.Update(Part("t", "a", "m", 1, 2));
  EXPECT_EQ(cache.Find("t", "b")->epoch(), 2u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(RouteCacheTest, OlderEpochOfTheSameGroupIsIgnored) {
  RouteCache cache;
  pb::PartitionDescriptor newer = Part("t", "", "", 7, 5);
  newer.set_leader_hint(2);
  EXPECT_TRUE(cache.Update(newer));
  EXPECT_FALSE(cache.Update(Part("t", "", "", 7, 4)));
  EXPECT_EQ(cache.Find("t", "k")->epoch(), 5u);
  EXPECT_EQ(cache.Find("t", "k")->leader_hint(), 2u);
}

TEST(RouteCacheTest, InvalidateAndLeaderHints) {
  RouteCache cache;
  cache.Update(Part("t", "", "m", 1));
  cache.Update(Part("t", "m", "", 2));
  EXPECT_FALSE(cache.Invalidate("t", "a", 99)) << "another group's entry stays";
  cache.SetLeaderHint("t", "a", 1, 3);
  EXPECT_EQ(cache.Find("t", "a")->leader_hint(), 3u);
  cache.SetLeaderHint("t", "a", 2, 2);  // wrong group: ignored
  EXPECT_EQ(cache.Find("t", "a")->leader_hint(), 3u);
  EXPECT_TRUE(cache.Invalidate("t", "a", 1));
  EXPECT_FALSE(cache.Find("t", "a").has_value());
  EXPECT_TRUE(cache.Find("t", "x").has_value());
  EXPECT_EQ(cache.size(), 1u);
}

TEST(RouteCacheTest, RefreshKeepsTheLearnedLeaderOfTheSameEpoch) {
  RouteCache cache;
  cache.Update(Part("t", "", "", 1, 4));
  cache.SetLeaderHint("t", "a", 1, 2);
  cache.Update(Part("t", "", "", 1, 4));  // MemDS knows no leader
  EXPECT_EQ(cache.Find("t", "a")->leader_hint(), 2u) << "a refresh must not cost a redirect";
  cache.Update(Part("t", "", "", 1, 5));  // the group changed: the hint may be stale
  EXPECT_EQ(cache.Find("t", "a")->leader_hint(), 0u);
}

TEST(RouteCacheTest, FullCacheStartsOver) {
  RouteCache cache(2);
  cache.Update(Part("t", "a", "b", 1));
  cache.Update(Part("t", "b", "c", 2));
  cache.Update(Part("u", "a", "b", 3));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.Find("u", "a").has_value());
}

// A PartitionLookup whose answers the test releases by hand.
class FakeLookup : public PartitionLookup {
 public:
  void Lookup(const std::string& table, const std::string& key, LookupPriority,
              PartitionCallback done) override {
    ++lookups;
    pending.push_back({table, key, std::move(done)});
  }
  // Answers the oldest pending lookup with `answer` (or the map's partition).
  void AnswerOne() {
    Pending p = std::move(pending.front());
    pending.pop_front();
    if (!answer.ok()) return p.done(answer.status());
    p.done(*answer);
  }
  void AnswerAll() {
    while (!pending.empty()) AnswerOne();
  }

  struct Pending {
    std::string table, key;
    PartitionCallback done;
  };
  std::deque<Pending> pending;
  int lookups = 0;
  Result<pb::PartitionDescriptor> answer = Part("t", "", "", 1);
};

uint64_t CounterValue(metrics::Registry& registry, const char* name) {
  return testing::SeriesValue(registry, name);
}

class RouteResolverTest : public ::testing::Test {
 protected:
  metrics::Registry registry;
  RouteCache cache;
  FakeLookup lookup;

  // Resolves and returns the answer (the fake answers misses when told).
  Result<pb::PartitionDescriptor> ResolveNow(RouteResolver& resolver, const std::string& key) {
    std::optional<Result<pb::PartitionDescriptor>> out;
    resolver.Resolve("t", key, [&](Result<pb::PartitionDescriptor> r) { out = std::move(r); });
    if (!out) lookup.AnswerOne();
    EXPECT_TRUE(out.has_value());
    return std::move(*out);
  }
};

TEST_F(RouteResolverTest, OneMemdsRequestPerResolutionColdOrWarm) {
  RouteResolver resolver(cache, lookup, registry, 16);
  // Cold: the miss asks MemDS synchronously.
  ASSERT_TRUE(ResolveNow(resolver, "a").ok());
  EXPECT_EQ(CounterValue(registry, "tessera_router_route_cache_misses_total"), 1u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_requests_total"), 1u);
  // Warm: each hit answers at once and sends one refresh.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(ResolveNow(resolver, "k" + std::to_string(i)).ok());
    lookup.AnswerAll();
  }
  EXPECT_EQ(CounterValue(registry, "tessera_router_route_cache_hits_total"), 10u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_requests_total"), 11u)
      << "MemDS requests must equal resolutions whatever the hit rate";
  EXPECT_EQ(lookup.lookups, 11);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_async_skipped_total"), 0u);
}

TEST_F(RouteResolverTest, RefreshUpdatesTheCacheFromTheAnswer) {
  RouteResolver resolver(cache, lookup, registry, 16);
  ASSERT_TRUE(ResolveNow(resolver, "a").ok());
  pb::PartitionDescriptor moved = Part("t", "", "", 1, 2);
  moved.set_leader_hint(3);
  lookup.answer = moved;
  Result<pb::PartitionDescriptor> hit = ResolveNow(resolver, "a");
  EXPECT_EQ(hit->epoch(), 1u) << "a hit answers from the cache";
  lookup.AnswerAll();
  EXPECT_EQ(cache.Find("t", "a")->epoch(), 2u);
  EXPECT_EQ(cache.Find("t", "a")->leader_hint(), 3u);
  // A table dropped at MemDS: the refresh's NotFound invalidates.
  lookup.answer = Status::NotFound("no table t");
  ASSERT_TRUE(ResolveNow(resolver, "a").ok());
  lookup.AnswerAll();
  EXPECT_FALSE(cache.Find("t", "a").has_value());
}

TEST_F(RouteResolverTest, AsyncRefreshesAreBoundedAndSkipsCounted) {
  RouteResolver resolver(cache, lookup, registry, 3);
  ASSERT_TRUE(ResolveNow(resolver, "a").ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ResolveNow(resolver, "a").ok());  // none answered
  EXPECT_EQ(resolver.async_inflight(), 3u);
  EXPECT_EQ(lookup.pending.size(), 3u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_async_requests_total"), 3u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_async_skipped_total"), 7u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_requests_total"), 4u);
  lookup.AnswerAll();
  EXPECT_EQ(resolver.async_inflight(), 0u);
  ASSERT_TRUE(ResolveNow(resolver, "a").ok());
  EXPECT_EQ(lookup.pending.size(), 1u) << "refreshes resume once answers return";
  lookup.AnswerAll();
}

TEST_F(RouteResolverTest, MissFailuresAndBadAnswersAreErrors) {
  RouteResolver resolver(cache, lookup, registry, 4);
  lookup.answer = Status::Unavailable("meta down");
  EXPECT_EQ(ResolveNow(resolver, "a").status().code(), StatusCode::kUnavailable);
  lookup.answer = Part("t", "x", "", 1);  // does not hold "a"
  EXPECT_EQ(ResolveNow(resolver, "a").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(CounterValue(registry, "tessera_router_memds_errors_total"), 2u);
}

}  // namespace
}  // namespace tessera::router
