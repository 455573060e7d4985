"""Goal: users carry S3 identities (canonical id, display name, email) and
every request's access decision follows the owner-only rule, through real
clients (boto3 and the aws CLI): the owner sees its canonical id and
display name in every Owner element, a second user and anonymous requests
are denied every bucket and object operation on the owner's bucket, a
request expecting another bucket owner (x-amz-expected-bucket-owner,
x-amz-source-expected-bucket-owner) is denied, and bad identities are
refused by `tessera s3 user create`.

Standard library + boto3 and the aws CLI (s3_harness). Binary: $TESSERA_BIN."""

import json
import sys
import unittest

import s3_harness as h

CLUSTER = None
USERS = {}
BUCKET = "carols-bucket"


def create_user(name, *flags):
    out = CLUSTER.cli("s3", "user", "create", name, *flags).stdout
    return dict(line.split(None, 1) for line in out.splitlines() if " " in line)


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-access")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    USERS["carol"] = create_user("carol", "--display-name", "Carol C", "--email",
                                 "Carol@Example.com")
    USERS["dave"] = create_user("dave")
    carol = client("carol")
    h.wait_until(lambda: try_create(carol), 10, 0.1)
    carol.put_object(Bucket=BUCKET, Key="k", Body=b"carol's bytes")


def client(name):
    u = USERS[name]
    return CLUSTER.boto3_client(access_key=u["access_key"].strip(),
                                secret_key=u["secret_key"].strip())


def try_create(s3):
    try:
        s3.create_bucket(Bucket=BUCKET)
        return True
    except Exception as e:  # the new key may not have reached the router yet
        print(f"[create_bucket: {e}]", file=sys.stderr)
        return False


class UserIdentityTest(h.ClusterTestCase):
    def test_user_create_prints_the_identity(self):
        carol = USERS["carol"]
        self.assertEqual(carol["canonical_id"].strip(), h.canonical_id("carol"))
        self.assertEqual(carol["display_name"].strip(), "Carol C")
        self.assertEqual(carol["email"].strip(), "carol@example.com")
        dave = USERS["dave"]
        self.assertEqual(dave["display_name"].strip(), "dave")
        self.assertNotIn("email", dave)
        listing = self.c.cli("s3", "user", "list").stdout
        self.assertIn(f"id={h.canonical_id('carol')} display_name=Carol C email=carol@example.com",
                      listing)

    def test_bad_identities_are_refused(self):
        for flags, why in ((["--email", "not-an-email"], "LOCAL@DOMAIN"),
                           (["--display-name", "x" * 129], "display name"),
                           (["--email", "CAROL@example.com"], "belongs to user 'carol'")):
            with self.subTest(flags=flags):
                p = self.c.cli("s3", "user", "create", "erin", *flags, check=False)
                self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
                self.assertIn(why, p.stderr)
        # Re-creating carol with another display name is refused, not ignored.
        p = self.c.cli("s3", "user", "create", "carol", "--display-name", "Other", check=False)
        self.assertEqual(p.returncode, 3, p.stderr)


class OwnerElementsTest(h.ClusterTestCase):
    def test_owner_is_the_canonical_id_and_display_name(self):
        s3 = client("carol")
        me = {"ID": h.canonical_id("carol"), "DisplayName": "Carol C"}
        self.assertEqual(s3.list_buckets()["Owner"], me)
        acl = s3.get_bucket_acl(Bucket=BUCKET)
        self.assertEqual(acl["Owner"], me)
        self.assertEqual(acl["Grants"], [{"Grantee": {**me, "Type": "CanonicalUser"},
                                          "Permission": "FULL_CONTROL"}])
        self.assertEqual(s3.get_object_acl(Bucket=BUCKET, Key="k")["Owner"], me)
        listed = s3.list_objects_v2(Bucket=BUCKET, FetchOwner=True)["Contents"]
        self.assertEqual(listed[0]["Owner"], me)
        versions = s3.list_object_versions(Bucket=BUCKET)["Versions"]
        self.assertEqual(versions[0]["Owner"], me)
        # The policy GetBucketAcl returned is accepted back as the private ACL.
        s3.put_bucket_acl(Bucket=BUCKET, AccessControlPolicy={
            "Owner": me, "Grants": acl["Grants"]})


