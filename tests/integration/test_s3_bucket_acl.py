#!/usr/bin/env python3
"""Goal: bucket ACLs are stored in the bucket's configuration record and
decide access: set at CreateBucket (x-amz-grant-*) and by PutBucketAcl
(canned, grant headers, AccessControlPolicy), GetBucketAcl answers exactly
what was set, a second user granted WRITE uploads and READ lists, a
public-read bucket is listed anonymously (boto3 UNSIGNED, the aws CLI with
--no-sign-request), and every case nothing grants is denied: a user with
no grant, anonymous requests to private and authenticated-read buckets,
object reads (bucket READ grants no object), anonymous writes but under
public-read-write, ACP
actions without READ_ACP/WRITE_ACP. Bad ACLs are refused with S3's errors
and change nothing; a re-created bucket starts private.

Standard library + boto3 and the aws CLI (s3_harness). Binary: $TESSERA_BIN."""

import json
import sys
import unittest

import s3_harness as h

CLUSTER = None
USERS = {}
SHARED = "erins-shared"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTH_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-bucket-acl")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    for name in ("erin", "frank", "gina"):
        USERS[name] = CLUSTER.create_user(name)
    erin = client("erin")
    h.wait_until(lambda: try_create(erin), 10, 0.1)
    erin.put_object(Bucket=SHARED, Key="erins", Body=b"erin's bytes")
    h.wait_until(lambda: try_list(client("frank"), "frank"), 10, 0.1)
    h.wait_until(lambda: try_list(client("gina"), "gina"), 10, 0.1)


def client(name):
    access, secret = USERS[name]
    return CLUSTER.boto3_client(access_key=access, secret_key=secret)


def anonymous():
    from botocore import UNSIGNED
    return CLUSTER.boto3_client(signature=UNSIGNED)


def try_create(s3):
    try:
        s3.create_bucket(Bucket=SHARED,
                         GrantFullControl=f'id="{h.canonical_id("erin")}"',
                         GrantWrite=f'id="{h.canonical_id("frank")}"',
                         GrantRead=f'id="{h.canonical_id("frank")}"')
        return True
    except Exception as e:  # the new key may not have reached the router yet
        print(f"[create_bucket: {e}]", file=sys.stderr)
        return False


def try_list(s3, name):
    try:
        s3.list_buckets()
        return True
    except Exception as e:
        print(f"[list_buckets {name}: {e}]", file=sys.stderr)
        return False


def error_code(call, *args, **kw):
    from botocore.exceptions import ClientError
    try:
        call(*args, **kw)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code")
        return code if code not in (None, "403") else "AccessDenied"
    return None


def grants(acl):
    out = []
    for g in acl["Grants"]:
        grantee = g["Grantee"]
        out.append((grantee.get("ID") or grantee.get("URI"), g["Permission"]))
    return out


class BucketAclTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.erin, self.frank, self.gina = client("erin"), client("frank"), client("gina")
        self.anon = anonymous()

    def put_acl(self, **kw):
        self.erin.put_bucket_acl(Bucket=SHARED, **kw)

    def test_1_create_grants_and_their_effect(self):
        # ACL set by CreateBucket's x-amz-grant-* headers, answered as set
        # (in header order: read, write, read-acp, write-acp, full-control).
        self.assertEqual(grants(self.erin.get_bucket_acl(Bucket=SHARED)), [
            (h.canonical_id("frank"), "READ"), (h.canonical_id("frank"), "WRITE"),
            (h.canonical_id("erin"), "FULL_CONTROL")])
        # frank: WRITE uploads, READ lists.
        self.frank.put_object(Bucket=SHARED, Key="franks", Body=b"frank's bytes")
        keys = [o["Key"] for o in self.frank.list_objects_v2(Bucket=SHARED)["Contents"]]
        self.assertEqual(keys, ["erins", "franks"])
        self.frank.head_bucket(Bucket=SHARED)
        # ... and nothing else: objects, the ACL, configuration, deletion.
        denied = {
            "GetObject": lambda: self.frank.get_object(Bucket=SHARED, Key="erins"),
            "GetBucketAcl": lambda: self.frank.get_bucket_acl(Bucket=SHARED),
            "PutBucketAcl": lambda: self.frank.put_bucket_acl(Bucket=SHARED, ACL="public-read"),
            "PutBucketVersioning": lambda: self.frank.put_bucket_versioning(
                Bucket=SHARED, VersioningConfiguration={"Status": "Enabled"}),
            "GetBucketCors": lambda: self.frank.get_bucket_cors(Bucket=SHARED),
            "DeleteBucket": lambda: self.frank.delete_bucket(Bucket=SHARED),
        }
        for name, call in denied.items():
            with self.subTest(frank=name):
                self.assertEqual(error_code(call), "AccessDenied")
        # gina has no grant; anonymous neither.
        for name, call in {
            "gina ListObjectsV2": lambda: self.gina.list_objects_v2(Bucket=SHARED),
            "gina PutObject": lambda: self.gina.put_object(Bucket=SHARED, Key="g", Body=b"g"),
            "gina HeadBucket": lambda: self.gina.head_bucket(Bucket=SHARED),
            "anonymous ListObjectsV2": lambda: self.anon.list_objects_v2(Bucket=SHARED),
            "anonymous PutObject": lambda: self.anon.put_object(Bucket=SHARED, Key="a", Body=b"a"),
        }.items():
            with self.subTest(denied=name):
                self.assertEqual(error_code(call), "AccessDenied")

    def test_2_public_read_lists_anonymously_and_nothing_more(self):
        self.put_acl(ACL="public-read")
        self.assertEqual(grants(self.erin.get_bucket_acl(Bucket=SHARED)), [
            (h.canonical_id("erin"), "FULL_CONTROL"), (ALL_USERS, "READ")])
        keys = [o["Key"] for o in self.anon.list_objects_v2(Bucket=SHARED)["Contents"]]
        self.assertIn("erins", keys)
        self.assertIn("erins", [o["Key"] for o in self.gina.list_objects_v2(Bucket=SHARED)["Contents"]])
        for name, call in {
            "anonymous GetObject": lambda: self.anon.get_object(Bucket=SHARED, Key="erins"),
            "anonymous PutObject": lambda: self.anon.put_object(Bucket=SHARED, Key="a", Body=b"a"),
            "anonymous GetBucketAcl": lambda: self.anon.get_bucket_acl(Bucket=SHARED),
            "anonymous DeleteObject": lambda: self.anon.delete_object(Bucket=SHARED, Key="erins"),
            "frank PutObject (WRITE replaced)": lambda: self.frank.put_object(
                Bucket=SHARED, Key="f2", Body=b"f"),
        }.items():
            with self.subTest(denied=name):
                self.assertEqual(error_code(call), "AccessDenied")
        # public-read-write grants anonymous WRITE (test_s3_object_acl has
        # what the anonymous principal then owns).
        self.put_acl(ACL="public-read-write")
        self.anon.put_object(Bucket=SHARED, Key="a", Body=b"a")
        self.anon.delete_object(Bucket=SHARED, Key="a")
        # The aws CLI without credentials lists a public-read bucket.
        self.put_acl(ACL="public-read")
        _, out, _ = self.c.aws("s3api", "list-objects-v2", "--bucket", SHARED, "--no-sign-request",
                               env=self.c.plain_env() | {"AWS_DEFAULT_REGION": h.REGION})
        self.assertIn("erins", [o["Key"] for o in json.loads(out)["Contents"]])
        self.put_acl(ACL="authenticated-read")
        self.assertEqual(error_code(self.anon.list_objects_v2, Bucket=SHARED), "AccessDenied")
        self.gina.list_objects_v2(Bucket=SHARED)
        self.put_acl(ACL="private")
        self.assertEqual(error_code(self.gina.list_objects_v2, Bucket=SHARED), "AccessDenied")
        self.assertEqual(error_code(self.anon.list_objects_v2, Bucket=SHARED), "AccessDenied")

    def test_3_policy_body_and_aws_cli_round_trip(self):
        me = {"ID": h.canonical_id("erin"), "Type": "CanonicalUser"}
        policy = {"Owner": {"ID": h.canonical_id("erin")}, "Grants": [
            {"Grantee": me, "Permission": "FULL_CONTROL"},
            {"Grantee": {"Type": "Group", "URI": AUTH_USERS}, "Permission": "READ_ACP"},
            {"Grantee": {"ID": h.canonical_id("gina"), "Type": "CanonicalUser"},
             "Permission": "WRITE_ACP"}]}
        self.put_acl(AccessControlPolicy=policy)
        self.assertEqual(grants(self.erin.get_bucket_acl(Bucket=SHARED)), [
            (h.canonical_id("erin"), "FULL_CONTROL"), (AUTH_USERS, "READ_ACP"),
            (h.canonical_id("gina"), "WRITE_ACP")])
        self.assertEqual(len(self.frank.get_bucket_acl(Bucket=SHARED)["Grants"]), 3)  # READ_ACP
        self.assertEqual(error_code(self.frank.list_objects_v2, Bucket=SHARED), "AccessDenied")
        self.gina.put_bucket_acl(Bucket=SHARED, ACL="private")  # WRITE_ACP
        self.assertEqual(error_code(self.frank.get_bucket_acl, Bucket=SHARED), "AccessDenied")
        env = self.c.client_env(access_key=USERS["erin"][0], secret_key=USERS["erin"][1])
        self.c.aws("s3api", "put-bucket-acl", "--bucket", SHARED, "--grant-read",
                   f'uri="{ALL_USERS}"', "--grant-full-control", f'id="{h.canonical_id("erin")}"',
                   env=env)
        _, out, _ = self.c.aws("s3api", "get-bucket-acl", "--bucket", SHARED, env=env)
        self.assertEqual(grants(json.loads(out)), [(ALL_USERS, "READ"),
                                                   (h.canonical_id("erin"), "FULL_CONTROL")])
        self.put_acl(ACL="private")

    def test_4_bad_acls_are_refused_and_change_nothing(self):
        self.put_acl(ACL="private")
        raw = h.S3Raw(self.c, access_key=USERS["erin"][0], secret_key=USERS["erin"][1])
        too_many = "".join(
            f'<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            f'xsi:type="CanonicalUser"><ID>{h.canonical_id(f"u{i}")}</ID></Grantee>'
            f'<Permission>READ</Permission></Grant>' for i in range(101))
        cases = [
            ({"x-amz-acl": "no-such-acl"}, b"", 400, "InvalidArgument"),
            ({"x-amz-grant-read": 'id="not-an-id"'}, b"", 400, "InvalidArgument"),
            ({"x-amz-grant-read": 'uri="http://example.com/group"'}, b"", 400, "InvalidArgument"),
            ({"x-amz-grant-read": 'emailAddress="nobody@example.com"'}, b"", 400,
             "UnresolvableGrantByEmailAddress"),
            ({"x-amz-grant-read": f'id="{h.canonical_id("nobody")}"'}, b"", 400,
             "InvalidArgument"),
            ({"x-amz-grant-read": 'bogus="x"'}, b"", 400, "InvalidArgument"),
            ({"x-amz-acl": "public-read", "x-amz-grant-read": f'uri="{ALL_USERS}"'}, b"", 400,
             "InvalidRequest"),
            ({}, b"<AccessControlPolicy/>", 400, "MalformedACLError"),
            ({}, ("<AccessControlPolicy><AccessControlList>" + too_many +
                  "</AccessControlList></AccessControlPolicy>").encode(), 400, "MalformedACLError"),
        ]
        for headers, body, status, code in cases:
            with self.subTest(headers=headers, body=body[:40]):
                r = raw.request("PUT", f"/{SHARED}", [("acl", None)], headers, body)
                self.assertEqual((r.status, r.error()["Code"]), (status, code), r)
        self.assertEqual(grants(self.erin.get_bucket_acl(Bucket=SHARED)),
                         [(h.canonical_id("erin"), "FULL_CONTROL")])
        # A bad ACL at CreateBucket creates nothing.
        self.assertEqual(error_code(self.erin.create_bucket, Bucket="erins-bad", ACL="bogus"),
                         "InvalidArgument")
        self.assertEqual(error_code(self.erin.head_bucket, Bucket="erins-bad"), "404")

    def test_5_a_recreated_bucket_starts_private(self):
        name = "erins-recreated"
        self.erin.create_bucket(Bucket=name, ACL="public-read")
        self.anon.list_objects_v2(Bucket=name)
        self.erin.delete_bucket(Bucket=name)
        self.erin.create_bucket(Bucket=name)
        self.assertEqual(grants(self.erin.get_bucket_acl(Bucket=name)),
                         [(h.canonical_id("erin"), "FULL_CONTROL")])
        self.assertEqual(error_code(self.anon.list_objects_v2, Bucket=name), "AccessDenied")
        self.erin.delete_bucket(Bucket=name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
