// Goal: the authorization decision is exactly the table below (request x
// bucket owner -> decision), every denying case denies, and the decision
// log line cannot be split by a key.
#include "s3/authz/authorize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "s3/protocol/names.h"

namespace tessera::s3::authz {
namespace {

Principal User(const std::string& name) { return Principal{false, name, "id-" + name}; }
Principal Anonymous() { return Principal{}; }

struct Case {
  const char* name;
  Principal principal;
  Action action;
  std::string bucket;
  std::string key;
  std::string bucket_owner;
  bool allowed;
  Reason reason;
};

TEST(Authorize, DecisionTable) {
  const std::vector<Case> cases = {
      // Service level: any authenticated user, never anonymous.
      {"list buckets", User("alice"), Action::kListAllMyBuckets, "", "", "", true,
       Reason::kAuthenticated},
      {"create bucket", User("bob"), Action::kCreateBucket, "b", "", "", true,
       Reason::kAuthenticated},
      {"anonymous list buckets", Anonymous(), Action::kListAllMyBuckets, "", "", "", false,
       Reason::kAnonymous},
      {"anonymous create bucket", Anonymous(), Action::kCreateBucket, "b", "", "", false,
       Reason::kAnonymous},
      // The owner may do everything with its bucket and objects.
      {"owner lists", User("alice"), Action::kListBucket, "b", "", "alice", true,
       Reason::kBucketOwner},
      {"owner gets", User("alice"), Action::kGetObject, "b", "k", "alice", true,
       Reason::kObjectOwner},
      {"owner puts", User("alice"), Action::kPutObject, "b", "k", "alice", true,
       Reason::kBucketOwner},
      {"owner sets acl", User("alice"), Action::kPutBucketAcl, "b", "", "alice", true,
       Reason::kBucketOwner},
      {"owner deletes bucket", User("alice"), Action::kDeleteBucket, "b", "", "alice", true,
       Reason::kBucketOwner},
      // Another user: denied for every bucket and object action.
      {"other lists", User("bob"), Action::kListBucket, "b", "", "alice", false,
       Reason::kNotBucketOwner},
      {"other gets", User("bob"), Action::kGetObject, "b", "k", "alice", false,
       Reason::kNotObjectOwner},
      {"other puts", User("bob"), Action::kPutObject, "b", "k", "alice", false,
       Reason::kNotBucketOwner},
      {"other deletes", User("bob"), Action::kDeleteObject, "b", "k", "alice", false,
       Reason::kNotBucketOwner},
      {"other reads acl", User("bob"), Action::kGetBucketAcl, "b", "", "alice", false,
       Reason::kNotBucketOwner},
      {"other deletes bucket", User("bob"), Action::kDeleteBucket, "b", "", "alice", false,
       Reason::kNotBucketOwner},
      {"prefix of the owner's name", User("alic"), Action::kGetObject, "b", "k", "alice", false,
       Reason::kNotObjectOwner},
      {"no owner known", User("alice"), Action::kGetObject, "b", "k", "", false,
       Reason::kNotObjectOwner},
      // Anonymous: denied, even on a bucket whose owner's name is empty.
      {"anonymous gets", Anonymous(), Action::kGetObject, "b", "k", "alice", false,
       Reason::kAnonymous},
      {"anonymous lists", Anonymous(), Action::kListBucket, "b", "", "alice", false,
       Reason::kAnonymous},
      {"anonymous puts", Anonymous(), Action::kPutObject, "b", "k", "alice", false,
       Reason::kAnonymous},
      {"anonymous, empty owner", Anonymous(), Action::kGetObject, "b", "k", "", false,
       Reason::kAnonymous},
  };
  for (const Case& c : cases) {
    Request r;
    r.principal = c.principal;
    r.action = c.action;
    r.bucket = c.bucket;
    r.key = c.key;
    r.bucket_owner = c.bucket_owner;
    const Decision d = Authorize(r);
    EXPECT_EQ(d.allowed, c.allowed) << c.name;
    EXPECT_EQ(ReasonName(d.reason), ReasonName(c.reason)) << c.name;
  }
}

// The ACL rules: request x bucket ACL x object owner x object ACL -> decision.
TEST(Authorize, AclDecisionTable) {
  using P = Permission;
  const std::string alice = "id-alice", bob = "id-bob";
  auto user = [](const std::string& id, P p) { return Grant{Grant::Kind::kCanonicalUser, id, p}; };
  auto group = [](std::string_view uri, P p) { return Grant{Grant::Kind::kGroup, std::string(uri), p}; };
  const std::vector<Grant> private_acl = {user(alice, P::kFullControl)};
  const std::vector<Grant> public_read = {user(alice, P::kFullControl), group(kAllUsersUri, P::kRead)};
  const std::vector<Grant> public_rw = {user(alice, P::kFullControl), group(kAllUsersUri, P::kRead),
                                        group(kAllUsersUri, P::kWrite)};
  const std::vector<Grant> auth_read = {user(alice, P::kFullControl),
                                        group(kAuthenticatedUsersUri, P::kRead)};
  const std::vector<Grant> bob_write = {user(alice, P::kFullControl), user(bob, P::kWrite)};
  const std::vector<Grant> bob_read_acp = {user(alice, P::kFullControl), user(bob, P::kReadAcp)};
  const std::vector<Grant> bob_full = {user(alice, P::kFullControl), user(bob, P::kFullControl)};
  const std::vector<Grant> nobody = {};  // the owner removed its own grant
  using Acl = std::optional<std::vector<Grant>>;
  struct AclCase {
    const char* name;
    Principal principal;
    Action action;
    Acl bucket_acl;
    std::string object_owner;
    Acl object_acl;
    bool allowed;
    Reason reason;
  };
  const std::vector<AclCase> cases = {
      // Bucket READ: the listings.
      {"anonymous lists public-read", Anonymous(), Action::kListBucket, public_read, "", {}, true,
       Reason::kBucketAcl},
      {"anonymous lists versions of public-read", Anonymous(), Action::kListBucketVersions,
       public_read, "", {}, true, Reason::kBucketAcl},
      {"anonymous lists private", Anonymous(), Action::kListBucket, private_acl, "", {}, false,
       Reason::kAnonymous},
      {"anonymous lists authenticated-read", Anonymous(), Action::kListBucket, auth_read, "", {},
       false, Reason::kAnonymous},
      {"bob lists authenticated-read", User("bob"), Action::kListBucket, auth_read, "", {}, true,
       Reason::kBucketAcl},
      {"bob lists bob-write", User("bob"), Action::kListBucket, bob_write, "", {}, false,
       Reason::kNotBucketOwner},
      // Bucket WRITE: writes and deletes of objects.
      {"anonymous puts public-read", Anonymous(), Action::kPutObject, public_read, "", {}, false,
       Reason::kAnonymous},
      {"anonymous puts public-read-write", Anonymous(), Action::kPutObject, public_rw, "", {}, true,
       Reason::kBucketAcl},
      {"bob puts bob-write", User("bob"), Action::kPutObject, bob_write, "", {}, true,
       Reason::kBucketAcl},
      {"bob deletes bob-write", User("bob"), Action::kDeleteObject, bob_write, "", {}, true,
       Reason::kBucketAcl},
      {"bob aborts upload bob-write", User("bob"), Action::kAbortMultipartUpload, bob_write, "", {},
       true, Reason::kBucketAcl},
      {"bob puts public-read", User("bob"), Action::kPutObject, public_read, "", {}, false,
       Reason::kNotBucketOwner},
      // Bucket ACP.
      {"bob reads acl bob-read-acp", User("bob"), Action::kGetBucketAcl, bob_read_acp, "", {}, true,
       Reason::kBucketAcl},
      {"bob writes acl bob-read-acp", User("bob"), Action::kPutBucketAcl, bob_read_acp, "", {},
       false, Reason::kNotBucketOwner},
      {"bob writes acl bob-full", User("bob"), Action::kPutBucketAcl, bob_full, "", {}, true,
       Reason::kBucketAcl},
      // The owner always reads and writes its ACL, even one granting nobody.
      {"owner reads acl of nobody", User("alice"), Action::kGetBucketAcl, nobody, "", {}, true,
       Reason::kBucketOwner},
      {"owner writes acl of nobody", User("alice"), Action::kPutBucketAcl, nobody, "", {}, true,
       Reason::kBucketOwner},
      {"owner lists nobody", User("alice"), Action::kListBucket, nobody, "", {}, false,
       Reason::kNotBucketOwner},
      // Owner-only bucket actions: no ACL grants them.
      {"bob versioning bob-full", User("bob"), Action::kPutBucketVersioning, bob_full, "", {},
       false, Reason::kNotBucketOwner},
      {"bob deletes bucket bob-full", User("bob"), Action::kDeleteBucket, bob_full, "", {}, false,
       Reason::kNotBucketOwner},
      {"anonymous location public-rw", Anonymous(), Action::kGetBucketLocation, public_rw, "", {},
       false, Reason::kAnonymous},
      // Object READ through the object's ACL, not the bucket's.
      {"anonymous gets public-read object", Anonymous(), Action::kGetObject, private_acl, "alice",
       public_read, true, Reason::kObjectAcl},
      {"anonymous gets private object in public bucket", Anonymous(), Action::kGetObject,
       public_read, "alice", private_acl, false, Reason::kAnonymous},
      {"bob gets object granting him READ", User("bob"), Action::kGetObjectVersion, {}, "alice",
       std::vector<Grant>{user(alice, P::kFullControl), user(bob, P::kRead)}, true,
       Reason::kObjectAcl},
      {"bob gets acl of object granting READ", User("bob"), Action::kGetObjectAcl, {}, "alice",
       std::vector<Grant>{user(alice, P::kFullControl), user(bob, P::kRead)}, false,
       Reason::kNotObjectOwner},
      // The object's owner, not the bucket's, owns the object (ObjectWriter).
      {"bob gets his object", User("bob"), Action::kGetObject, bob_write, "bob", {}, true,
       Reason::kObjectOwner},
      {"bucket owner gets bob's private object", User("alice"), Action::kGetObject, bob_write,
       "bob", std::vector<Grant>{user(bob, P::kFullControl)}, false, Reason::kNotObjectOwner},
      {"bucket owner gets bob's bucket-owner-full-control object", User("alice"),
       Action::kGetObject, bob_write, "bob",
       std::vector<Grant>{user(bob, P::kFullControl), user(alice, P::kFullControl)}, true,
       Reason::kObjectAcl},
      {"bob tags his object", User("bob"), Action::kPutObjectTagging, bob_write, "bob", {}, true,
       Reason::kObjectOwner},
      {"bob tags alice's object", User("bob"), Action::kPutObjectTagging, bob_full, "alice",
       bob_full, false, Reason::kNotObjectOwner},
      {"bob writes acl of his object", User("bob"), Action::kPutObjectAcl, bob_write, "bob",
       std::vector<Grant>{}, true, Reason::kObjectOwner},
      // An object the anonymous principal wrote ("" owner) is anonymous's.
      {"anonymous writes acl of its object", Anonymous(), Action::kPutObjectAcl, public_rw, "",
       {}, true, Reason::kObjectOwner},
      {"anonymous gets its private object", Anonymous(), Action::kGetObject, public_rw, "", {},
       true, Reason::kObjectOwner},
      {"anonymous gets its object granting the anonymous id", Anonymous(), Action::kGetObject,
       public_rw, "", std::vector<Grant>{user(std::string(kAnonymousCanonicalId), P::kFullControl)},
       true, Reason::kObjectOwner},
      {"bucket owner gets anonymous's private object", User("alice"), Action::kGetObject,
       public_rw, "", {}, false, Reason::kNotObjectOwner},
      {"bob writes acl of anonymous's object", User("bob"), Action::kPutObjectAcl, public_rw, "",
       {}, false, Reason::kNotObjectOwner},
      {"anonymous gets alice's object granting the anonymous id", Anonymous(), Action::kGetObject,
       public_rw, "alice",
       std::vector<Grant>{user(std::string(kAnonymousCanonicalId), P::kRead)}, true,
       Reason::kObjectAcl},
  };
  for (const AclCase& c : cases) {
    Request r;
    r.principal = c.principal;
    r.action = c.action;
    r.bucket = "b";
    r.key = RuleOf(c.action).scope == Scope::kObject ? "k" : "";
    r.bucket_owner = "alice";
    r.bucket_acl = c.bucket_acl;
    r.object_owner = c.object_owner;
    r.object_acl = c.object_acl;
    const Decision d = Authorize(r);
    EXPECT_EQ(d.allowed, c.allowed) << c.name;
    EXPECT_EQ(ReasonName(d.reason), ReasonName(c.reason)) << c.name;
  }
}

TEST(Authorize, ExpectedBucketOwnerComesFirst) {
  Request r;
  r.principal = User("alice");
  r.action = Action::kGetObject;
  r.bucket = "b";
  r.key = "k";
  r.bucket_owner = "alice";
  r.expected_bucket_owner = CanonicalUserId("alice");
  EXPECT_TRUE(Authorize(r).allowed);
  for (const std::string& wrong : {CanonicalUserId("bob"), std::string("alice"), std::string(),
                                   std::string("123456789012")}) {
    r.expected_bucket_owner = wrong;
    const Decision d = Authorize(r);
    EXPECT_FALSE(d.allowed) << wrong;
    EXPECT_EQ(ReasonName(d.reason), "expected-bucket-owner") << wrong;
  }
  // Denied even where the ACL would allow anyone.
  r.principal = Anonymous();
  r.action = Action::kListBucket;
  r.key = "";
  r.bucket_acl = CannedAcl("public-read", CanonicalUserId("alice"), CanonicalUserId("alice"));
  r.expected_bucket_owner = CanonicalUserId("bob");
  EXPECT_FALSE(Authorize(r).allowed);
  r.expected_bucket_owner.reset();
  EXPECT_TRUE(Authorize(r).allowed);
}

TEST(Authorize, ActionNames) {
  EXPECT_EQ(ActionName(Action::kListAllMyBuckets), "s3:ListAllMyBuckets");
  EXPECT_EQ(ActionName(Action::kGetObject), "s3:GetObject");
  EXPECT_EQ(ActionName(Action::kGetBucketCors), "s3:GetBucketCORS");
  EXPECT_EQ(ActionName(Action::kPutBucketCors), "s3:PutBucketCORS");
  EXPECT_EQ(ActionName(Action::kAbortMultipartUpload), "s3:AbortMultipartUpload");
  EXPECT_EQ(ActionName(Action::kPutObjectVersionAcl), "s3:PutObjectVersionAcl");
  EXPECT_EQ(ActionName(Action::kPutBucketOwnershipControls), "s3:PutBucketOwnershipControls");
  EXPECT_EQ(ActionName(Action::kGetBucketOwnershipControls), "s3:GetBucketOwnershipControls");
  EXPECT_FALSE(RuleOf(Action::kPutBucketOwnershipControls).permission) << "owner only";
  EXPECT_EQ(BucketSubresourceAction("acl"), Action::kGetBucketAcl);
  EXPECT_EQ(BucketSubresourceAction("location"), Action::kGetBucketLocation);
  EXPECT_EQ(BucketSubresourceAction("website"), Action::kGetBucketConfiguration);
}

TEST(Authorize, LogLineEscapesTheKey) {
  Request r;
  r.principal = User("alice");
  r.action = Action::kGetObject;
  r.bucket = "b";
  r.key = "a b\nforged decision=allow";
  r.bucket_owner = "bob";
  const std::string line = DecisionLogLine(r, Authorize(r));
  EXPECT_EQ(line,
            "s3.authz principal=alice action=s3:GetObject bucket=b "
            "key=a\\x20b\\x0aforged\\x20decision=allow decision=deny reason=not-object-owner");
}

}  // namespace
}  // namespace tessera::s3::authz
