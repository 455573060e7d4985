// Goal: ListBuckets' paginated form walks every matching bucket exactly once
// in name order, filters by prefix and region, and refuses bad arguments as
// S3 does; the legacy form (no max-buckets, no token) lists everything.
#include "s3/protocol/bucket_listing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::s3 {
namespace {

std::vector<QueryParam> Query(std::vector<std::pair<std::string, std::string>> pairs) {
  std::vector<QueryParam> out;
  for (auto& [n, v] : pairs) out.push_back(QueryParam{n, v, true});
  return out;
}

ListBucketsQuery Parse(std::vector<std::pair<std::string, std::string>> pairs) {
  auto q = ParseListBucketsQuery(Query(std::move(pairs)), "local-1");
  EXPECT_TRUE(q.ok());
  return q.ok() ? std::move(q).value() : ListBucketsQuery{};
}

std::vector<std::string> Names(const ListBucketsResult& r) {
  std::vector<std::string> out;
  for (const auto& b : r.buckets) out.push_back(b.name);
  return out;
}

const std::vector<BucketEntry> kBuckets = {
    {"delta", 4, "us-east-1"}, {"alpha", 1, "us-east-1"}, {"charlie", 3, "eu-west-1"},
    {"bravo", 2, "us-east-1"}, {"alphabet", 5, "us-east-1"}};

TEST(ListBuckets, LegacyFormListsAllInNameOrderWithoutToken) {
  const ListBucketsResult r = SelectBuckets(kBuckets, Parse({}), Owner{"u", "u"});
  EXPECT_EQ(Names(r), (std::vector<std::string>{"alpha", "alphabet", "bravo", "charlie", "delta"}));
  EXPECT_FALSE(r.continuation_token);
  EXPECT_FALSE(r.prefix);
  EXPECT_EQ(r.owner.id, "u");
}

TEST(ListBuckets, PagesVisitEveryBucketOnce) {
  for (int page = 1; page <= 6; ++page) {
    std::vector<std::string> seen;
    std::optional<std::string> token;
    for (int round = 0; round < 10; ++round) {
      std::vector<std::pair<std::string, std::string>> q = {{"max-buckets", std::to_string(page)}};
      if (token) q.emplace_back("continuation-token", *token);
      const ListBucketsResult r = SelectBuckets(kBuckets, Parse(q), Owner{});
      EXPECT_LE(r.buckets.size(), static_cast<size_t>(page));
      for (const auto& n : Names(r)) seen.push_back(n);
      token = r.continuation_token;
      if (!token) break;
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"alpha", "alphabet", "bravo", "charlie", "delta"}))
        << "page " << page;
  }
}

TEST(ListBuckets, EmptyTokenStartsAtTheBeginning) {
  const ListBucketsResult r =
      SelectBuckets(kBuckets, Parse({{"max-buckets", "1"}, {"continuation-token", ""}}), Owner{});
  EXPECT_EQ(Names(r), (std::vector<std::string>{"alpha"}));
  EXPECT_TRUE(r.continuation_token);
}

TEST(ListBuckets, PrefixAndRegionFilterAndPrefixIsEchoed) {
  ListBucketsResult r = SelectBuckets(kBuckets, Parse({{"prefix", "alpha"}}), Owner{});
  EXPECT_EQ(Names(r), (std::vector<std::string>{"alpha", "alphabet"}));
  EXPECT_EQ(r.prefix, "alpha");
  r = SelectBuckets(kBuckets, Parse({{"prefix", "ALPHA"}}), Owner{});  // case-sensitive
  EXPECT_TRUE(r.buckets.empty());
  r = SelectBuckets(kBuckets, Parse({{"bucket-region", "eu-west-1"}}), Owner{});
  EXPECT_EQ(Names(r), (std::vector<std::string>{"charlie"}));
  EXPECT_EQ(r.buckets[0].region, "eu-west-1");
}

TEST(ListBuckets, RefusesBadMaxBucketsAndTokens) {
  for (std::string bad : {"0", "10001", "-1", "x", "", "1.5"}) {
    auto q = ParseListBucketsQuery(Query({{"max-buckets", bad}}), "local-1");
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.error().code, S3ErrorCode::kInvalidArgument);
    EXPECT_TRUE(q.error().HasDetail("ArgumentName"));
  }
  EXPECT_TRUE(ParseListBucketsQuery(Query({{"max-buckets", "10000"}}), "local-1").ok());
  auto q = ParseListBucketsQuery(Query({{"continuation-token", "%%%"}}), "local-1");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, S3ErrorCode::kInvalidArgument);
  q = ParseListBucketsQuery(Query({{"bucket-region", "eu-east-1"}}), "local-1");
  ASSERT_FALSE(q.ok()) << "not a region";
  EXPECT_EQ(q.error().Message(), "Argument value eu-east-1 is not a valid AWS Region");
  EXPECT_TRUE(ParseListBucketsQuery(Query({{"bucket-region", "local-1"}}), "local-1").ok());
  EXPECT_TRUE(ParseListBucketsQuery(Query({{"bucket-region", "eu-west-1"}}), "local-1").ok());
}

}  // namespace
}  // namespace tessera::s3
