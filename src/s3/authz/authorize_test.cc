// Goal: the authorization decision is exactly the table below (request x
// bucket owner -> decision), every denying case denies, and the decision
// log line cannot be split by a key.
#include "s3/authz/authorize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
       Reason::kBucketOwner},
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
       Reason::kNotBucketOwner},
      {"other puts", User("bob"), Action::kPutObject, "b", "k", "alice", false,
       Reason::kNotBucketOwner},
      {"other deletes", User("bob"), Action::kDeleteObject, "b", "k", "alice", false,
       Reason::kNotBucketOwner},
      {"other reads acl", User("bob"), Action::kGetBucketAcl, "b", "", "alice", false,
       Reason::kNotBucketOwner},
      {"other deletes bucket", User("bob"), Action::kDeleteBucket, "b", "", "alice", false,
       Reason::kNotBucketOwner},
      {"prefix of the owner's name", User("alic"), Action::kGetObject, "b", "k", "alice", false,
       Reason::kNotBucketOwner},
      {"no owner known", User("alice"), Action::kGetObject, "b", "k", "", false,
       Reason::kNotBucketOwner},
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

TEST(Authorize, ActionNames) {
  EXPECT_EQ(ActionName(Action::kListAllMyBuckets), "s3:ListAllMyBuckets");
  EXPECT_EQ(ActionName(Action::kGetObject), "s3:GetObject");
  EXPECT_EQ(ActionName(Action::kGetBucketCors), "s3:GetBucketCORS");
  EXPECT_EQ(ActionName(Action::kAbortMultipartUpload), "s3:AbortMultipartUpload");
  EXPECT_EQ(ActionName(Action::kPutObjectVersionAcl), "s3:PutObjectVersionAcl");
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
            "key=a\\x20b\\x0aforged\\x20decision=allow decision=deny reason=not-bucket-owner");
}

}  // namespace
}  // namespace tessera::s3::authz
