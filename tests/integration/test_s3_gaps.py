#!/usr/bin/env python3
"""S3 operations and answers that were missing or differed from AWS.

Goal: prove against a whole local Tessera cluster, with boto3 and the aws
CLI, that:
  1. GetObjectAttributes answers ETag, Checksum, ObjectParts (paged with
     MaxParts / PartNumberMarker, parts listed only for objects completed
     with a checksum algorithm), StorageClass and ObjectSize for plain,
     multipart and versioned objects; a delete marker is NoSuchKey with
     x-amz-delete-marker; a missing or unknown attribute name is
     InvalidArgument;
  2. DeleteObject honours If-Match, x-amz-if-match-size and
     x-amz-if-match-last-modified-time (412 PreconditionFailed, nothing
     deleted), and DeleteObjects each object's ETag / Size condition with a
     per-key PreconditionFailed error;
  3. the error codes and headers S3 gives: BadDigest, InvalidPartNumber,
     NoSuchUpload, InvalidRequest for an empty completion, presigned
     expiry (400 out of range, 403 expired), HeadObject's TagCount,
     x-amz-delete-marker, 501 for an HTTP-chunked PUT, 501 for the
     sub-resources of operations Tessera does not implement, and a
     LocationConstraint naming another region refused as a regional AWS
     endpoint refuses it, re-creating an owned bucket answered 200 with
     its ACL reset, as AWS's us-east-1 answers;
  4. listing parameters as AWS answers them (D46): encoding-type=url,
     StartAfter, an empty continuation token, allow-unordered ignored;
  5. a multipart upload created with a checksum algorithm is checked at
     completion.
One cluster for the whole file.
"""

import base64
import datetime
import json
import unittest
import urllib.parse
import zlib

import s3_harness as h

CLUSTER = None
BUCKET = "gaps"
MIN_PART = 1024


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-gaps", router_settings=f"s3_min_part_bytes: {MIN_PART}")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    CLUSTER.boto3_client().create_bucket(Bucket=BUCKET)


def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


ALL_ATTRIBUTES = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]


class ObjectAttributesTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()

    def multipart(self, key, parts, algorithm=None):
        kw = {"ChecksumAlgorithm": algorithm} if algorithm else {}
        upload = self.s3.create_multipart_upload(Bucket=BUCKET, Key=key, **kw)["UploadId"]
        done = []
        for n, body in enumerate(parts, 1):
            r = self.s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=n,
                                    Body=body, **kw)
            entry = {"PartNumber": n, "ETag": r["ETag"]}
            if algorithm:
                entry["Checksum" + algorithm] = r["Checksum" + algorithm]
            done.append(entry)
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload={"Parts": done})
        return r, done

    def test_plain_object(self):
        body = b"attributes of a plain object"
        put = self.s3.put_object(Bucket=BUCKET, Key="plain", Body=body, ChecksumAlgorithm="CRC32")
        r = self.s3.get_object_attributes(Bucket=BUCKET, Key="plain", ObjectAttributes=ALL_ATTRIBUTES)
        self.assertEqual(r["ETag"], put["ETag"].strip('"'), r)
        self.assertEqual(r["ObjectSize"], len(body), r)
        self.assertEqual(r["StorageClass"], "STANDARD", r)
        self.assertEqual(r["Checksum"], {"ChecksumCRC32": crc32_b64(body),
                                         "ChecksumType": "FULL_OBJECT"}, r)
        self.assertNotIn("ObjectParts", r, r)
        self.assertIn("LastModified", r)
        # Only what was asked for.
        r = self.s3.get_object_attributes(Bucket=BUCKET, Key="plain", ObjectAttributes=["ObjectSize"])
        self.assertEqual([k for k in r if k not in ("ResponseMetadata", "LastModified")],
                         ["ObjectSize"], r)
        # The aws CLI.
        _, out, _ = self.c.aws("s3api", "get-object-attributes", "--bucket", BUCKET, "--key",
                               "plain", "--object-attributes", "ETag", "ObjectSize")
        self.assertEqual(json.loads(out)["ObjectSize"], len(body), out)

    def test_multipart_with_checksums_pages_its_parts(self):
        parts = [bytes([65 + i]) * (MIN_PART + i) for i in range(3)]
        complete, done = self.multipart("mp-crc", parts, "CRC32")
        r = self.s3.get_object_attributes(Bucket=BUCKET, Key="mp-crc", ObjectAttributes=ALL_ATTRIBUTES)
        self.assertEqual(r["ETag"], complete["ETag"].strip('"'), r)
        self.assertEqual(r["ObjectSize"], sum(map(len, parts)), r)
        self.assertEqual(r["Checksum"]["ChecksumType"], "COMPOSITE", r)
        self.assertEqual(r["Checksum"]["ChecksumCRC32"], complete["ChecksumCRC32"].split("-")[0], r)
        op = r["ObjectParts"]
        self.assertEqual((op["TotalPartsCount"], op["IsTruncated"]), (3, False), r)
        self.assertEqual([(p["PartNumber"], p["Size"], p["ChecksumCRC32"]) for p in op["Parts"]],
                         [(n, len(b), crc32_b64(b)) for n, b in enumerate(parts, 1)], r)
        page = self.s3.get_object_attributes(Bucket=BUCKET, Key="mp-crc", MaxParts=1,
                                             ObjectAttributes=["ObjectParts"])["ObjectParts"]
        self.assertEqual((page["IsTruncated"], page["NextPartNumberMarker"], page["MaxParts"],
                          [p["PartNumber"] for p in page["Parts"]]), (True, 1, 1, [1]), page)
        page = self.s3.get_object_attributes(Bucket=BUCKET, Key="mp-crc", MaxParts=5,
                                             PartNumberMarker=1,
                                             ObjectAttributes=["ObjectParts"])["ObjectParts"]
        self.assertEqual((page["IsTruncated"], page["PartNumberMarker"],
                          [p["PartNumber"] for p in page["Parts"]]), (False, 1, [2, 3]), page)

    def test_multipart_without_checksums_counts_its_parts(self):
        parts = [b"x" * MIN_PART, b"y" * 10]
        complete, _ = self.multipart("mp-plain", parts)
        r = self.s3.get_object_attributes(Bucket=BUCKET, Key="mp-plain", ObjectAttributes=ALL_ATTRIBUTES)
        self.assertEqual(r["ETag"], complete["ETag"].strip('"'), r)
        self.assertTrue(r["ETag"].endswith("-2"), r)
        self.assertEqual(r["ObjectParts"], {"TotalPartsCount": 2}, r)
        self.assertNotIn("Checksum", r, r)

    def test_versioned_objects_and_delete_markers(self):
        bucket = "gaps-versions"
        self.s3.create_bucket(Bucket=bucket)
        self.s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        v1 = self.s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
        v2 = self.s3.put_object(Bucket=bucket, Key="k", Body=b"second")["VersionId"]
        r = self.s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectSize"])
        self.assertEqual((r["VersionId"], r["ObjectSize"]), (v2, 6), r)
        r = self.s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=v1,
                                          ObjectAttributes=["ObjectSize"])
        self.assertEqual((r["VersionId"], r["ObjectSize"]), (v1, 3), r)
        marker = self.s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
        err = self.assert_client_error(self.s3.get_object_attributes, "NoSuchKey", 404,
                                       Bucket=bucket, Key="k", ObjectAttributes=["ObjectSize"])
        headers = err["ResponseMetadata"]["HTTPHeaders"]
        self.assertEqual((headers.get("x-amz-delete-marker"), headers.get("x-amz-version-id")),
                         ("true", marker), err)
        self.assert_client_error(self.s3.get_object_attributes, "MethodNotAllowed", 405,
                                 Bucket=bucket, Key="k", VersionId=marker,
                                 ObjectAttributes=["ObjectSize"])
        self.s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
        self.assert_client_error(self.s3.get_object_attributes, "NoSuchVersion", 404,
                                 Bucket=bucket, Key="k", VersionId=v1,
                                 ObjectAttributes=["ObjectSize"])

    def test_bad_requests(self):
        self.s3.put_object(Bucket=BUCKET, Key="bad-attrs", Body=b"b")
        raw = h.S3Raw(self.c)
        resp = raw.request("GET", f"/{BUCKET}/bad-attrs", query=[("attributes", "")])
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidArgument"), resp)
        resp = raw.request("GET", f"/{BUCKET}/bad-attrs", query=[("attributes", "")],
                           headers={"x-amz-object-attributes": "ETag,Colour"})
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidArgument"), resp)
        resp = raw.request("GET", f"/{BUCKET}/bad-attrs", query=[("attributes", "")],
                           headers={"x-amz-object-attributes": "ETag", "x-amz-max-parts": "-1"})
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidArgument"), resp)
        self.assert_client_error(self.s3.get_object_attributes, "NoSuchKey", 404, Bucket=BUCKET,
                                 Key="no-such-key", ObjectAttributes=["ETag"])


class ConditionalDeleteTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()

    def exists(self, key, bucket=BUCKET):
        return h.S3Raw(self.c).head_status(bucket, key) == 200

    def test_delete_object_if_match(self):
        etag = self.s3.put_object(Bucket=BUCKET, Key="cond", Body=b"c")["ETag"]
        self.assert_client_error(self.s3.delete_object, "PreconditionFailed", 412, Bucket=BUCKET,
                                 Key="cond", IfMatch='"0123456789abcdef0123456789abcdef"')
        self.assertTrue(self.exists("cond"))
        self.s3.delete_object(Bucket=BUCKET, Key="cond", IfMatch=etag)
        self.assertFalse(self.exists("cond"))
        self.assert_client_error(self.s3.delete_object, "NoSuchKey", 404, Bucket=BUCKET,
                                 Key="cond", IfMatch=etag)
        self.s3.put_object(Bucket=BUCKET, Key="cond-any", Body=b"c")
        self.s3.delete_object(Bucket=BUCKET, Key="cond-any", IfMatch="*")
        self.assertFalse(self.exists("cond-any"))

    def test_delete_object_size_and_time(self):
        self.s3.put_object(Bucket=BUCKET, Key="cond-size", Body=b"12345")
        head = self.s3.head_object(Bucket=BUCKET, Key="cond-size")
        self.assert_client_error(self.s3.delete_object, "PreconditionFailed", 412, Bucket=BUCKET,
                                 Key="cond-size", IfMatchSize=4)
        other_time = head["LastModified"] - datetime.timedelta(seconds=10)
        self.assert_client_error(self.s3.delete_object, "PreconditionFailed", 412, Bucket=BUCKET,
                                 Key="cond-size", IfMatchLastModifiedTime=other_time)
        self.assertTrue(self.exists("cond-size"))
        self.s3.delete_object(Bucket=BUCKET, Key="cond-size", IfMatchSize=5,
                              IfMatchLastModifiedTime=head["LastModified"])
        self.assertFalse(self.exists("cond-size"))
        # Without If-Match, a missing key answers 204.
        self.s3.delete_object(Bucket=BUCKET, Key="cond-size", IfMatchSize=5)
        raw = h.S3Raw(self.c)
        resp = raw.request("DELETE", f"/{BUCKET}/cond-size", headers={"x-amz-if-match-size": "x"})
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidArgument"), resp)

    def test_delete_objects_with_etags(self):
        etag_a = self.s3.put_object(Bucket=BUCKET, Key="batch-a", Body=b"a")["ETag"]
        self.s3.put_object(Bucket=BUCKET, Key="batch-b", Body=b"b")
        self.s3.put_object(Bucket=BUCKET, Key="batch-c", Body=b"ccc")
        r = self.s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [
            {"Key": "batch-a", "ETag": etag_a},
            {"Key": "batch-b", "ETag": etag_a},
            {"Key": "batch-c", "Size": 1},
        ]})
        self.assertEqual([d["Key"] for d in r.get("Deleted", [])], ["batch-a"], r)
        self.assertEqual(sorted((e["Key"], e["Code"]) for e in r.get("Errors", [])),
                         [("batch-b", "PreconditionFailed"), ("batch-c", "PreconditionFailed")], r)
        self.assertEqual((self.exists("batch-a"), self.exists("batch-b"), self.exists("batch-c")),
                         (False, True, True))
        r = self.s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "batch-c", "Size": 3}]})
        self.assertEqual([d["Key"] for d in r.get("Deleted", [])], ["batch-c"], r)
        self.assertFalse(self.exists("batch-c"))


class ErrorCodeTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()
        self.raw = h.S3Raw(self.c)

    def test_bad_checksum_is_bad_digest(self):
        self.assert_client_error(self.s3.put_object, "BadDigest", 400, Bucket=BUCKET,
                                 Key="bad-crc", Body=b"abc", ChecksumCRC32=crc32_b64(b"abd"))
        self.assertEqual(self.raw.head_status(BUCKET, "bad-crc"), 404)

    def test_part_number_past_the_parts(self):
        self.s3.put_object(Bucket=BUCKET, Key="one-part", Body=b"abc")
        err = self.assert_client_error(self.s3.get_object, "InvalidPartNumber", 416,
                                       Bucket=BUCKET, Key="one-part", PartNumber=2)
        self.assertEqual(self.s3.head_object(Bucket=BUCKET, Key="one-part",
                                             PartNumber=1)["ContentLength"], 3, err)

    def test_complete_errors(self):
        parts = {"Parts": [{"PartNumber": 1, "ETag": '"x"'}]}
        self.assert_client_error(self.s3.complete_multipart_upload, "NoSuchUpload", 404,
                                 Bucket=BUCKET, Key="never-created", UploadId="no-such-upload",
                                 MultipartUpload=parts)
        upload = self.s3.create_multipart_upload(Bucket=BUCKET, Key="empty-complete")["UploadId"]
        # AWS-recorded (D46): an empty body is InvalidRequest, not MalformedXML.
        resp = self.raw.request("POST", f"/{BUCKET}/empty-complete", query=[("uploadId", upload)])
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidRequest"), resp)
        resp = self.raw.request("POST", f"/{BUCKET}/empty-complete", query=[("uploadId", upload)],
                                body=b"<CompleteMultipartUpload")
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "MalformedXML"), resp)

    def test_presigned_expiry(self):
        url = self.s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "x"},
                                             ExpiresIn=604801)
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        resp = self.raw.send("GET", parts.path, query)
        self.assertEqual((resp.status, resp.error()["Code"]),
                         (400, "AuthorizationQueryParametersError"), resp)
        self.s3.put_object(Bucket=BUCKET, Key="expiring", Body=b"e")
        url = self.s3.generate_presigned_url("get_object",
                                             Params={"Bucket": BUCKET, "Key": "expiring"},
                                             ExpiresIn=1)
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        self.assertTrue(h.wait_until(
            lambda: self.raw.send("GET", parts.path, query).status == 403, 10, 0.5))
        resp = self.raw.send("GET", parts.path, query)
        self.assertEqual((resp.error()["Code"], resp.error()["Message"]),
                         ("AccessDenied", "Request has expired"), resp)

    def test_head_tagging_count_and_delete_marker_headers(self):
        self.s3.put_object(Bucket=BUCKET, Key="tagged", Body=b"t", Tagging="a=1&b=2")
        self.assertEqual(self.s3.head_object(Bucket=BUCKET, Key="tagged").get("TagCount"), 2)
        bucket = "gaps-markers"
        self.s3.create_bucket(Bucket=bucket)
        self.s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        self.s3.put_object(Bucket=bucket, Key="k", Body=b"k")
        r = self.s3.delete_object(Bucket=bucket, Key="k")
        self.assertTrue(r.get("DeleteMarker"), r)
        r2 = self.s3.delete_object(Bucket=bucket, Key="k", VersionId=r["VersionId"])
        self.assertEqual((r2.get("DeleteMarker"), r2.get("VersionId")), (True, r["VersionId"]), r2)

    def test_http_chunked_put_is_not_implemented(self):
        signed = self.raw.sign("PUT", f"/{BUCKET}/te-chunked", [], {"Transfer-Encoding": "chunked"},
                               "UNSIGNED-PAYLOAD")
        resp = self.raw.send_raw(h.raw_head("PUT", f"/{BUCKET}/te-chunked", self.raw.host,
                                            signed.headers), [b"5\r\nhello\r\n0\r\n\r\n"])
        self.assertEqual((resp.status, resp.error()["Code"], resp.error().get("Header")),
                         (501, "NotImplemented", "Transfer-Encoding"), resp)
        self.assertEqual(self.raw.head_status(BUCKET, "te-chunked"), 404)

    def test_unimplemented_sub_resources_are_refused(self):
        self.s3.put_object(Bucket=BUCKET, Key="locked", Body=b"keep me")
        for method, query in (("GET", "retention"), ("GET", "legal-hold"), ("GET", "torrent"),
                              ("PUT", "retention"), ("PUT", "legal-hold")):
            resp = self.raw.request(method, f"/{BUCKET}/locked", query=[(query, "")],
                                    body=b"<Retention/>" if method == "PUT" else b"")
            self.assertEqual((resp.status, resp.error()["Code"]), (501, "NotImplemented"), resp)
        for method, query in (("GET", "metrics"), ("GET", "inventory"), ("GET", "analytics"),
                              ("GET", "intelligent-tiering"), ("POST", "metadataTable")):
            resp = self.raw.request(method, f"/{BUCKET}", query=[(query, "")])
            self.assertEqual((resp.status, resp.error()["Code"]), (501, "NotImplemented"), resp)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="locked")["Body"].read(), b"keep me")

    def test_location_constraints_of_other_regions(self):
        for constraint, code in (("eu-west-1", "IllegalLocationConstraintException"),
                                 ("us-gov-west-1", "IllegalLocationConstraintException"),
                                 ("us-east-1", "InvalidLocationConstraint"),
                                 ("not-a-region", "InvalidLocationConstraint")):
            with self.subTest(constraint=constraint):
                err = self.assert_client_error(
                    self.s3.create_bucket, code, 400, Bucket="gaps-elsewhere",
                    CreateBucketConfiguration={"LocationConstraint": constraint})
                if code == "IllegalLocationConstraintException":
                    self.assertIn(f"The {constraint} location constraint", err["Error"]["Message"])
        self.assertEqual(self.raw.request("HEAD", "/gaps-elsewhere").status, 404)

    def test_recreating_an_owned_bucket_in_us_east_1(self):
        # AWS's legacy us-east-1 answer: 200, and the bucket's ACL reset to
        # what the request asks (private when nothing). Elsewhere it is 409
        # BucketAlreadyOwnedByYou (test_s3_region.py).
        bucket = "gaps-recreated"
        self.s3.create_bucket(Bucket=bucket, ACL="public-read")
        self.s3.put_object(Bucket=bucket, Key="kept", Body=b"k")
        grants = lambda: [g["Permission"] for g in self.s3.get_bucket_acl(Bucket=bucket)["Grants"]]
        self.assertEqual(sorted(grants()), ["FULL_CONTROL", "READ"])
        self.s3.create_bucket(Bucket=bucket)
        self.assertEqual(grants(), ["FULL_CONTROL"])
        self.s3.create_bucket(Bucket=bucket, ACL="public-read")
        self.assertEqual(sorted(grants()), ["FULL_CONTROL", "READ"])
        self.assertEqual(self.s3.get_object(Bucket=bucket, Key="kept")["Body"].read(), b"k")
        self.s3.delete_object(Bucket=bucket, Key="kept")
        self.s3.delete_bucket(Bucket=bucket)


