#!/usr/bin/env python3
"""Goal: bucket policies and the public access block decide access as S3's
do. A public-read policy on public/* lets anonymous clients (boto3
UNSIGNED, the aws CLI --no-sign-request) read objects there and nowhere
else; a Deny on s3:DeleteObject stops the owner; a policy granting a
second user s3:PutObject lets it upload while a third is denied;
aws:SourceIp and aws:SecureTransport conditions decide; bad policies are
refused with MalformedPolicy and S3's messages; GetBucketPolicy returns the
document byte for byte and GetBucketPolicyStatus says whether it is
public. The public access block: BlockPublicPolicy refuses a public
policy, RestrictPublicBuckets cuts anonymous access a policy gives,
IgnorePublicAcls cuts a public-read ACL's anonymous listing,
BlockPublicAcls refuses PutBucketAcl public-read. Another user the
policy grants the policy calls gets 405 MethodNotAllowed (403 without the
grant); s3:ExistingObjectTag conditions read the object's tags; a
${aws:username} home-directory policy confines users to their prefix.
s3cmd setpolicy / delpolicy round trip.

Standard library + boto3, the aws CLI and s3cmd (s3_harness). Binary:
$TESSERA_BIN."""

import json
import os
import shutil
import sys
import unittest

import s3_harness as h

CLUSTER = None
USERS = {}
BUCKET = "olgas-policy"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-bucket-policy")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    for name in ("olga", "pete", "quinn"):
        USERS[name] = CLUSTER.create_user(name)
    for name in ("olga", "pete", "quinn"):
        h.wait_until(lambda: try_call(client(name).list_buckets), 10, 0.1)
    olga = client("olga")
    olga.create_bucket(Bucket=BUCKET)
    for key in ("public/a", "private/b"):
        olga.put_object(Bucket=BUCKET, Key=key, Body=key.encode())


def client(name, https=False):
    access, secret = USERS[name]
    return CLUSTER.boto3_client(https=https, access_key=access, secret_key=secret)


def anonymous():
    from botocore import UNSIGNED
    return CLUSTER.boto3_client(signature=UNSIGNED)


def try_call(call, *args, **kw):
    try:
        call(*args, **kw)
        return True
    except Exception as e:  # a new key may not have reached the router yet
        print(f"[{e}]", file=sys.stderr)
        return False


def error_of(call, *args, **kw):
    """(code, message) of a refused call; None when it succeeds."""
    from botocore.exceptions import ClientError
    try:
        call(*args, **kw)
    except ClientError as e:
        err = e.response.get("Error", {})
        code = err.get("Code")
        return ("AccessDenied" if code in (None, "403") else code), err.get("Message")
    return None


def code_of(call, *args, **kw):
    err = error_of(call, *args, **kw)
    return err and err[0]


def statement(principal, action, resource, effect="Allow", condition=None, sid=None):
    s = {"Effect": effect, "Principal": principal, "Action": action, "Resource": resource}
    if condition:
        s["Condition"] = condition
    if sid:
        s["Sid"] = sid
    return s


