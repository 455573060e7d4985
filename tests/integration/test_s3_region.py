#!/usr/bin/env python3
"""Goal: a cluster serving a region other than us-east-1 answers
CreateBucket as AWS's regional endpoints do: a bucket is created with that
region's LocationConstraint (none, or another region, is
IllegalLocationConstraintException), GetBucketLocation names the region,
and re-creating a bucket one owns is 409 BucketAlreadyOwnedByYou (an S3
error document naming the bucket) with the bucket's ACL untouched; another
user's name is 409 BucketAlreadyExists. (In us-east-1 a re-create is 200:
test_s3_gaps.py.)

Standard library + boto3 (s3_harness). Binary: $TESSERA_BIN."""

import unittest

import s3_harness as h

CLUSTER = None
REGION = "eu-west-1"
BUCKET = "regional"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-region", router_settings=f's3_region: "{REGION}"')
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


class RegionTest(h.ClusterTestCase):
    def test_create_bucket_outside_us_east_1(self):
        s3 = self.c.boto3_client(region=REGION)
        here = {"LocationConstraint": REGION}
        self.assert_client_error(s3.create_bucket, "IllegalLocationConstraintException", 400,
                                 Bucket=BUCKET)
        self.assert_client_error(s3.create_bucket, "IllegalLocationConstraintException", 400,
                                 Bucket=BUCKET,
                                 CreateBucketConfiguration={"LocationConstraint": "eu-west-2"})
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration=here, ACL="public-read")
        self.assertEqual(s3.get_bucket_location(Bucket=BUCKET)["LocationConstraint"], REGION)
        err = self.assert_client_error(s3.create_bucket, "BucketAlreadyOwnedByYou", 409,
                                       Bucket=BUCKET, CreateBucketConfiguration=here)
        self.assertEqual(err["Error"].get("BucketName"), BUCKET, err)
        # The refused re-create changed nothing: the ACL is still public-read.
        grants = s3.get_bucket_acl(Bucket=BUCKET)["Grants"]
        self.assertEqual(sorted(g["Permission"] for g in grants), ["FULL_CONTROL", "READ"])
        raw = h.S3Raw(self.c)
        resp = raw.request("PUT", f"/{BUCKET}", region=REGION,
                           body=(b"<CreateBucketConfiguration><LocationConstraint>" +
                                 REGION.encode() + b"</LocationConstraint></CreateBucketConfiguration>"))
        self.assertEqual(resp.status, 409, resp)
        doc = resp.error()
        self.assertEqual((doc["Code"], doc["BucketName"], doc["Resource"]),
                         ("BucketAlreadyOwnedByYou", BUCKET, f"/{BUCKET}"), resp)
        self.assertEqual(doc["RequestId"], resp.header("x-amz-request-id"), resp)
        # Another user: BucketAlreadyExists.
        access, secret = self.c.create_user("ronja")
        other = self.c.boto3_client(region=REGION, access_key=access, secret_key=secret)
        h.wait_until(lambda: try_list(other), 10, 0.1)
        self.assert_client_error(other.create_bucket, "BucketAlreadyExists", 409, Bucket=BUCKET,
                                 CreateBucketConfiguration=here)
        s3.delete_bucket(Bucket=BUCKET)


def try_list(s3):
    try:
        s3.list_buckets()
        return True
    except Exception:  # a new key may not have reached the router yet
        return False


if __name__ == "__main__":
    unittest.main(verbosity=2)