class ListingTest(h.ClusterTestCase):
    """Listing answers as AWS recorded them (D46)."""

    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()
        self.raw = h.S3Raw(self.c)

    def test_listing_parameters(self):
        bucket = "gaps-listing"
        self.s3.create_bucket(Bucket=bucket)
        for key in ("a b+c", "b/1", "c"):
            self.s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        resp = self.raw.request("GET", f"/{bucket}", query=[("list-type", "2"),
                                                            ("encoding-type", "url")])
        self.assertIn(b"<Key>a+b%2Bc</Key>", resp.body, resp)
        # botocore asks for encoding-type=url itself and decodes with unquote_plus.
        r = self.s3.list_objects_v2(Bucket=bucket)
        self.assertEqual(r.get("EncodingType"), "url", r)
        self.assertEqual([o["Key"] for o in r["Contents"]], ["a b+c", "b/1", "c"], r)
        r = self.s3.list_objects_v2(Bucket=bucket, StartAfter="a", MaxKeys=1)
        self.assertEqual((r["StartAfter"], [o["Key"] for o in r["Contents"]]), ("a", ["a b+c"]), r)
        resp = self.raw.request("GET", f"/{bucket}", query=[("list-type", "2"),
                                                            ("continuation-token", "")])
        self.assertEqual((resp.status, resp.error()["Code"]), (400, "InvalidArgument"), resp)
        # allow-unordered is RGW's, not AWS's: ignored, as AWS ignores it.
        resp = self.raw.request("GET", f"/{bucket}", query=[("list-type", "2"),
                                                            ("allow-unordered", "true"),
                                                            ("delimiter", "/")])
        self.assertEqual(resp.status, 200, resp)
        self.assertIn(b"<Prefix>b/</Prefix>", resp.body, resp)
        _, out, _ = self.c.aws("s3api", "list-objects-v2", "--bucket", bucket, "--start-after", "b")
        self.assertEqual([o["Key"] for o in json.loads(out)["Contents"]], ["b/1", "c"], out)


