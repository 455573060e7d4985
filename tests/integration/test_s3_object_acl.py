#!/usr/bin/env python3
"""Goal: object ACLs, grants by email, anonymous writes and object ownership
decide access as in S3, with boto3, the aws CLI, s3cmd and rclone, three
users and anonymous: an object's ACL (canned, grants by id, email and
group, PutObjectAcl body, versionId) is stored and read back exactly;
unknown emails and ids are refused; object READ lets a user GET where
bucket READ alone does not; the writer owns what it writes
(bucket-owner-full-control lets the bucket owner in); public-read-write
lets anonymous PUT and DELETE; ownership controls each way
(BucketOwnerEnforced disables ACLs, BucketOwnerPreferred, ObjectWriter);
x-amz-expected-bucket-owner; and every case nothing grants is denied.

Standard library + boto3, aws CLI, s3cmd, rclone (s3_harness). Binary:
$TESSERA_BIN."""

import json
import os
import sys
import unittest

import s3_harness as h

CLUSTER = None
USERS = {}
EMAILS = {"alice": "alice@example.com", "bob": "Bob@Example.com"}
BUCKET = "alices-objects"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
ANONYMOUS_ID = "65a011a29cdf8ec533ec3d1ccaae921c"


def create_user(name):
    args = ["s3", "user", "create", name]
    if name in EMAILS:
        args += ["--email", EMAILS[name]]
    out = CLUSTER.cli(*args).stdout
    fields = dict(line.split(None, 1) for line in out.splitlines() if " " in line)
    return fields["access_key"].strip(), fields["secret_key"].strip()


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-object-acl")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    for name in ("alice", "bob", "carol"):
        USERS[name] = create_user(name)
    for name in USERS:
        h.wait_until(lambda: answers(client(name)), 10, 0.1)
    client("alice").create_bucket(Bucket=BUCKET)


def client(name):
    access, secret = USERS[name]
    return CLUSTER.boto3_client(access_key=access, secret_key=secret, retries=1)


def anonymous():
    from botocore import UNSIGNED
    return CLUSTER.boto3_client(signature=UNSIGNED, retries=1)


def answers(s3):
    try:
        s3.list_buckets()
        return True
    except Exception as e:  # the new key may not have reached the router yet
        print(f"[list_buckets: {e}]", file=sys.stderr)
        return False


def error_code(call, *args, **kw):
    from botocore.exceptions import ClientError
    try:
        call(*args, **kw)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code")
        return {"403": "AccessDenied", "404": "NotFound"}.get(code, code)
    return None


def grants(acl):
    return [(g["Grantee"].get("ID") or g["Grantee"].get("URI"), g["Permission"])
            for g in acl["Grants"]]


class ObjectAclTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.alice, self.bob, self.carol = client("alice"), client("bob"), client("carol")
        self.anon = anonymous()

    def assert_denied(self, cases):
        for name, call in cases.items():
            with self.subTest(denied=name):
                self.assertEqual(error_code(call), "AccessDenied")

    def test_1_acl_set_and_read_back(self):
        a, b = self.alice, self.bob
        a.put_object(Bucket=BUCKET, Key="pub", Body=b"public", ACL="public-read")
        self.assertEqual(grants(a.get_object_acl(Bucket=BUCKET, Key="pub")),
                         [(h.canonical_id("alice"), "FULL_CONTROL"), (ALL_USERS, "READ")])
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="pub")["Body"].read(), b"public")
        self.carol.head_object(Bucket=BUCKET, Key="pub")
        a.put_object(Bucket=BUCKET, Key="priv", Body=b"private")
        self.assertEqual(grants(a.get_object_acl(Bucket=BUCKET, Key="priv")),
                         [(h.canonical_id("alice"), "FULL_CONTROL")])
        self.assert_denied({
            "anonymous GET private": lambda: self.anon.get_object(Bucket=BUCKET, Key="priv"),
            "bob GET private": lambda: b.get_object(Bucket=BUCKET, Key="priv"),
            "bob HEAD private": lambda: b.head_object(Bucket=BUCKET, Key="priv"),
            "bob GetObjectAcl": lambda: b.get_object_acl(Bucket=BUCKET, Key="pub"),
            "bob PutObjectAcl": lambda: b.put_object_acl(Bucket=BUCKET, Key="pub", ACL="private"),
            "anonymous GetObjectAcl": lambda: self.anon.get_object_acl(Bucket=BUCKET, Key="pub"),
        })
        # Grants by id and by email (stored as the canonical id), READ for
        # bob and nothing else.
        a.put_object_acl(Bucket=BUCKET, Key="priv", GrantRead=f'emailAddress="{EMAILS["bob"]}"',
                         GrantFullControl=f'id="{h.canonical_id("alice")}"')
        self.assertEqual(grants(a.get_object_acl(Bucket=BUCKET, Key="priv")),
                         [(h.canonical_id("bob"), "READ"), (h.canonical_id("alice"), "FULL_CONTROL")])
        self.assertEqual(b.get_object(Bucket=BUCKET, Key="priv")["Body"].read(), b"private")
        self.assert_denied({
            "bob GetObjectAcl with READ": lambda: b.get_object_acl(Bucket=BUCKET, Key="priv"),
            "carol GET": lambda: self.carol.get_object(Bucket=BUCKET, Key="priv"),
        })
        # An AccessControlPolicy body with a grant by email and a group.
        policy = {"Owner": {"ID": h.canonical_id("alice")}, "Grants": [
            {"Grantee": {"Type": "AmazonCustomerByEmail", "EmailAddress": "bob@example.COM"},
             "Permission": "READ_ACP"},
            {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}]}
        a.put_object_acl(Bucket=BUCKET, Key="priv", AccessControlPolicy=policy)
        self.assertEqual(grants(b.get_object_acl(Bucket=BUCKET, Key="priv")),
                         [(h.canonical_id("bob"), "READ_ACP"), (ALL_USERS, "READ")])
        self.assertEqual(error_code(b.get_object, Bucket=BUCKET, Key="priv"), None)
        # Unknown email and id: refused, nothing changes.
        raw = h.S3Raw(self.c, access_key=USERS["alice"][0], secret_key=USERS["alice"][1])
        for headers, status, code in [
                ({"x-amz-grant-read": 'emailAddress="nobody@example.com"'}, 400,
                 "UnresolvableGrantByEmailAddress"),
                ({"x-amz-grant-read": f'id="{h.canonical_id("nobody")}"'}, 400, "InvalidArgument"),
                ({"x-amz-grant-read": 'id="short"'}, 400, "InvalidArgument")]:
            with self.subTest(headers=headers):
                r = raw.request("PUT", f"/{BUCKET}/priv", [("acl", None)], headers)
                self.assertEqual((r.status, r.error()["Code"]), (status, code), r)
                r = raw.request("PUT", f"/{BUCKET}/refused", [], headers, b"x")
                self.assertEqual((r.status, r.error()["Code"]), (status, code), r)
        self.assertEqual(len(grants(a.get_object_acl(Bucket=BUCKET, Key="priv"))), 2)
        self.assertEqual(error_code(a.head_object, Bucket=BUCKET, Key="refused"), "NotFound")
        # Bucket READ lists but reads no object; a missing key is 404 only
        # for who may list.
        a.put_object(Bucket=BUCKET, Key="priv2", Body=b"p2")
        a.put_bucket_acl(Bucket=BUCKET, GrantRead=f'id="{h.canonical_id("bob")}"',
                         GrantFullControl=f'id="{h.canonical_id("alice")}"')
        self.assertIn("priv2", [o["Key"] for o in b.list_objects_v2(Bucket=BUCKET)["Contents"]])
        self.assertEqual(error_code(b.get_object, Bucket=BUCKET, Key="priv2"), "AccessDenied")
        self.assertEqual(error_code(b.head_object, Bucket=BUCKET, Key="missing"), "NotFound")
        self.assertEqual(error_code(self.carol.head_object, Bucket=BUCKET, Key="missing"),
                         "AccessDenied")
        self.assertEqual(error_code(b.get_object, Bucket=BUCKET, Key="missing"), "NoSuchKey")
        # x-amz-expected-bucket-owner: the owner's canonical id, or denied.
        a.get_object(Bucket=BUCKET, Key="priv2", ExpectedBucketOwner=h.canonical_id("alice"))
        self.assertEqual(error_code(a.get_object, Bucket=BUCKET, Key="priv2",
                                    ExpectedBucketOwner=h.canonical_id("bob")), "AccessDenied")
        # The aws CLI reads the ACL back the same.
        env = self.c.client_env(access_key=USERS["alice"][0], secret_key=USERS["alice"][1])
        _, out, _ = self.c.aws("s3api", "get-object-acl", "--bucket", BUCKET, "--key", "pub",
                               env=env)
        self.assertEqual(grants(json.loads(out)), [(h.canonical_id("alice"), "FULL_CONTROL"),
                                                   (ALL_USERS, "READ")])
        a.put_bucket_acl(Bucket=BUCKET, ACL="private")

    def test_2_the_writer_owns_its_objects(self):
        a, b = self.alice, self.bob
        a.put_bucket_acl(Bucket=BUCKET, GrantWrite=f'id="{h.canonical_id("bob")}"',
                         GrantFullControl=f'id="{h.canonical_id("alice")}"')
        b.put_object(Bucket=BUCKET, Key="bobs", Body=b"bob's")
        self.assertEqual(b.get_object(Bucket=BUCKET, Key="bobs")["Body"].read(), b"bob's")
        self.assertEqual(b.get_object_acl(Bucket=BUCKET, Key="bobs")["Owner"]["ID"],
                         h.canonical_id("bob"))
        self.assert_denied({
            "bucket owner GET": lambda: a.get_object(Bucket=BUCKET, Key="bobs"),
            "bucket owner GetObjectAcl": lambda: a.get_object_acl(Bucket=BUCKET, Key="bobs"),
            "bucket owner tagging": lambda: a.get_object_tagging(Bucket=BUCKET, Key="bobs"),
        })
        b.put_object(Bucket=BUCKET, Key="bobs-bofc", Body=b"shared", ACL="bucket-owner-full-control")
        self.assertEqual(a.get_object(Bucket=BUCKET, Key="bobs-bofc")["Body"].read(), b"shared")
        self.assertEqual(grants(a.get_object_acl(Bucket=BUCKET, Key="bobs-bofc")),
                         [(h.canonical_id("bob"), "FULL_CONTROL"),
                          (h.canonical_id("alice"), "FULL_CONTROL")])
        # A copy takes the ACL asked for, never the source's.
        a.put_object(Bucket=BUCKET, Key="pub-src", Body=b"src", ACL="public-read")
        a.copy_object(Bucket=BUCKET, Key="copy-private", CopySource=f"{BUCKET}/pub-src")
        self.assertEqual(error_code(self.anon.get_object, Bucket=BUCKET, Key="copy-private"),
                         "AccessDenied")
        b.copy_object(Bucket=BUCKET, Key="copy-public", CopySource=f"{BUCKET}/bobs",
                      ACL="public-read")
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="copy-public")["Body"].read(),
                         b"bob's")
        self.assertEqual(error_code(b.copy_object, Bucket=BUCKET, Key="stolen",
                                    CopySource=f"{BUCKET}/copy-private"), "AccessDenied")
        # CreateMultipartUpload's ACL goes to the completed object.
        up = b.create_multipart_upload(Bucket=BUCKET, Key="mp", ACL="public-read")
        part = b.upload_part(Bucket=BUCKET, Key="mp", UploadId=up["UploadId"], PartNumber=1,
                             Body=b"multi")
        b.complete_multipart_upload(Bucket=BUCKET, Key="mp", UploadId=up["UploadId"],
                                    MultipartUpload={"Parts": [{"PartNumber": 1,
                                                                "ETag": part["ETag"]}]})
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="mp")["Body"].read(), b"multi")
        self.assertEqual(grants(b.get_object_acl(Bucket=BUCKET, Key="mp")),
                         [(h.canonical_id("bob"), "FULL_CONTROL"), (ALL_USERS, "READ")])
        a.put_bucket_acl(Bucket=BUCKET, ACL="private")
        self.assertEqual(error_code(b.put_object, Bucket=BUCKET, Key="late", Body=b"x"),
                         "AccessDenied")

    def test_3_versions_have_their_own_acl(self):
        a = self.alice
        name = "alices-versions"
        a.create_bucket(Bucket=name)
        a.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        v1 = a.put_object(Bucket=name, Key="k", Body=b"one")["VersionId"]
        a.put_object(Bucket=name, Key="k", Body=b"two")
        a.put_object_acl(Bucket=name, Key="k", VersionId=v1, ACL="public-read")
        self.assertEqual(self.anon.get_object(Bucket=name, Key="k", VersionId=v1)["Body"].read(),
                         b"one")
        self.assertEqual(error_code(self.anon.get_object, Bucket=name, Key="k"), "AccessDenied")
        self.assertEqual(grants(a.get_object_acl(Bucket=name, Key="k")),
                         [(h.canonical_id("alice"), "FULL_CONTROL")])
        marker = a.delete_object(Bucket=name, Key="k")["VersionId"]
        self.assertEqual(error_code(a.put_object_acl, Bucket=name, Key="k", VersionId=marker,
                                    ACL="private"), "MethodNotAllowed")

    def test_4_public_read_write_lets_anonymous_write(self):
        a, anon = self.alice, self.anon
        name = "alices-dropbox"
        a.create_bucket(Bucket=name, ACL="public-read")
        self.assert_denied({
            "anonymous PUT public-read": lambda: anon.put_object(Bucket=name, Key="a", Body=b"a"),
            "anonymous DELETE public-read": lambda: anon.delete_object(Bucket=name, Key="a"),
        })
        a.put_bucket_acl(Bucket=name, ACL="public-read-write")
        anon.put_object(Bucket=name, Key="anon", Body=b"from nobody")
        acl = anon.get_object_acl(Bucket=name, Key="anon")
        self.assertEqual(acl["Owner"]["ID"], ANONYMOUS_ID)
        self.assertEqual(anon.get_object(Bucket=name, Key="anon")["Body"].read(), b"from nobody")
        self.assertEqual(error_code(a.get_object, Bucket=name, Key="anon"), "AccessDenied")
        anon.put_object_acl(Bucket=name, Key="anon", ACL="bucket-owner-full-control")
        self.assertEqual(a.get_object(Bucket=name, Key="anon")["Body"].read(), b"from nobody")
        anon.delete_object(Bucket=name, Key="anon")
        self.assertEqual(error_code(a.head_object, Bucket=name, Key="anon"), "NotFound")
        a.put_bucket_acl(Bucket=name, ACL="private")
        self.assertEqual(error_code(anon.put_object, Bucket=name, Key="b", Body=b"b"),
                         "AccessDenied")

    def test_5_ownership_controls(self):
        a, b = self.alice, self.bob
        name = "alices-owned"
        a.create_bucket(Bucket=name, GrantWrite=f'id="{h.canonical_id("bob")}"',
                        GrantFullControl=f'id="{h.canonical_id("alice")}"')
        self.assertEqual(error_code(a.get_bucket_ownership_controls, Bucket=name),
                         "OwnershipControlsNotFoundError")
        b.put_object(Bucket=name, Key="bobs", Body=b"bob's")
        self.assertEqual(error_code(a.get_object, Bucket=name, Key="bobs"), "AccessDenied")
        rules = lambda o: {"Rules": [{"ObjectOwnership": o}]}  # noqa: E731
        self.assertEqual(error_code(b.put_bucket_ownership_controls, Bucket=name,
                                    OwnershipControls=rules("BucketOwnerEnforced")),
                         "AccessDenied")
        # BucketOwnerEnforced: the bucket owner owns everything, ACLs decide nothing.
        a.put_bucket_ownership_controls(Bucket=name, OwnershipControls=rules("BucketOwnerEnforced"))
        got = a.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"]
        self.assertEqual(got, [{"ObjectOwnership": "BucketOwnerEnforced"}])
        self.assertEqual(a.get_object(Bucket=name, Key="bobs")["Body"].read(), b"bob's")
        self.assertEqual(grants(a.get_object_acl(Bucket=name, Key="bobs")),
                         [(h.canonical_id("alice"), "FULL_CONTROL")])
        self.assertEqual(grants(a.get_bucket_acl(Bucket=name)),
                         [(h.canonical_id("alice"), "FULL_CONTROL")])
        a.put_object(Bucket=name, Key="bofc", Body=b"x", ACL="bucket-owner-full-control")
        for call, kw in [(a.put_object, {"Key": "p", "Body": b"p", "ACL": "public-read"}),
                         (a.put_object_acl, {"Key": "bofc", "ACL": "public-read"}),
                         (a.put_bucket_acl, {"ACL": "public-read"})]:
            with self.subTest(call=call.__name__):
                self.assertEqual(error_code(call, Bucket=name, **kw),
                                 "AccessControlListNotSupported")
        self.assertEqual(error_code(b.put_object, Bucket=name, Key="b2", Body=b"b"),
                         "AccessDenied")
        # BucketOwnerPreferred: bucket-owner-full-control hands the object over.
        a.put_bucket_ownership_controls(Bucket=name, OwnershipControls=rules("BucketOwnerPreferred"))
        b.put_object(Bucket=name, Key="given", Body=b"g", ACL="bucket-owner-full-control")
        b.put_object(Bucket=name, Key="kept", Body=b"k")
        self.assertEqual(a.get_object_acl(Bucket=name, Key="given")["Owner"]["ID"],
                         h.canonical_id("alice"))
        self.assertEqual(b.get_object_acl(Bucket=name, Key="kept")["Owner"]["ID"],
                         h.canonical_id("bob"))
        self.assertEqual(error_code(a.get_object, Bucket=name, Key="kept"), "AccessDenied")
        # ObjectWriter, then none again.
        a.put_bucket_ownership_controls(Bucket=name, OwnershipControls=rules("ObjectWriter"))
        b.put_object(Bucket=name, Key="bobs2", Body=b"b", ACL="bucket-owner-full-control")
        self.assertEqual(a.get_object_acl(Bucket=name, Key="bobs2")["Owner"]["ID"],
                         h.canonical_id("bob"))
        a.delete_bucket_ownership_controls(Bucket=name)
        self.assertEqual(error_code(a.get_bucket_ownership_controls, Bucket=name),
                         "OwnershipControlsNotFoundError")
        # CreateBucket's x-amz-object-ownership.
        a.create_bucket(Bucket="alices-enforced", ObjectOwnership="BucketOwnerEnforced")
        got = a.get_bucket_ownership_controls(Bucket="alices-enforced")
        self.assertEqual(got["OwnershipControls"]["Rules"],
                         [{"ObjectOwnership": "BucketOwnerEnforced"}])
        self.assertEqual(error_code(a.create_bucket, Bucket="alices-bad",
                                    ObjectOwnership="BucketOwnerEnforced", ACL="public-read"),
                         "InvalidBucketAclWithObjectOwnership")

    def test_6_s3cmd_and_rclone_acls(self):
        owner = self.c.boto3_client()
        name = "cli-acls"
        owner.create_bucket(Bucket=name)
        path = os.path.join(self.tmp, "f.txt")
        with open(path, "wb") as f:
            f.write(b"cli bytes")
        self.c.s3cmd("put", path, f"s3://{name}/s3cmd.txt")
        self.assertEqual(error_code(self.anon.get_object, Bucket=name, Key="s3cmd.txt"),
                         "AccessDenied")
        self.c.s3cmd("setacl", "--acl-public", f"s3://{name}/s3cmd.txt")
        self.assertEqual(self.anon.get_object(Bucket=name, Key="s3cmd.txt")["Body"].read(),
                         b"cli bytes")
        self.c.s3cmd("setacl", "--acl-private", f"s3://{name}/s3cmd.txt")
        self.assertEqual(error_code(self.anon.get_object, Bucket=name, Key="s3cmd.txt"),
                         "AccessDenied")
        self.c.rclone("copy", "--s3-acl", "public-read", path, f"ts:{name}/rclone")
        self.assertEqual(self.anon.get_object(Bucket=name, Key="rclone/f.txt")["Body"].read(),
                         b"cli bytes")
        self.c.rclone("copy", "--s3-acl", "private", path, f"ts:{name}/rclone-private")
        self.assertEqual(error_code(self.anon.get_object, Bucket=name, Key="rclone-private/f.txt"),
                         "AccessDenied")


if __name__ == "__main__":
    unittest.main(verbosity=2)