class OwnerOnlyTest(h.ClusterTestCase):
    def test_another_user_is_denied_everything(self):
        from botocore.exceptions import ClientError
        dave = client("dave")
        calls = {
            "ListObjectsV2": lambda: dave.list_objects_v2(Bucket=BUCKET),
            "HeadBucket": lambda: dave.head_bucket(Bucket=BUCKET),
            "GetObject": lambda: dave.get_object(Bucket=BUCKET, Key="k"),
            "HeadObject": lambda: dave.head_object(Bucket=BUCKET, Key="k"),
            "PutObject": lambda: dave.put_object(Bucket=BUCKET, Key="dave", Body=b"x"),
            "DeleteObject": lambda: dave.delete_object(Bucket=BUCKET, Key="k"),
            "GetBucketAcl": lambda: dave.get_bucket_acl(Bucket=BUCKET),
            "GetObjectAcl": lambda: dave.get_object_acl(Bucket=BUCKET, Key="k"),
            "PutBucketAcl": lambda: dave.put_bucket_acl(Bucket=BUCKET, ACL="private"),
            "GetObjectTagging": lambda: dave.get_object_tagging(Bucket=BUCKET, Key="k"),
            "PutBucketVersioning": lambda: dave.put_bucket_versioning(
                Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"}),
            "CreateMultipartUpload": lambda: dave.create_multipart_upload(Bucket=BUCKET, Key="m"),
            "ListMultipartUploads": lambda: dave.list_multipart_uploads(Bucket=BUCKET),
            "DeleteBucket": lambda: dave.delete_bucket(Bucket=BUCKET),
        }
        for name, call in calls.items():
            with self.subTest(op=name):
                with self.assertRaises(ClientError) as caught:
                    call()
                err = caught.exception.response
                self.assertEqual(err["ResponseMetadata"]["HTTPStatusCode"], 403, name)
                if "Error" in err and err["Error"].get("Code") not in ("403", None):
                    self.assertEqual(err["Error"]["Code"], "AccessDenied", name)
        # A copy out of carol's bucket into dave's own: the source is denied.
        dave.create_bucket(Bucket="daves-bucket")
        with self.assertRaises(ClientError) as caught:
            dave.copy_object(Bucket="daves-bucket", Key="stolen",
                             CopySource={"Bucket": BUCKET, "Key": "k"})
        self.assertEqual(caught.exception.response["Error"]["Code"], "AccessDenied")
        # ListBuckets shows only the caller's own buckets.
        names = [b["Name"] for b in dave.list_buckets()["Buckets"]]
        self.assertEqual(names, ["daves-bucket"])
        # Nothing changed in carol's bucket.
        carol = client("carol")
        self.assertEqual(carol.get_object(Bucket=BUCKET, Key="k")["Body"].read(), b"carol's bytes")
        keys = [o["Key"] for o in carol.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
        self.assertIn("k", keys)
        self.assertNotIn("dave", keys)

    def test_anonymous_is_denied(self):
        raw = h.S3Raw(self.c)
        for method, path in (("GET", f"/{BUCKET}"), ("GET", f"/{BUCKET}/k"),
                             ("HEAD", f"/{BUCKET}/k"), ("PUT", f"/{BUCKET}/anon"),
                             ("DELETE", f"/{BUCKET}/k"), ("GET", "/"), ("PUT", "/anon-bucket")):
            with self.subTest(method=method, path=path):
                r = raw.request(method, path, sign=False)
                self.assertEqual(r.status, 403, r)
        self.assertEqual(raw.request("GET", "/no-such-bucket-anon", sign=False).status, 404)



class ExpectedBucketOwnerTest(h.ClusterTestCase):
    def test_expected_bucket_owner_is_checked_on_every_call(self):
        from botocore.exceptions import ClientError
        s3 = client("carol")
        mine, other = h.canonical_id("carol"), h.canonical_id("dave")
        s3.get_object(Bucket=BUCKET, Key="k", ExpectedBucketOwner=mine)
        s3.list_objects_v2(Bucket=BUCKET, ExpectedBucketOwner=mine)
        s3.put_object(Bucket=BUCKET, Key="expected", Body=b"x", ExpectedBucketOwner=mine)
        s3.copy_object(Bucket=BUCKET, Key="copied", CopySource={"Bucket": BUCKET, "Key": "k"},
                       ExpectedBucketOwner=mine, ExpectedSourceBucketOwner=mine)
        calls = {
            "GetObject": lambda e: s3.get_object(Bucket=BUCKET, Key="k", ExpectedBucketOwner=e),
            "ListObjectsV2": lambda e: s3.list_objects_v2(Bucket=BUCKET, ExpectedBucketOwner=e),
            "PutObject": lambda e: s3.put_object(Bucket=BUCKET, Key="nope", Body=b"x",
                                                 ExpectedBucketOwner=e),
            "GetBucketAcl": lambda e: s3.get_bucket_acl(Bucket=BUCKET, ExpectedBucketOwner=e),
            "DeleteObject": lambda e: s3.delete_object(Bucket=BUCKET, Key="k",
                                                       ExpectedBucketOwner=e),
            "CopySource": lambda e: s3.copy_object(
                Bucket=BUCKET, Key="nope", CopySource={"Bucket": BUCKET, "Key": "k"},
                ExpectedSourceBucketOwner=e),
        }
        for name, call in calls.items():
            for wrong in (other, "123456789012"):
                with self.subTest(op=name, expected=wrong):
                    with self.assertRaises(ClientError) as caught:
                        call(wrong)
                    self.assertEqual(caught.exception.response["Error"]["Code"], "AccessDenied")
        with self.assertRaises(ClientError) as caught:
            s3.head_object(Bucket=BUCKET, Key="k", ExpectedBucketOwner=other)
        self.assertEqual(caught.exception.response["ResponseMetadata"]["HTTPStatusCode"], 403)
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="k")["Body"].read(), b"carol's bytes")
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
        self.assertTrue({"copied", "expected", "k"} <= keys, keys)
        self.assertNotIn("nope", keys)


