// Goal: the registry half of the MemDS rebuilds from and follows the meta
// state's "b/", "bid/", "u/", "k/" keys, answers with its version, ignores
// other keys, and rejects a corrupt value without changing anything.
#include "meta/registry_memds.h"

#include <gtest/gtest.h>

#include "meta/registry_keys.h"
#include "s3/protocol/names.h"

namespace tessera::meta {
namespace {

KeyChange Bucket(const std::string& name, uint64_t id, const std::string& owner) {
  pb::BucketDescriptor d;
  d.set_name(name);
  d.set_bucket_id(id);
  d.set_owner(owner);
  d.set_region("us-east-1");
  return KeyChange{BucketKey(name), d.SerializeAsString()};
}

KeyChange Id(uint64_t id, const std::string& name) { return KeyChange{BucketIdKey(id), name}; }

std::vector<KeyChange> User(const std::string& name, const std::string& ak, const std::string& sk) {
  pb::UserRecord u;
  u.set_name(name);
  u.set_created_ms(1000);
  u.add_access_keys(ak);
  pb::AccessKeyRecord k;
  k.set_access_key(ak);
  k.set_secret_key(sk);
  k.set_user(name);
  k.set_created_ms(1000);
  return {KeyChange{UserKey(name), u.SerializeAsString()},
          KeyChange{AccessKeyKey(ak), k.SerializeAsString()}};
}

TEST(RegistryMemds, ResetThenAnswers) {
  RegistryMemds r;
  std::vector<KeyChange> state = {Bucket("alpha", 7, "ann"), Id(7, "alpha"),
                                  Bucket("beta", 9, "bob"),  Id(9, "beta"),
                                  Id(3, "gone"),             KeyChange{"t/kv", "not ours"}};
  for (auto& c : User("ann", "AKANN", "secret-of-ann-0123")) state.push_back(c);
  ASSERT_TRUE(r.Reset(state, 40).ok());
  EXPECT_EQ(r.version(), 40u);

  auto alpha = r.GetBucket("alpha");
  EXPECT_TRUE(alpha.found());
  EXPECT_EQ(alpha.bucket().bucket_id(), 7u);
  EXPECT_EQ(alpha.map_version(), 40u);
  auto none = r.GetBucket("nope");
  EXPECT_FALSE(none.found());
  EXPECT_EQ(none.map_version(), 40u);

  EXPECT_EQ(r.ListBuckets("").buckets_size(), 2);
  auto anns = r.ListBuckets("ann");
  ASSERT_EQ(anns.buckets_size(), 1);
  EXPECT_EQ(anns.buckets(0).name(), "alpha");

  EXPECT_TRUE(r.BucketIdUsed(3));  // ids stay used after their bucket is gone
  EXPECT_FALSE(r.BucketIdUsed(4));
  auto live = r.LiveBucketIds();
  EXPECT_EQ(live, (std::vector<uint64_t>{7, 9}));

  auto key = r.GetUserByKey("AKANN");
  EXPECT_TRUE(key.found());
  EXPECT_EQ(key.name(), "ann");
  EXPECT_EQ(key.secret_key(), "secret-of-ann-0123");
  EXPECT_FALSE(r.GetUserByKey("AKNONE").found());
  auto users = r.ListUsers();
  ASSERT_EQ(users.users_size(), 1);
  EXPECT_EQ(users.users(0).access_keys(0), "AKANN");
}

// Goal: meta.find_user finds a user by its (normalized) email or by its
// canonical id (stored, or derived for records without one), and nobody
// for an unknown address or id.
TEST(RegistryMemds, FindUserByEmailOrCanonicalId) {
  RegistryMemds r;
  std::vector<KeyChange> state = User("ann", "AKANN", "secret-of-ann-0123");
  pb::UserRecord ann;
  ASSERT_TRUE(ann.ParseFromString(*state[0].value));
  ann.set_email("ann@example.com");
  ann.set_display_name("Ann A.");
  state[0].value = ann.SerializeAsString();
  for (auto& c : User("bob", "AKBOB", "secret-of-bob-0123")) state.push_back(c);
  ASSERT_TRUE(r.Reset(state, 12).ok());
  pb::FindUserRequest by_email;
  by_email.set_email("Ann@Example.COM");
  auto found = r.FindUser(by_email);
  EXPECT_TRUE(found.found());
  EXPECT_EQ(found.name(), "ann");
  EXPECT_EQ(found.canonical_id(), s3::CanonicalUserId("ann"));
  EXPECT_EQ(found.display_name(), "Ann A.");
  EXPECT_EQ(found.map_version(), 12u);
  pb::FindUserRequest by_id;
  by_id.set_canonical_id(s3::CanonicalUserId("bob"));  // bob's record holds no id: derived
  found = r.FindUser(by_id);
  EXPECT_TRUE(found.found());
  EXPECT_EQ(found.name(), "bob");
  EXPECT_EQ(found.display_name(), "bob");
  by_email.set_email("nobody@example.com");
  EXPECT_FALSE(r.FindUser(by_email).found());
  by_id.set_canonical_id(s3::CanonicalUserId("carol"));
  EXPECT_FALSE(r.FindUser(by_id).found());
  by_email.set_email("");  // bob has no email: an empty address finds nobody
  by_email.set_canonical_id("");
  EXPECT_FALSE(r.FindUser(by_email).found());
}

TEST(RegistryMemds, UpdateFollowsChangesAndVersion) {
  RegistryMemds r;
  ASSERT_TRUE(r.Reset({Bucket("alpha", 7, "ann"), Id(7, "alpha")}, 5).ok());
  ASSERT_TRUE(r.Update({KeyChange{BucketKey("alpha"), std::nullopt}, Bucket("gamma", 11, "ann"),
                        Id(11, "gamma")},
                       9)
                  .ok());
  EXPECT_FALSE(r.GetBucket("alpha").found());
  EXPECT_TRUE(r.GetBucket("gamma").found());
  EXPECT_EQ(r.bucket_count(), 1u);
  EXPECT_TRUE(r.BucketIdUsed(7));
  EXPECT_EQ(r.version(), 9u);
  ASSERT_TRUE(r.Update({}, 3).ok());  // versions never go back
  EXPECT_EQ(r.version(), 9u);
  ASSERT_TRUE(r.Update(User("bob", "AKBOB", "secret-of-bob-0123"), 12).ok());
  EXPECT_EQ(r.user_count(), 1u);
}

TEST(RegistryMemds, CorruptValueChangesNothing) {
  RegistryMemds r;
  ASSERT_TRUE(r.Reset({Bucket("alpha", 7, "ann")}, 5).ok());
  const Status bad =
      r.Update({Bucket("beta", 8, "bob"), KeyChange{BucketKey("gamma"), "\xff\xff garbage"}}, 6);
  EXPECT_EQ(bad.code(), StatusCode::kCorruption);
  EXPECT_FALSE(r.GetBucket("beta").found());
  EXPECT_EQ(r.version(), 5u);
  // A descriptor stored under another name's key is corrupt too.
  pb::BucketDescriptor d;
  d.set_name("other");
  EXPECT_EQ(r.Update({KeyChange{BucketKey("delta"), d.SerializeAsString()}}, 7).code(),
            StatusCode::kCorruption);
  EXPECT_EQ(r.Reset({KeyChange{BucketIdKey(1).substr(0, 6), "x"}}, 1).code(),
            StatusCode::kCorruption);
  EXPECT_TRUE(r.GetBucket("alpha").found());
}

}  // namespace
}  // namespace tessera::meta
