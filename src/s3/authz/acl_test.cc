// Goal: canned ACLs expand to AWS's grants, x-amz-grant-* values parse as
// AWS reads them (and bad ones are InvalidArgument naming the header), and
// a grant matches exactly the principals it names.
#include "s3/authz/acl.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::s3::authz {
namespace {

const std::string kOwner(64, 'a');
const std::string kBucketOwner(64, 'b');
const std::string kOther(64, 'c');

TEST(CannedAcl, ExpandsToAwsGrants) {
  using P = Permission;
  const Grant owner_full{Grant::Kind::kCanonicalUser, kOwner, P::kFullControl};
  auto all = [](P p) { return Grant{Grant::Kind::kGroup, std::string(kAllUsersUri), p}; };
  EXPECT_EQ(*CannedAcl("private", kOwner, kBucketOwner), std::vector<Grant>{owner_full});
  EXPECT_EQ(*CannedAcl("public-read", kOwner, kOwner), (std::vector<Grant>{owner_full, all(P::kRead)}));
  EXPECT_EQ(*CannedAcl("public-read-write", kOwner, kOwner),
            (std::vector<Grant>{owner_full, all(P::kRead), all(P::kWrite)}));
  EXPECT_EQ(CannedAcl("authenticated-read", kOwner, kOwner)->at(1).grantee, kAuthenticatedUsersUri);
  EXPECT_EQ(*CannedAcl("bucket-owner-read", kOwner, kBucketOwner),
            (std::vector<Grant>{owner_full, {Grant::Kind::kCanonicalUser, kBucketOwner, P::kRead}}));
  EXPECT_EQ(*CannedAcl("bucket-owner-full-control", kOwner, kBucketOwner),
            (std::vector<Grant>{owner_full,
                                {Grant::Kind::kCanonicalUser, kBucketOwner, P::kFullControl}}));
  // The owner is the bucket owner: one grant, not two.
  EXPECT_EQ(*CannedAcl("bucket-owner-full-control", kOwner, kOwner), std::vector<Grant>{owner_full});
  const auto log = *CannedAcl("log-delivery-write", kOwner, kOwner);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1].grantee, kLogDeliveryUri);
  EXPECT_EQ(log[1].permission, P::kWrite);
  EXPECT_EQ(log[2].permission, P::kReadAcp);
  EXPECT_FALSE(CannedAcl("aws-exec-read", kOwner, kOwner));
  EXPECT_FALSE(CannedAcl("Private", kOwner, kOwner));
  EXPECT_FALSE(CannedAcl("", kOwner, kOwner));
}

TEST(GrantHeader, ParsesIdsEmailsAndUris) {
  auto g = ParseGrantHeader("x-amz-grant-read",
                            "id=\"" + kOther + "\", emailAddress=\"a@b.c\",uri=" +
                                std::string(kAllUsersUri),
                            Permission::kRead);
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 3u);
  EXPECT_EQ((*g)[0].kind, RequestedGrant::Kind::kCanonicalUser);
  EXPECT_EQ((*g)[0].value, kOther);
  EXPECT_EQ((*g)[1].kind, RequestedGrant::Kind::kEmail);
  EXPECT_EQ((*g)[1].value, "a@b.c");
  EXPECT_EQ((*g)[2].kind, RequestedGrant::Kind::kGroup);
  EXPECT_EQ((*g)[2].value, kAllUsersUri);
  for (const char* bad : {"", "id", "id=", "id=\"\"", "name=\"x\"", "id=\"a\",", "id=\"a\"b\""}) {
    auto r = ParseGrantHeader("x-amz-grant-write", bad, Permission::kWrite);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, S3ErrorCode::kInvalidArgument) << bad;
    EXPECT_TRUE(r.error().HasDetail("ArgumentName")) << bad;
  }
  EXPECT_TRUE(CheckGroupUri(kLogDeliveryUri).ok());
  EXPECT_EQ(CheckGroupUri("http://acs.amazonaws.com/groups/global/Nobody").error().Message(),
            "Invalid group uri");
}

TEST(Grants, MatchExactlyTheNamedPrincipals) {
  using P = Permission;
  const std::vector<Grant> acl = {{Grant::Kind::kCanonicalUser, kOwner, P::kFullControl},
                                  {Grant::Kind::kCanonicalUser, kOther, P::kRead},
                                  {Grant::Kind::kGroup, std::string(kAuthenticatedUsersUri), P::kReadAcp}};
  EXPECT_TRUE(Grants(acl, kOwner, false, P::kWriteAcp));  // FULL_CONTROL covers all
  EXPECT_TRUE(Grants(acl, kOther, false, P::kRead));
  EXPECT_FALSE(Grants(acl, kOther, false, P::kWrite));
  EXPECT_TRUE(Grants(acl, kBucketOwner, false, P::kReadAcp));  // any authenticated user
  EXPECT_FALSE(Grants(acl, kBucketOwner, false, P::kRead));
  EXPECT_FALSE(Grants(acl, "", true, P::kReadAcp));  // anonymous is not authenticated
  EXPECT_FALSE(Grants(acl, kOwner, true, P::kRead));  // an anonymous request is nobody
  EXPECT_FALSE(IsPublic({acl[0], acl[1]}));
  EXPECT_TRUE(IsPublic(acl));
  const std::vector<Grant> public_read = *CannedAcl("public-read", kOwner, kOwner);
  EXPECT_TRUE(Grants(public_read, "", true, P::kRead));
  EXPECT_FALSE(Grants(public_read, "", true, P::kWrite));
  // A grant to S3's anonymous canonical id matches anonymous requests (no
  // user has that id: user ids are 64 hex digits).
  const std::vector<Grant> anonymous = {
      {Grant::Kind::kCanonicalUser, std::string(kAnonymousCanonicalId), P::kRead}};
  EXPECT_TRUE(Grants(anonymous, "", true, P::kRead));
  EXPECT_FALSE(Grants(anonymous, kOther, false, P::kRead));
  EXPECT_EQ(PermissionName(P::kWriteAcp), "WRITE_ACP");
  EXPECT_EQ(ParsePermission("READ_ACP"), P::kReadAcp);
  EXPECT_FALSE(ParsePermission("read"));
}

}  // namespace
}  // namespace tessera::s3::authz