class AwsCliTest(h.ClusterTestCase):
    def test_aws_cli_sees_the_owner_and_is_denied_as_another_user(self):
        def env(name):
            u = USERS[name]
            return self.c.client_env(access_key=u["access_key"].strip(),
                                     secret_key=u["secret_key"].strip())
        _, out, _ = self.c.aws("s3api", "get-bucket-acl", "--bucket", BUCKET, env=env("carol"))
        acl = json.loads(out)
        self.assertEqual(acl["Owner"]["ID"], h.canonical_id("carol"))
        self.assertEqual(acl["Owner"]["DisplayName"], "Carol C")
        rc, _, err = self.c.aws("s3api", "get-bucket-acl", "--bucket", BUCKET, env=env("dave"),
                                check=False)
        self.assertNotEqual(rc, 0)
        self.assertIn("AccessDenied", err)
        rc, _, err = self.c.aws("s3", "cp", "s3://" + BUCKET + "/k", "-", env=env("dave"),
                                check=False)
        self.assertNotEqual(rc, 0)
        self.assertIn("403", err)
        rc, _, err = self.c.aws("s3api", "list-objects-v2", "--bucket", BUCKET,
                                "--expected-bucket-owner", h.canonical_id("dave"), env=env("carol"),
                                check=False)
        self.assertNotEqual(rc, 0)
        self.assertIn("AccessDenied", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