class MultipartChecksumTest(h.ClusterTestCase):
    def test_completion_validates_the_upload_checksum(self):
        s3 = self.c.boto3_client()
        key = "mp-check"
        upload = s3.create_multipart_upload(Bucket=BUCKET, Key=key,
                                            ChecksumAlgorithm="SHA256")["UploadId"]
        body = b"s" * MIN_PART
        r = s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=1, Body=body,
                           ChecksumAlgorithm="SHA256")
        # Parts listed without their checksums.
        err = self.assert_client_error(
            s3.complete_multipart_upload, "InvalidRequest", 400, Bucket=BUCKET, Key=key,
            UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": r["ETag"]}]})
        self.assertIn("sha256", err["Error"]["Message"].lower(), err)
        # A wrong part checksum.
        self.assert_client_error(
            s3.complete_multipart_upload, "InvalidPart", 400, Bucket=BUCKET, Key=key,
            UploadId=upload, MultipartUpload={"Parts": [{
                "PartNumber": 1, "ETag": r["ETag"],
                "ChecksumSHA256": base64.b64encode(b"\0" * 32).decode()}]})
        done = s3.complete_multipart_upload(
            Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={"Parts": [{
                "PartNumber": 1, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]}]})
        self.assertTrue(done["ChecksumSHA256"].endswith("-1"), done)
        head = s3.head_object(Bucket=BUCKET, Key=key, ChecksumMode="ENABLED")
        self.assertEqual(head["ChecksumSHA256"], done["ChecksumSHA256"], head)


if __name__ == "__main__":
    unittest.main(verbosity=2)
