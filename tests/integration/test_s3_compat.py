#!/usr/bin/env python3
"""S3 behaviours checked against answers recorded from AWS itself.

Goal: prove against a whole local Tessera cluster that what a sweep of
AWS-recorded expectations (LocalStack's aws-validated snapshots, ceph's
s3-tests) found different now matches AWS:
  1. every response carries Date, and listings x-amz-bucket-region;
  2. an If-Modified-Since in the future is ignored (GET 200, copy 200);
  3. a malformed version id is InvalidArgument on DeleteObject and a
     NoSuchVersion error entry in DeleteObjects (nothing deleted);
  4. a delete marker read by version id answers 405 with Allow: DELETE,
     and deleting it through DeleteObjects names DeleteMarkerVersionId;
  5. a SigV2 presigned PUT whose metadata and Content-Type travel as query
     parameters (botocore's default presigned form in us-east-1) stores
     them;
  6. x-amz-checksum-mode is read case-insensitively and PutObject names
     its checksum type; conditional PUT forms S3 lacks are NotImplemented;
  7. ListParts names the upload's checksum algorithm and type and each
     part's checksum, so a client can resume an upload from it; listings
     of objects, versions and uploads name each entry's algorithm and type;
  8. object tags are set, read, counted and deleted per version
     (PutObjectTagging, GetObjectTagging, DeleteObjectTagging), bad tag
     sets are InvalidTag naming the key, and delete markers have none.
One cluster for the whole file.
"""

import datetime
import email.utils
import time
import unittest
import urllib.parse

import s3_harness as h

CLUSTER = None
BUCKET = "compat"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-compat")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    CLUSTER.boto3_client().create_bucket(Bucket=BUCKET)


def http_date(offset_s):
    return email.utils.formatdate(time.time() + offset_s, usegmt=True)


class CompatTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()
        self.raw = h.S3Raw(self.c)

    def test_date_and_bucket_region_headers(self):
        self.s3.put_object(Bucket=BUCKET, Key="dated", Body=b"d")
        for resp in (self.raw.request("HEAD", f"/{BUCKET}/dated"),
                     self.raw.request("GET", f"/{BUCKET}/no-such-key"),
                     self.raw.request("GET", f"/{BUCKET}", query=[("list-type", "2")])):
            with self.subTest(status=resp.status):
                sent = email.utils.parsedate_to_datetime(resp.header("date"))
                now = datetime.datetime.now(datetime.timezone.utc)
                self.assertLess(abs((now - sent).total_seconds()), 60, resp)
        for query in ([("list-type", "2")], []):
            resp = self.raw.request("GET", f"/{BUCKET}", query=query)
            self.assertEqual(resp.header("x-amz-bucket-region"), "us-east-1", resp)

    def test_future_if_modified_since_is_ignored(self):
        self.s3.put_object(Bucket=BUCKET, Key="future", Body=b"f")
        future, past = http_date(86400), http_date(-86400)
        resp = self.raw.request("GET", f"/{BUCKET}/future", headers={"If-Modified-Since": future})
        self.assertEqual((resp.status, resp.body), (200, b"f"), resp)
        resp = self.raw.request("GET", f"/{BUCKET}/future",
                                headers={"If-Modified-Since": http_date(1)})
        self.assertIn(resp.status, (200, 304), resp)  # the boundary second either way
        resp = self.raw.request("GET", f"/{BUCKET}/future", headers={"If-Modified-Since": past})
        self.assertEqual(resp.status, 200, resp)
        self.s3.copy_object(Bucket=BUCKET, Key="future-copy",
                            CopySource={"Bucket": BUCKET, "Key": "future"},
                            CopySourceIfModifiedSince=datetime.datetime.now(
                                datetime.timezone.utc) + datetime.timedelta(days=1))
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="future-copy")["Body"].read(), b"f")

    def test_malformed_version_ids(self):
        self.s3.put_object(Bucket=BUCKET, Key="versioned-id", Body=b"v")
        self.assert_client_error(self.s3.delete_object, "InvalidArgument", 400, Bucket=BUCKET,
                                 Key="versioned-id", VersionId="not-a-version")
        r = self.s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [
            {"Key": "versioned-id", "VersionId": "not-a-version"}]})
        self.assertEqual([(e["Key"], e["Code"]) for e in r.get("Errors", [])],
                         [("versioned-id", "NoSuchVersion")], r)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="versioned-id")["Body"].read(), b"v")

    def test_delete_marker_by_version(self):
        bucket = "compat-versions"
        self.s3.create_bucket(Bucket=bucket)
        self.s3.put_bucket_versioning(Bucket=bucket,
                                      VersioningConfiguration={"Status": "Enabled"})
        v1 = self.s3.put_object(Bucket=bucket, Key="k", Body=b"1")["VersionId"]
        marker = self.s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
        resp = self.raw.request("GET", f"/{bucket}/k", query=[("versionId", marker)])
        self.assertEqual((resp.status, resp.header("allow"), resp.header("x-amz-delete-marker")),
                         (405, "DELETE", "true"), resp)
        r = self.s3.delete_objects(Bucket=bucket, Delete={"Objects": [
            {"Key": "k", "VersionId": marker}, {"Key": "k", "VersionId": v1}]})
        deleted = {d["VersionId"]: d for d in r["Deleted"]}
        self.assertEqual((deleted[marker].get("DeleteMarker"),
                          deleted[marker].get("DeleteMarkerVersionId")), (True, marker), r)
        self.assertNotIn("DeleteMarkerVersionId", deleted[v1], r)
        self.s3.delete_bucket(Bucket=bucket)

    def test_sigv2_presigned_put_with_metadata_in_the_query(self):
        v2 = self.c.boto3_client(signature="s3")
        url = v2.generate_presigned_url(
            "put_object", Params={"Bucket": BUCKET, "Key": "presigned-meta",
                                  "Metadata": {"colour": "blue"}, "ContentType": "text/plain"},
            ExpiresIn=300)
        parts = urllib.parse.urlsplit(url)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        self.assertIn("x-amz-meta-colour", [n for n, _ in query], url)
        self.assertIn("AWSAccessKeyId", [n for n, _ in query], url)
        resp = self.raw.send("PUT", parts.path, query, body=b"hello")
        self.assertEqual(resp.status, 200, resp)
        head = self.s3.head_object(Bucket=BUCKET, Key="presigned-meta")
        self.assertEqual((head["Metadata"], head["ContentType"]), ({"colour": "blue"}, "text/plain"))
        # The metadata is signed: another value in the query is refused.
        tampered = [(n, "red" if n == "x-amz-meta-colour" else v) for n, v in query]
        resp = self.raw.send("PUT", parts.path, tampered, body=b"hello")
        self.assertEqual(resp.status, 403, resp)

    def test_conditional_put_forms_s3_does_not_implement(self):
        for headers in ({"If-Match": "*"}, {"If-Match": '"abc"', "If-None-Match": "*"},
                        {"If-None-Match": '"abc"'}):
            with self.subTest(headers=headers):
                resp = self.raw.request("PUT", f"/{BUCKET}/cond-forms", body=b"c", headers=headers)
                self.assertEqual(resp.status, 501, resp)
        self.assertEqual(self.raw.request("HEAD", f"/{BUCKET}/cond-forms").status, 404)

    def test_checksum_mode_any_case(self):
        put = self.s3.put_object(Bucket=BUCKET, Key="summed", Body=b"sum", ChecksumAlgorithm="CRC32")
        self.assertEqual(put["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type"),
                         "FULL_OBJECT", put)
        for listing in (self.s3.list_objects_v2(Bucket=BUCKET, Prefix="summed")["Contents"],
                        self.s3.list_objects(Bucket=BUCKET, Prefix="summed")["Contents"],
                        self.s3.list_object_versions(Bucket=BUCKET, Prefix="summed")["Versions"]):
            self.assertEqual([(e["ChecksumAlgorithm"], e["ChecksumType"]) for e in listing],
                             [(["CRC32"], "FULL_OBJECT")], listing)
        for mode in ("ENABLED", "enabled"):
            resp = self.raw.request("GET", f"/{BUCKET}/summed", headers={"x-amz-checksum-mode": mode})
            self.assertEqual(resp.status, 200, resp)
            self.assertTrue(resp.header("x-amz-checksum-crc32"), resp)

    def test_list_parts_carries_checksums_for_a_resumed_upload(self):
        key = "resumed"
        upload = self.s3.create_multipart_upload(Bucket=BUCKET, Key=key,
                                                 ChecksumAlgorithm="SHA256")["UploadId"]
        sent = self.s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=1,
                                   Body=b"part one", ChecksumAlgorithm="SHA256")
        listed = self.s3.list_parts(Bucket=BUCKET, Key=key, UploadId=upload)
        self.assertEqual((listed.get("ChecksumAlgorithm"), listed.get("ChecksumType")),
                         ("SHA256", "COMPOSITE"), listed)
        part = listed["Parts"][0]
        self.assertEqual(part["ChecksumSHA256"], sent["ChecksumSHA256"], listed)
        # Empty max-parts= and part-number-marker= are the defaults.
        resp = self.raw.request("GET", f"/{BUCKET}/{key}", query=[
            ("uploadId", upload), ("max-parts", ""), ("part-number-marker", "")])
        self.assertEqual(resp.status, 200, resp)
        self.assertIn(b"<PartNumber>1</PartNumber>", resp.body, resp)
        # Resume: the completion is rebuilt from the listing alone.
        self.s3.complete_multipart_upload(
            Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={"Parts": [
                {"PartNumber": p["PartNumber"], "ETag": p["ETag"],
                 "ChecksumSHA256": p["ChecksumSHA256"]} for p in listed["Parts"]]})
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read(), b"part one")
        ongoing = self.s3.create_multipart_upload(Bucket=BUCKET, Key="ongoing",
                                                  ChecksumAlgorithm="SHA256")["UploadId"]
        self.addCleanup(self.s3.abort_multipart_upload, Bucket=BUCKET, Key="ongoing",
                        UploadId=ongoing)
        uploads = self.s3.list_multipart_uploads(Bucket=BUCKET, Prefix="ongoing")["Uploads"]
        self.assertEqual([(u["ChecksumAlgorithm"], u["ChecksumType"]) for u in uploads],
                         [("SHA256", "COMPOSITE")], uploads)
        # The completed object's composite checksum, as listings show it.
        entry = self.s3.list_objects_v2(Bucket=BUCKET, Prefix=key)["Contents"][0]
        self.assertEqual((entry["ChecksumAlgorithm"], entry["ChecksumType"]),
                         (["SHA256"], "COMPOSITE"), entry)
        plain = self.s3.create_multipart_upload(Bucket=BUCKET, Key="plain")["UploadId"]
        self.addCleanup(self.s3.abort_multipart_upload, Bucket=BUCKET, Key="plain", UploadId=plain)
        self.assertNotIn("ChecksumAlgorithm",
                         self.s3.list_parts(Bucket=BUCKET, Key="plain", UploadId=plain))

    def test_object_tagging_per_version(self):
        s3 = self.s3
        s3.put_object(Bucket=BUCKET, Key="tagged", Body=b"t")
        tags = [{"Key": "team", "Value": "storage"}, {"Key": "empty", "Value": ""}]
        s3.put_object_tagging(Bucket=BUCKET, Key="tagged", Tagging={"TagSet": tags})
        self.assertEqual(s3.get_object_tagging(Bucket=BUCKET, Key="tagged")["TagSet"], tags)
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="tagged")["TagCount"], 2)
        s3.delete_object_tagging(Bucket=BUCKET, Key="tagged")
        self.assertEqual(s3.get_object_tagging(Bucket=BUCKET, Key="tagged")["TagSet"], [])
        self.assertNotIn("TagCount", s3.get_object(Bucket=BUCKET, Key="tagged"))
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="tagged")["Body"].read(), b"t")
        # Bad sets: InvalidTag naming the key; nothing changes.
        for bad, tag_key in (([{"Key": f"k{i}", "Value": "v"} for i in range(11)], None),
                             ([{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}], "dup"),
                             ([{"Key": "aws:reserved", "Value": "v"}], "aws:reserved"),
                             ([{"Key": "k" * 129, "Value": "v"}], "k" * 129)):
            err = self.assert_client_error(s3.put_object_tagging, "InvalidTag", 400,
                                           Bucket=BUCKET, Key="tagged", Tagging={"TagSet": bad})
            if tag_key is not None:
                self.assertEqual(err["Error"].get("TagKey"), tag_key, err)
        self.assertEqual(s3.get_object_tagging(Bucket=BUCKET, Key="tagged")["TagSet"], [])
        self.assert_client_error(s3.put_object_tagging, "NoSuchKey", 404, Bucket=BUCKET,
                                 Key="untagged-missing", Tagging={"TagSet": tags})
        err = self.assert_client_error(s3.put_object, "InvalidArgument", 400, Bucket=BUCKET,
                                       Key="dup-header", Body=b"x", Tagging="a=1&a=2")
        self.assertEqual(err["Error"].get("ArgumentName"), "x-amz-tagging", err)

        versioned = "compat-tag-versions"
        s3.create_bucket(Bucket=versioned)
        s3.put_bucket_versioning(Bucket=versioned, VersioningConfiguration={"Status": "Enabled"})
        v1 = s3.put_object(Bucket=versioned, Key="k", Body=b"1")["VersionId"]
        v2 = s3.put_object(Bucket=versioned, Key="k", Body=b"2")["VersionId"]
        r = s3.put_object_tagging(Bucket=versioned, Key="k", VersionId=v1,
                                  Tagging={"TagSet": [{"Key": "old", "Value": "1"}]})
        self.assertEqual(r["VersionId"], v1)
        r = s3.put_object_tagging(Bucket=versioned, Key="k",
                                  Tagging={"TagSet": [{"Key": "new", "Value": "2"}]})
        self.assertEqual(r["VersionId"], v2, "no version id: the latest")
        got = s3.get_object_tagging(Bucket=versioned, Key="k", VersionId=v1)
        self.assertEqual((got["VersionId"], got["TagSet"]), (v1, [{"Key": "old", "Value": "1"}]))
        self.assertEqual(s3.get_object_tagging(Bucket=versioned, Key="k")["TagSet"],
                         [{"Key": "new", "Value": "2"}])
        marker = s3.delete_object(Bucket=versioned, Key="k")["VersionId"]
        for kw in ({}, {"VersionId": marker}):
            with self.subTest(marker=kw):
                err = self.assert_client_error(
                    s3.put_object_tagging, "MethodNotAllowed", 405, Bucket=versioned, Key="k",
                    Tagging={"TagSet": tags}, **kw)
                self.assertEqual((err["Error"].get("Method"), err["Error"].get("ResourceType")),
                                 ("PUT", "DeleteMarker"), err)
                self.assert_client_error(s3.get_object_tagging, "MethodNotAllowed", 405,
                                         Bucket=versioned, Key="k", **kw)
        # The older versions keep their tags behind the marker.
        self.assertEqual(s3.get_object_tagging(Bucket=versioned, Key="k", VersionId=v2)["TagSet"],
                         [{"Key": "new", "Value": "2"}])
        for v in (v1, v2, marker):
            s3.delete_object(Bucket=versioned, Key="k", VersionId=v)
        s3.delete_bucket(Bucket=versioned)


if __name__ == "__main__":
    unittest.main(verbosity=2)
