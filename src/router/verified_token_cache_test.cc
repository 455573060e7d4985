// Goal: the cache answers exactly as VerifyToken would (same access key,
// expiry re-checked on every hit, refusals never cached) and stays bounded.
#include "router/verified_token_cache.h"

#include <gtest/gtest.h>

namespace tessera::router {
namespace {

const Credential kAlice{"alice", "alice-secret-0123456789"};

CredentialStore Store() {
  CredentialStore store;
  EXPECT_TRUE(store.Add(kAlice).ok());
  return store;
}

// Goal: a hit returns the verified access key until the token's expiry, and
// an expired token is refused with Timeout like VerifyToken.
TEST(VerifiedTokenCache, HitsAnswerUntilExpiry) {
  const CredentialStore store = Store();
  VerifiedTokenCache cache;
  const std::string token = IssueToken(kAlice, 2000);
  Result<VerifiedToken> first = cache.Verify(store, token, 1000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->access_key, "alice");
  EXPECT_EQ(cache.size(), 1u);
  Result<VerifiedToken> hit = cache.Verify(store, token, 1999);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->access_key, "alice");
  EXPECT_EQ(cache.Verify(store, token, 2000).status().code(), StatusCode::kTimeout);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Verify(store, token, 2000).status().code(), StatusCode::kTimeout);
}

// Goal: refused tokens are never cached and are refused with VerifyToken's
// code each time, even right after the genuine token was cached.
TEST(VerifiedTokenCache, RefusalsAreNeverCached) {
  const CredentialStore store = Store();
  VerifiedTokenCache cache;
  const std::string token = IssueToken(kAlice, 2000);
  ASSERT_TRUE(cache.Verify(store, token, 1000).ok());
  std::string forged = token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cache.Verify(store, forged, 1000).status().code(), StatusCode::kConflict);
    EXPECT_EQ(cache.Verify(store, "tk1.garbage", 1000).status().code(),
              StatusCode::kInvalidArgument);
    const Credential unknown{"mallory", "mallory-secret-0123456789"};
    EXPECT_EQ(cache.Verify(store, IssueToken(unknown, 2000), 1000).status().code(),
              StatusCode::kNotFound);
  }
  EXPECT_EQ(cache.size(), 1u);
}

// Goal: the cache never holds more than its capacity; tokens still verify
// after it was emptied.
TEST(VerifiedTokenCache, StaysWithinCapacity) {
  const CredentialStore store = Store();
  VerifiedTokenCache cache(3);
  for (int64_t expiry = 2000; expiry < 2010; ++expiry) {
    ASSERT_TRUE(cache.Verify(store, IssueToken(kAlice, expiry), 1000).ok());
    EXPECT_LE(cache.size(), 3u);
  }
  Result<VerifiedToken> again = cache.Verify(store, IssueToken(kAlice, 2000), 1000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->expiry_unix, 2000);
}

}  // namespace
}  // namespace tessera::router