def policy(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


OBJECTS = f"arn:aws:s3:::{BUCKET}/*"
PUBLIC_READ = policy(statement("*", "s3:GetObject", f"arn:aws:s3:::{BUCKET}/public/*"))


class BucketPolicyTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.olga, self.pete, self.quinn = client("olga"), client("pete"), client("quinn")
        self.anon = anonymous()

    def tearDown(self):
        self.olga.delete_bucket_policy(Bucket=BUCKET)
        self.olga.delete_public_access_block(Bucket=BUCKET)
        self.olga.put_bucket_acl(Bucket=BUCKET, ACL="private")
        super().tearDown()

    def put_policy(self, document):
        self.olga.put_bucket_policy(Bucket=BUCKET, Policy=document)

    def test_1_public_read_prefix(self):
        self.assertEqual(code_of(self.olga.get_bucket_policy, Bucket=BUCKET), "NoSuchBucketPolicy")
        self.assertEqual(code_of(self.olga.get_bucket_policy_status, Bucket=BUCKET),
                         "NoSuchBucketPolicy")
        self.assertEqual(code_of(self.anon.get_object, Bucket=BUCKET, Key="public/a"),
                         "AccessDenied")
        document = "{ \"Version\": \"2012-10-17\",\n  \"Statement\": " + json.dumps(
            [statement("*", "s3:GetObject", f"arn:aws:s3:::{BUCKET}/public/*", sid="pub")]) + "}"
        self.put_policy(document)
        self.assertEqual(self.olga.get_bucket_policy(Bucket=BUCKET)["Policy"], document)
        self.assertTrue(
            self.olga.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"]["IsPublic"])
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="public/a")["Body"].read(),
                         b"public/a")
        self.assertEqual(code_of(self.anon.get_object, Bucket=BUCKET, Key="private/b"),
                         "AccessDenied")
        self.assertEqual(code_of(self.anon.list_objects_v2, Bucket=BUCKET), "AccessDenied")
        self.assertEqual(code_of(self.anon.put_object, Bucket=BUCKET, Key="public/x", Body=b"x"),
                         "AccessDenied")
        self.assertEqual(code_of(self.quinn.get_bucket_policy, Bucket=BUCKET), "AccessDenied")
        out_file = os.path.join(self.tmp, "a")
        self.c.aws("s3", "cp", "--no-sign-request", f"s3://{BUCKET}/public/a", out_file)
        with open(out_file, "rb") as f:
            self.assertEqual(f.read(), b"public/a")
        rc, _, _ = self.c.aws("s3", "cp", "--no-sign-request", f"s3://{BUCKET}/private/b",
                              out_file, check=False)
        self.assertNotEqual(rc, 0)

    def test_2_deny_stops_the_owner(self):
        self.put_policy(policy(statement("*", "s3:DeleteObject", OBJECTS, effect="Deny")))
        self.assertFalse(
            self.olga.get_bucket_policy_status(Bucket=BUCKET)["PolicyStatus"]["IsPublic"])
        self.assertEqual(code_of(self.olga.delete_object, Bucket=BUCKET, Key="private/b"),
                         "AccessDenied")
        self.olga.get_object(Bucket=BUCKET, Key="private/b")
        # A Deny of the policy calls themselves: the owner keeps them.
        self.put_policy(policy(statement("*", "s3:*", [OBJECTS, f"arn:aws:s3:::{BUCKET}"],
                                         effect="Deny")))
        self.olga.get_bucket_policy(Bucket=BUCKET)
        self.assertEqual(code_of(self.olga.list_objects_v2, Bucket=BUCKET), "AccessDenied")

    def test_3_grant_to_a_second_user(self):
        self.assertEqual(code_of(self.pete.put_object, Bucket=BUCKET, Key="p", Body=b"p"),
                         "AccessDenied")
        self.put_policy(policy(statement({"AWS": h.canonical_id("pete")}, "s3:PutObject", OBJECTS),
                               statement("*", "s3:GetObject", f"arn:aws:s3:::{BUCKET}/public/*")))
        self.pete.put_object(Bucket=BUCKET, Key="petes", Body=b"p")
        # A copy's source is decided with its bucket's policy too.
        self.pete.copy_object(Bucket=BUCKET, Key="petes-copy",
                              CopySource={"Bucket": BUCKET, "Key": "public/a"})
        self.assertEqual(code_of(self.pete.copy_object, Bucket=BUCKET, Key="petes-copy",
                                 CopySource={"Bucket": BUCKET, "Key": "private/b"}),
                         "AccessDenied")
        self.olga.delete_object(Bucket=BUCKET, Key="petes-copy")
        self.assertEqual(code_of(self.quinn.put_object, Bucket=BUCKET, Key="q", Body=b"q"),
                         "AccessDenied")
        # The writer owns what it writes (ObjectWriter): pete reads its own
        # object, which the policy alone would not let it; quinn may not.
        self.assertEqual(self.pete.get_object(Bucket=BUCKET, Key="petes")["Body"].read(), b"p")
        self.assertEqual(code_of(self.quinn.get_object, Bucket=BUCKET, Key="petes"),
                         "AccessDenied")
        self.assertEqual(code_of(self.pete.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ),
                         "AccessDenied")
        self.olga.delete_object(Bucket=BUCKET, Key="petes")

    def test_4_source_ip(self):
        for cidr, allowed in (("127.0.0.1/32", True), ("10.0.0.0/8", False)):
            self.put_policy(policy(statement(
                {"AWS": f"arn:aws:iam::{h.canonical_id('pete')}:user/pete"}, "s3:GetObject",
                OBJECTS, condition={"IpAddress": {"aws:SourceIp": cidr}})))
            with self.subTest(cidr=cidr):
                err = code_of(self.pete.get_object, Bucket=BUCKET, Key="private/b")
                self.assertEqual(err, None if allowed else "AccessDenied")

    def test_5_secure_transport(self):
        self.put_policy(policy(statement({"CanonicalUser": h.canonical_id("pete")},
                                         "s3:GetObject", OBJECTS,
                                         condition={"Bool": {"aws:SecureTransport": "true"}})))
        self.assertEqual(code_of(self.pete.get_object, Bucket=BUCKET, Key="private/b"),
                         "AccessDenied")
        pete_tls = client("pete", https=True)
        self.assertEqual(pete_tls.get_object(Bucket=BUCKET, Key="private/b")["Body"].read(),
                         b"private/b")

    def test_6_malformed_policies(self):
        ok = statement("*", "s3:GetObject", OBJECTS)
        cases = {
            "not json": ("[1]", "Policies must be valid JSON and the first byte must be '{'"),
            "other bucket": (policy(statement("*", "s3:GetObject", "arn:aws:s3:::other/*")),
                             "Policy has invalid resource"),
            "no principal": (policy({k: v for k, v in ok.items() if k != "Principal"}),
                             "Missing required field Principal"),
            "bad action": (policy(statement("*", "iam:CreateUser", OBJECTS)),
                           "Policy has invalid action"),
            "bad principal": (policy(statement({"AWS": "someone"}, "s3:GetObject", OBJECTS)),
                              "Invalid principal in policy"),
            "bad operator": (policy(statement("*", "s3:GetObject", OBJECTS,
                                              condition={"StringSorta": {"aws:Referer": "x"}})),
                             "Invalid Condition type : StringSorta"),
            "too large": ("{" + " " * (20 << 10) + "}",
                          "Policy exceeds the maximum allowed document size."),
        }
        for name, (document, message) in cases.items():
            with self.subTest(name):
                self.assertEqual(error_of(self.olga.put_bucket_policy, Bucket=BUCKET,
                                          Policy=document), ("MalformedPolicy", message))
        self.assertEqual(code_of(self.olga.get_bucket_policy, Bucket=BUCKET), "NoSuchBucketPolicy")

    def test_7_public_access_block(self):
        self.assertEqual(code_of(self.olga.get_public_access_block, Bucket=BUCKET),
                         "NoSuchPublicAccessBlockConfiguration")
        block = {"BlockPublicAcls": False, "IgnorePublicAcls": False,
                 "BlockPublicPolicy": True, "RestrictPublicBuckets": False}
        self.olga.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration=block)
        self.assertEqual(self.olga.get_public_access_block(Bucket=BUCKET)
                         ["PublicAccessBlockConfiguration"], block)
        self.assertEqual(code_of(self.olga.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ),
                         "AccessDenied")
        self.put_policy(policy(statement({"AWS": h.canonical_id("pete")}, "s3:GetObject", OBJECTS)))
        # RestrictPublicBuckets: a public policy gives anonymous nothing.
        self.olga.delete_public_access_block(Bucket=BUCKET)
        self.put_policy(PUBLIC_READ)
        self.anon.get_object(Bucket=BUCKET, Key="public/a")
        self.olga.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={
            "RestrictPublicBuckets": True})
        self.assertEqual(code_of(self.anon.get_object, Bucket=BUCKET, Key="public/a"),
                         "AccessDenied")
        self.olga.get_object(Bucket=BUCKET, Key="public/a")
        # IgnorePublicAcls: a public-read ACL lists anonymously until set.
        self.olga.delete_public_access_block(Bucket=BUCKET)
        self.olga.put_bucket_acl(Bucket=BUCKET, ACL="public-read")
        self.anon.list_objects_v2(Bucket=BUCKET)
        self.olga.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={
            "IgnorePublicAcls": True})
        self.assertEqual(code_of(self.anon.list_objects_v2, Bucket=BUCKET), "AccessDenied")
        # BlockPublicAcls: PutBucketAcl public-read refused.
        self.olga.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={
            "BlockPublicAcls": True})
        self.assertEqual(code_of(self.olga.put_bucket_acl, Bucket=BUCKET, ACL="public-read"),
                         "AccessDenied")
        self.olga.put_bucket_acl(Bucket=BUCKET, ACL="private")
        self.assertEqual(code_of(self.pete.put_public_access_block, Bucket=BUCKET,
                                 PublicAccessBlockConfiguration=block), "AccessDenied")

    def test_9a_policy_calls_of_another_user_are_405(self):
        # AWS: a caller the policy grants the policy calls, but outside the
        # bucket owner's account, gets 405; without the grant, 403.
        self.put_policy(policy(statement(
            {"AWS": h.canonical_id("pete")},
            ["s3:PutBucketPolicy", "s3:GetBucketPolicy", "s3:DeleteBucketPolicy",
             "s3:GetBucketPolicyStatus"], f"arn:aws:s3:::{BUCKET}")))
        self.assertEqual(code_of(self.pete.put_bucket_policy, Bucket=BUCKET, Policy=PUBLIC_READ),
                         "MethodNotAllowed")
        self.assertEqual(code_of(self.pete.get_bucket_policy, Bucket=BUCKET), "MethodNotAllowed")
        self.assertEqual(code_of(self.pete.delete_bucket_policy, Bucket=BUCKET),
                         "MethodNotAllowed")
        self.assertEqual(code_of(self.pete.get_bucket_policy_status, Bucket=BUCKET),
                         "AccessDenied")
        self.assertEqual(code_of(self.quinn.get_bucket_policy, Bucket=BUCKET), "AccessDenied")
        self.assertEqual(code_of(self.quinn.delete_bucket_policy, Bucket=BUCKET), "AccessDenied")
        self.olga.get_bucket_policy(Bucket=BUCKET)  # unchanged, still there

    def test_9b_existing_object_tag(self):
        self.olga.put_object(Bucket=BUCKET, Key="tagged/yes", Body=b"y", Tagging="public=yes")
        self.olga.put_object(Bucket=BUCKET, Key="tagged/no", Body=b"n", Tagging="public=no")
        self.olga.put_object(Bucket=BUCKET, Key="tagged/none", Body=b"-")
        self.put_policy(policy(statement(
            "*", "s3:GetObject", OBJECTS,
            condition={"StringEquals": {"s3:ExistingObjectTag/public": "yes"}})))
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="tagged/yes")["Body"].read(), b"y")
        self.anon.head_object(Bucket=BUCKET, Key="tagged/yes")
        for key in ("tagged/no", "tagged/none"):
            with self.subTest(key=key):
                self.assertEqual(code_of(self.anon.get_object, Bucket=BUCKET, Key=key),
                                 "AccessDenied")
        # Re-tagged: the decision follows the version's tags.
        self.olga.put_object_tagging(Bucket=BUCKET, Key="tagged/no",
                                     Tagging={"TagSet": [{"Key": "public", "Value": "yes"}]})
        self.assertEqual(self.anon.get_object(Bucket=BUCKET, Key="tagged/no")["Body"].read(), b"n")
        for key in ("tagged/yes", "tagged/no", "tagged/none"):
            self.olga.delete_object(Bucket=BUCKET, Key=key)

    def test_9c_home_directories_by_policy_variable(self):
        users = [f"arn:aws:iam::{h.canonical_id(u)}:user/{u}" for u in ("pete", "quinn")]
        self.put_policy(policy(
            statement({"AWS": users}, ["s3:GetObject", "s3:PutObject"],
                      f"arn:aws:s3:::{BUCKET}/home/${{aws:username}}/*"),
            statement({"AWS": users}, "s3:ListBucket", f"arn:aws:s3:::{BUCKET}",
                      condition={"StringLike": {"s3:prefix": "home/${aws:username}/*"}})))
        self.pete.put_object(Bucket=BUCKET, Key="home/pete/notes", Body=b"mine")
        self.assertEqual(self.pete.get_object(Bucket=BUCKET, Key="home/pete/notes")["Body"].read(),
                         b"mine")
        self.assertEqual(code_of(self.pete.put_object, Bucket=BUCKET, Key="home/quinn/x", Body=b"x"),
                         "AccessDenied")
        self.assertEqual(code_of(self.quinn.get_object, Bucket=BUCKET, Key="home/pete/notes"),
                         "AccessDenied")
        keys = self.pete.list_objects_v2(Bucket=BUCKET, Prefix="home/pete/")["Contents"]
        self.assertEqual([k["Key"] for k in keys], ["home/pete/notes"])
        self.assertEqual(code_of(self.pete.list_objects_v2, Bucket=BUCKET, Prefix="home/quinn/"),
                         "AccessDenied")
        self.assertEqual(code_of(self.anon.list_objects_v2, Bucket=BUCKET, Prefix="home/pete/"),
                         "AccessDenied")
        self.olga.delete_object(Bucket=BUCKET, Key="home/pete/notes")

    @unittest.skipUnless(shutil.which("s3cmd"), "s3cmd is not installed")
    def test_8_s3cmd_setpolicy_delpolicy(self):
        admin = self.c.boto3_client()
        bucket = "s3cmd-policy"
        h.wait_until(lambda: try_call(admin.create_bucket, Bucket=bucket), 10, 0.2)
        admin.put_object(Bucket=bucket, Key="k", Body=b"v")
        path = os.path.join(self.tmp, "policy.json")
        with open(path, "w") as f:
            f.write(policy(statement("*", "s3:GetObject", f"arn:aws:s3:::{bucket}/*")))
        self.c.s3cmd("setpolicy", path, f"s3://{bucket}")
        self.assertEqual(self.anon.get_object(Bucket=bucket, Key="k")["Body"].read(), b"v")
        self.c.s3cmd("delpolicy", f"s3://{bucket}")
        self.assertEqual(code_of(self.anon.get_object, Bucket=bucket, Key="k"), "AccessDenied")


if __name__ == "__main__":
    unittest.main(verbosity=2)
