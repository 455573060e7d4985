// Goal: tokens verify only when well-formed, unexpired and signed with the
// access key's secret; credential files parse, and are created with fresh
// random keys and never overwritten; signed requests verify only when every
// signed part matches and the timestamp is within the skew window.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/limits.h"
#include "router/token.h"

namespace tessera::router {
namespace {

const Credential kAlice{"alice", "0123456789abcdef0123456789abcdef"};
const Credential kBob{"bob", "fedcba9876543210fedcba9876543210"};

CredentialStore Store() {
  CredentialStore store;
  EXPECT_TRUE(store.Add(kAlice).ok());
  EXPECT_TRUE(store.Add(kBob).ok());
  return store;
}

TEST(TokenTest, GoodTokenVerifies) {
  const std::string token = IssueToken(kAlice, 2000);
  EXPECT_EQ(token.rfind("tk1.alice.2000.", 0), 0u);
  Result<VerifiedToken> who = VerifyToken(Store(), token, 1999);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->access_key, "alice");
  EXPECT_EQ(who->expiry_unix, 2000);
}

TEST(TokenTest, KnownAnswer) {
  // HMAC-SHA256("0123456789abcdef0123456789abcdef", "alice.2000"), computed
  // independently: printf 'alice.2000' | openssl dgst -sha256 -hmac <secret>
  EXPECT_EQ(IssueToken(kAlice, 2000),
            "tk1.alice.2000.e3864415f0aadb018e0942e3da621d627b22aae7a6e558598c31cb99c43ba57e")
      << "update only after checking with openssl";
}

TEST(TokenTest, ExpiredTokenIsRefused) {
  const std::string token = IssueToken(kAlice, 2000);
  EXPECT_EQ(VerifyToken(Store(), token, 2000).status().code(), StatusCode::kTimeout);
  EXPECT_EQ(VerifyToken(Store(), token, 5000).status().code(), StatusCode::kTimeout);
}

TEST(TokenTest, TamperedTokensAreRefused) {
  const std::string token = IssueToken(kAlice, 2000);
  std::string flipped = token;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  EXPECT_EQ(VerifyToken(Store(), flipped, 1000).status().code(), StatusCode::kConflict);
  std::string later = token;
  later.replace(later.find("2000"), 4, "9000");  // extend the expiry
  EXPECT_EQ(VerifyToken(Store(), later, 1000).status().code(), StatusCode::kConflict);
  std::string as_bob = token;
  as_bob.replace(4, 5, "bob");  // claim another key
  EXPECT_EQ(VerifyToken(Store(), as_bob, 1000).status().code(), StatusCode::kConflict);
  for (const std::string& bad : std::vector<std::string>{"", "tk1.", "tk1.alice", "tk1.alice.2000", "tk2.alice.2000.00",
                                "tk1.alice.20x0." + std::string(64, 'a'),
                                "tk1.alice.2000." + std::string(63, 'a')}) {
    EXPECT_EQ(VerifyToken(Store(), bad, 1000).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(TokenTest, WrongKeyIsRefused) {
  const Credential forged{"alice", "not-alices-secret-at-all-000000"};
  EXPECT_EQ(VerifyToken(Store(), IssueToken(forged, 2000), 1000).status().code(),
            StatusCode::kConflict);
  const Credential unknown{"carol", "0123456789abcdef0123456789abcdef"};
  EXPECT_EQ(VerifyToken(Store(), IssueToken(unknown, 2000), 1000).status().code(),
            StatusCode::kNotFound);
}

TEST(CredentialsTest, ParsesTheFileFormat) {
  Result<CredentialStore> store = ParseCredentials(
      "# comment\n\nalice 0123456789abcdef0123456789abcdef\r\n  bob fedcba9876543210fedcba9876543210\n");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->size(), 2u);
  EXPECT_EQ(*store->SecretOf("bob"), kBob.secret_key);
  EXPECT_EQ(store->First().access_key, "alice");
  for (const char* bad : {"alice\n", "alice short\n", "alice 0123456789abcdef0123456789abcdef x\n",
                          "al.ice 0123456789abcdef0123456789abcdef\n",
                          "a 0123456789abcdef0123456789abcdef\na 0123456789abcdef0123456789abcdef\n"}) {
    EXPECT_FALSE(ParseCredentials(bad).ok()) << bad;
  }
}

// Goal: a tk2 token grants the tables and access it names, never more
// than its credential's grant; its grant cannot be altered; a tk1 token
// grants its credential's. No token is valid for longer than 30 days.
TEST(TokenTest, GrantTokensNarrowTheirCredential) {
  CredentialStore store = Store();
  auto carol_grant = KvGrant::Of({"a", "b"}, false);
  ASSERT_TRUE(carol_grant.ok());
  const Credential carol{"carol", "0123456789abcdef0123456789abcdef", *carol_grant};
  ASSERT_TRUE(store.Add(carol).ok());
  auto plain = VerifyToken(store, IssueToken(carol, 2000), 1000);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->grant.ToText(), "rw:a,b");
  auto asked = KvGrant::Parse("r:b,c");
  ASSERT_TRUE(asked.ok());
  const std::string token = IssueToken(carol, 2000, *asked);
  EXPECT_EQ(token.rfind("tk2.carol.2000.r:b,c.", 0), 0u) << token;
  auto narrowed = VerifyToken(store, token, 1000);
  ASSERT_TRUE(narrowed.ok()) << narrowed.status().ToString();
  EXPECT_EQ(narrowed->grant.ToText(), "r:b");  // c is not carol's to give
  std::string widened = token;
  widened.replace(widened.find("r:b,c"), 5, "rw:b,c");
  EXPECT_EQ(VerifyToken(store, widened, 1000).status().code(), StatusCode::kConflict);
  auto dotted = KvGrant::Parse("rw:x.y");
  ASSERT_TRUE(dotted.ok());
  auto alice = VerifyToken(store, IssueToken(kAlice, 2000, *dotted), 1000);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  EXPECT_TRUE(alice->grant.Allows("x.y", KvAccess::kWrite));
  EXPECT_FALSE(alice->grant.Allows("x", KvAccess::kWrite));

  const int64_t max = limits::kRouterTokenLifetimeSecondsMax;
  EXPECT_TRUE(VerifyToken(store, IssueToken(kAlice, 1000 + max), 1000).ok());
  EXPECT_EQ(VerifyToken(store, IssueToken(kAlice, 1000 + max + 1), 1000).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CredentialsTest, ParsesGrants) {
  Result<CredentialStore> store = ParseCredentials(
      "alice 0123456789abcdef0123456789abcdef tables=orders,users read-only\n"
      "bob fedcba9876543210fedcba9876543210 read-only\n"
      "carol 0123456789abcdef0123456789abcdef\n");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->GrantOf("alice")->ToText(), "r:orders,users");
  EXPECT_EQ(store->GrantOf("bob")->ToText(), "r:*");
  EXPECT_EQ(store->GrantOf("carol")->ToText(), "rw:*");
  EXPECT_EQ(store->GrantOf("dave"), nullptr);
  for (const char* bad : {"alice 0123456789abcdef0123456789abcdef tables=_s3\n",
                          "alice 0123456789abcdef0123456789abcdef tables=\n",
                          "alice 0123456789abcdef0123456789abcdef read-only read-only\n",
                          "alice 0123456789abcdef0123456789abcdef tables=a tables=b\n",
                          "alice 0123456789abcdef0123456789abcdef readonly\n"}) {
    EXPECT_FALSE(ParseCredentials(bad).ok()) << bad;
  }
}

TEST(CredentialsTest, CreatesRandomKeysOnceWithMode0600) {
  const std::string dir = ::testing::TempDir() + "/creds-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/credentials";
  std::filesystem::remove(path);
  Result<Credential> created = CreateCredentialsFile(path);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(CreateCredentialsFile(path).status().code(), StatusCode::kConflict);
  Result<Credential> ensured = EnsureCredentialsFile(path);
  ASSERT_TRUE(ensured.ok());
  EXPECT_EQ(ensured->secret_key, created->secret_key);
  Result<CredentialStore> loaded = LoadCredentials(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded->SecretOf(created->access_key), created->secret_key);
  Result<std::string> token = IssueTokenFromDir(dir, 60, 1000);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(IssueTokenFromDir(dir, limits::kRouterTokenLifetimeSecondsMax + 1, 1000).status().code(),
            StatusCode::kInvalidArgument);
  auto only_t = KvGrant::Of({"t"}, true);
  ASSERT_TRUE(only_t.ok());
  Result<std::string> narrow = IssueTokenFromDir(dir, 60, 1000, "", *only_t);
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
  EXPECT_EQ(VerifyToken(*loaded, *narrow, 1000)->grant.ToText(), "r:t");
  EXPECT_EQ(VerifyToken(*loaded, *token, 1059)->access_key, created->access_key);
  EXPECT_FALSE(VerifyToken(*loaded, *token, 1060).ok());
  Result<Credential> other = GenerateCredential();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->secret_key, created->secret_key);
  std::filesystem::remove_all(dir);
}

TEST(SignedRequestTest, KnownAnswerAndRoundTrip) {
  const SignedParts request{"PUT", "/kv/t/a%20b", "x=1&y=2", "hello"};
  // Python: hmac.new(secret, ("TK1-HMAC-SHA256\n1700000000\nPUT\n/kv/t/a%20b\n"
  //   "x=1&y=2\ncontent-type:\nif-match:\nif-none-match:\n" +
  //   sha256(b"hello").hexdigest()).encode(), sha256).hexdigest()
  EXPECT_EQ(SignRequest(kAlice, request, 1'700'000'000),
            "TK1-HMAC-SHA256 Credential=alice, Timestamp=1700000000, "
            "Signature=2cd373309685bc15426f96b393c157cf6da44c7d2c6d3df05c43aa7801ce440d");
  Result<std::string> who =
      VerifySignedRequest(Store(), SignRequest(kBob, request, 1'700'000'000), request, 1'700'000'100);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(*who, "bob");
}

TEST(SignedRequestTest, EveryPartIsCoveredAndSkewIsBounded) {
  const SignedParts request{"PUT", "/kv/t/k", "", "body", "", "7", ""};
  const int64_t now = 1'700'000'000;
  const std::string header = SignRequest(kAlice, request, now);
  const CredentialStore store = Store();
  for (const SignedParts& other : {SignedParts{"GET", "/kv/t/k", "", "body"},
                                   SignedParts{"PUT", "/kv/t/j", "", "body"},
                                   SignedParts{"PUT", "/kv/t/k", "a=1", "body"},
                                   SignedParts{"PUT", "/kv/t/k", "", "bodY"},
                                   // A condition stripped, changed or added on replay:
                                   SignedParts{"PUT", "/kv/t/k", "", "body", "", "", ""},
                                   SignedParts{"PUT", "/kv/t/k", "", "body", "", "8", ""},
                                   SignedParts{"PUT", "/kv/t/k", "", "body", "", "7", "*"},
                                   SignedParts{"PUT", "/kv/t/k", "", "body", "application/json", "7", ""}}) {
    EXPECT_EQ(VerifySignedRequest(store, header, other, now).status().code(), StatusCode::kConflict);
  }
  const int64_t skew = limits::kRouterSignatureSkewSecondsMax;
  EXPECT_TRUE(VerifySignedRequest(store, header, request, now + skew).ok());
  EXPECT_TRUE(VerifySignedRequest(store, header, request, now - skew).ok());
  EXPECT_EQ(VerifySignedRequest(store, header, request, now + skew + 1).status().code(), StatusCode::kTimeout);
  EXPECT_EQ(VerifySignedRequest(store, header, request, now - skew - 1).status().code(), StatusCode::kTimeout);
  const std::string mallory = SignRequest(Credential{"mallory", kAlice.secret_key}, request, now);
  EXPECT_EQ(VerifySignedRequest(store, mallory, request, now).status().code(), StatusCode::kNotFound);
  for (const std::string bad : {"TK1-HMAC-SHA256", "TK1-HMAC-SHA256 Credential=alice",
                                "TK1-HMAC-SHA256 Credential=alice, Timestamp=x1, Signature=00",
                                "Bearer tk1.alice.1.00"}) {
    EXPECT_EQ(VerifySignedRequest(store, bad, request, now).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tessera::router
