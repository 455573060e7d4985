#!/usr/bin/env python3
"""CopyObject, UploadPartCopy, ListMultipartUploads, composite checksums and
the pipelined blob writer, against a whole local cluster.

Goal: prove that
  1. copy_object copies bytes and metadata (COPY), replaces them (REPLACE),
     copies or replaces tags, honours x-amz-copy-source-if-* (412), copies a
     given versionId (x-amz-copy-source-version-id; x-amz-version-id on a
     versioned destination), allows a same-key copy with REPLACE and refuses
     one without (InvalidRequest), takes URL-encoded sources with or without
     a leading slash, copies across the caller's buckets, and answers
     AccessDenied / NoSuchBucket / NoSuchKey / NoSuchVersion /
     InvalidArgument for foreign, missing and malformed sources;
  2. `aws s3 cp s3://a/big s3://b/big` of 100 MiB (UploadPartCopy, 8 MiB
     parts, CRC32 by default) is byte-identical; upload_part_copy honours
     ranges and refuses ranges outside the source;
  3. list_multipart_uploads pages over many uploads with prefix, delimiter,
     key/upload-id markers and max-uploads, each upload exactly once, one
     key's uploads in the order they were created;
  4. an upload created with ChecksumAlgorithm=CRC32 completes with the
     composite checksum base64(crc32(raw part crc32s))-N, shown by
     head_object(ChecksumMode=ENABLED); a wrong or missing part checksum is
     refused; with ChecksumType=FULL_OBJECT (CRC32; CRC64NVME by default) it
     completes with the CRC of the whole body, checked against a declared
     one (BadDigest), and botocore verifies it on GET; SHA256 full-object
     and CRC64NVME composite uploads are refused;
  5. a 64 MiB PutObject (pipelined blob writes) round-trips byte-identical,
     and a body cut off mid-way leaves the router serving.
One cluster for the whole file (small parts allowed: s3_min_part_bytes 1024).
"""

import base64
import hashlib
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time
import unittest
import zlib

import s3_harness as h

CLUSTER = None
BOB = {}
MiB = 1 << 20


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-copy", router_settings="s3_min_part_bytes: 1024")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    BOB["access_key"], BOB["secret_key"] = CLUSTER.create_user("bob")
    bob = h.S3Raw(CLUSTER, access_key=BOB["access_key"], secret_key=BOB["secret_key"])

    def create_bobs_bucket():
        r = bob.request("PUT", "/bobs-copy-bucket")
        return r if r.status != 403 else None
    r = h.wait_until(create_bobs_bucket, 10, 0.05)
    assert r is not None and r.status == 200, r
    bob.request("PUT", "/bobs-copy-bucket/secret", body=b"bob's bytes")


def crc32_raw(data):
    return struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)


def crc64nvme_b64(data):
    """CRC64NVME by its definition (botocore needs awscrt for it)."""
    crc = 0xFFFFFFFFFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x9A6C9329AC4BC9B5 if crc & 1 else crc >> 1
    return base64.b64encode(struct.pack(">Q", crc ^ 0xFFFFFFFFFFFFFFFF)).decode()


class CopyTestCase(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()

    def bucket(self, name, versioned=False):
        self.s3.create_bucket(Bucket=name)
        if versioned:
            self.s3.put_bucket_versioning(Bucket=name,
                                          VersioningConfiguration={"Status": "Enabled"})
        return name

    def body(self, bucket, key, **kw):
        return self.s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


class CopyObjectTest(CopyTestCase):
    def test_copy_and_replace_metadata_and_tags(self):
        b = self.bucket("copy-meta")
        for size in (100, 300 * 1024):  # inline and blob-backed sources
            data = random.Random(size).randbytes(size)
            src = f"src-{size}"
            self.s3.put_object(Bucket=b, Key=src, Body=data, ContentType="text/x-src",
                               CacheControl="max-age=5", Metadata={"color": "red"},
                               Tagging="t1=a&t2=b")
            etag = self.s3.head_object(Bucket=b, Key=src)["ETag"]
            r = self.s3.copy_object(Bucket=b, Key=f"copy-{size}",
                                    CopySource={"Bucket": b, "Key": src})
            self.assertEqual(r["CopyObjectResult"]["ETag"], etag)
            head = self.s3.head_object(Bucket=b, Key=f"copy-{size}")
            self.assertEqual(head["ContentType"], "text/x-src")
            self.assertEqual(head["CacheControl"], "max-age=5")
            self.assertEqual(head["Metadata"], {"color": "red"})
            self.assertEqual(self.body(b, f"copy-{size}"), data)
            tags = self.s3.get_object_tagging(Bucket=b, Key=f"copy-{size}")["TagSet"]
            self.assertEqual(sorted((t["Key"], t["Value"]) for t in tags),
                             [("t1", "a"), ("t2", "b")])
            self.s3.copy_object(Bucket=b, Key=f"repl-{size}", CopySource={"Bucket": b, "Key": src},
                                MetadataDirective="REPLACE", ContentType="text/x-new",
                                Metadata={"shape": "round"}, TaggingDirective="REPLACE",
                                Tagging="t3=c")
            head = self.s3.head_object(Bucket=b, Key=f"repl-{size}")
            self.assertEqual(head["ContentType"], "text/x-new")
            self.assertEqual(head["Metadata"], {"shape": "round"})
            self.assertNotIn("CacheControl", head)
            tags = self.s3.get_object_tagging(Bucket=b, Key=f"repl-{size}")["TagSet"]
            self.assertEqual([(t["Key"], t["Value"]) for t in tags], [("t3", "c")])
            self.assertEqual(self.body(b, f"repl-{size}"), data)
            # The source is untouched and independent of its copies.
            self.s3.delete_object(Bucket=b, Key=src)
            self.assertEqual(self.body(b, f"copy-{size}"), data)

    def test_copy_source_conditions(self):
        b = self.bucket("copy-cond")
        self.s3.put_object(Bucket=b, Key="src", Body=b"conditional")
        etag = self.s3.head_object(Bucket=b, Key="src")["ETag"]
        import datetime
        past = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
        now = datetime.datetime.now(datetime.timezone.utc)
        future = now + datetime.timedelta(days=1)
        src = {"Bucket": b, "Key": "src"}
        for kw in ({"CopySourceIfMatch": '"0123456789abcdef0123456789abcdef"'},
                   {"CopySourceIfNoneMatch": etag},
                   {"CopySourceIfModifiedSince": now},
                   {"CopySourceIfUnmodifiedSince": past}):
            self.assert_client_error(self.s3.copy_object, "PreconditionFailed", 412, Bucket=b,
                                     Key="dst", CopySource=src, **kw)
        self.assert_client_error(self.s3.head_object, "404", 404, Bucket=b, Key="dst")
        # A modified-since date in the future is invalid and ignored (as AWS).
        for kw in ({"CopySourceIfMatch": etag}, {"CopySourceIfNoneMatch": '"other"'},
                   {"CopySourceIfModifiedSince": past}, {"CopySourceIfModifiedSince": future},
                   {"CopySourceIfUnmodifiedSince": future}):
            self.s3.copy_object(Bucket=b, Key="dst", CopySource=src, **kw)
        self.assertEqual(self.body(b, "dst"), b"conditional")
        # Destination conditions are the copy op's own.
        self.assert_client_error(self.s3.copy_object, "PreconditionFailed", 412, Bucket=b,
                                 Key="dst", CopySource=src, IfNoneMatch="*")

    def test_copy_a_version_into_a_versioned_bucket(self):
        b = self.bucket("copy-versions", versioned=True)
        v1 = self.s3.put_object(Bucket=b, Key="k", Body=b"one")["VersionId"]
        self.s3.put_object(Bucket=b, Key="k", Body=b"two")
        r = self.s3.copy_object(Bucket=b, Key="old", CopySource={"Bucket": b, "Key": "k",
                                                                  "VersionId": v1})
        self.assertEqual(r["CopySourceVersionId"], v1)
        self.assertTrue(r["VersionId"] and r["VersionId"] != "null")
        self.assertEqual(self.body(b, "old"), b"one")
        self.assertEqual(self.body(b, "old", VersionId=r["VersionId"]), b"one")
        self.s3.delete_object(Bucket=b, Key="k", VersionId=v1)
        self.assert_client_error(self.s3.copy_object, "NoSuchVersion", 404, Bucket=b, Key="x",
                                 CopySource={"Bucket": b, "Key": "k", "VersionId": v1})

    def test_same_key_copy(self):
        b = self.bucket("copy-self")
        self.s3.put_object(Bucket=b, Key="me", Body=b"self", Metadata={"a": "1"})
        err = self.assert_client_error(self.s3.copy_object, "InvalidRequest", 400, Bucket=b,
                                       Key="me", CopySource={"Bucket": b, "Key": "me"})
        self.assertIn("This copy request is illegal", err["Error"]["Message"])
        self.s3.copy_object(Bucket=b, Key="me", CopySource={"Bucket": b, "Key": "me"},
                            MetadataDirective="REPLACE", Metadata={"a": "2"})
        head = self.s3.head_object(Bucket=b, Key="me")
        self.assertEqual(head["Metadata"], {"a": "2"})
        self.assertEqual(self.body(b, "me"), b"self")

    def test_encoded_sources_with_and_without_leading_slash(self):
        b = self.bucket("copy-encoded")
        key = "dir/a b+c ü%.txt"
        self.s3.put_object(Bucket=b, Key=key, Body=b"encoded")
        raw = h.S3Raw(self.c)
        encoded = h.uri_encode(key, True)
        for i, source in enumerate((f"/{b}/{encoded}", f"{b}/{encoded}")):
            r = raw.request("PUT", h.key_path(b, f"dst{i}"), headers={"x-amz-copy-source": source})
            self.assertEqual(r.status, 200, r)
            self.assertIn(b"<CopyObjectResult", r.body)
            self.assertEqual(self.body(b, f"dst{i}"), b"encoded")
        # boto3 encodes the source itself.
        self.s3.copy_object(Bucket=b, Key="dst-boto", CopySource={"Bucket": b, "Key": key})
        self.assertEqual(self.body(b, "dst-boto"), b"encoded")
        r = raw.request("PUT", h.key_path(b, "bad"), headers={"x-amz-copy-source": "just-a-bucket"})
        self.assertEqual((r.status, r.error()["Code"]), (400, "InvalidArgument"), r)

    def test_cross_bucket_and_foreign_or_missing_sources(self):
        a, b = self.bucket("copy-from"), self.bucket("copy-to")
        self.s3.put_object(Bucket=a, Key="k", Body=b"across")
        self.s3.copy_object(Bucket=b, Key="k", CopySource={"Bucket": a, "Key": "k"})
        self.assertEqual(self.body(b, "k"), b"across")
        self.assert_client_error(self.s3.copy_object, "AccessDenied", 403, Bucket=b, Key="stolen",
                                 CopySource={"Bucket": "bobs-copy-bucket", "Key": "secret"})
        self.assert_client_error(self.s3.copy_object, "NoSuchBucket", 404, Bucket=b, Key="x",
                                 CopySource={"Bucket": "no-such-copy-bucket", "Key": "k"})
        self.assert_client_error(self.s3.copy_object, "NoSuchKey", 404, Bucket=b, Key="x",
                                 CopySource={"Bucket": a, "Key": "missing"})


class PartCopyTest(CopyTestCase):
    def aws_default_env(self):
        """The aws CLI with its default s3 settings (8 MiB parts)."""
        config = os.path.join(self.tmp, "aws-config-default")
        with open(config, "w") as f:
            f.write(f"[default]\nregion = {h.REGION}\n")
        env = self.c.client_env()
        env["AWS_CONFIG_FILE"] = config
        return env

    def test_aws_cp_between_buckets_100mib(self):
        a, b = self.bucket("cp-src"), self.bucket("cp-dst")
        data = random.Random(7).randbytes(100 * MiB)
        self.s3.put_object(Bucket=a, Key="big", Body=data)
        self.c.aws("s3", "cp", "--only-show-errors", f"s3://{a}/big", f"s3://{b}/big",
                   env=self.aws_default_env())
        head = self.s3.head_object(Bucket=b, Key="big")
        self.assertEqual(head["ContentLength"], len(data))
        self.assertTrue(head["ETag"].endswith('-13"'), head["ETag"])  # 8 MiB part copies
        got = self.body(b, "big")
        self.assertTrue(hashlib.sha256(got).digest() == hashlib.sha256(data).digest(),
                        "the copied 100 MiB differ")

    def test_upload_part_copy_ranges(self):
        b = self.bucket("part-copy")
        data = random.Random(3).randbytes(3 * MiB + 17)
        self.s3.put_object(Bucket=b, Key="src", Body=data)
        up = self.s3.create_multipart_upload(Bucket=b, Key="dst")["UploadId"]
        ranges = [(0, MiB - 1), (MiB, 3 * MiB + 16)]
        parts = []
        for n, (first, last) in enumerate(ranges, 1):
            r = self.s3.upload_part_copy(Bucket=b, Key="dst", UploadId=up, PartNumber=n,
                                         CopySource={"Bucket": b, "Key": "src"},
                                         CopySourceRange=f"bytes={first}-{last}")
            etag = r["CopyPartResult"]["ETag"]
            self.assertEqual(etag, '"%s"' % hashlib.md5(data[first:last + 1]).hexdigest())
            parts.append({"PartNumber": n, "ETag": etag})
        # AWS: a range ending past the source is InvalidArgument, one
        # starting past it InvalidRequest (both 400, not GET's 416).
        for bad, code in (("bytes=0-%d" % len(data), "InvalidArgument"),
                          ("bytes=%d-%d" % (len(data), len(data) + 9), "InvalidRequest"),
                          ("bytes=5-2", "InvalidArgument"), ("bytes=x", "InvalidArgument")):
            err = self.assert_client_error(
                self.s3.upload_part_copy, code, 400, Bucket=b,
                Key="dst", UploadId=up, PartNumber=3, CopySource={"Bucket": b, "Key": "src"},
                CopySourceRange=bad)
            self.assertTrue(err)
        self.assert_client_error(self.s3.upload_part_copy, "PreconditionFailed", 412, Bucket=b,
                                 Key="dst", UploadId=up, PartNumber=3,
                                 CopySource={"Bucket": b, "Key": "src"},
                                 CopySourceIfMatch='"00000000000000000000000000000000"')
        self.s3.complete_multipart_upload(Bucket=b, Key="dst", UploadId=up,
                                          MultipartUpload={"Parts": parts})
        self.assertEqual(self.body(b, "dst"), data)


class ListUploadsTest(CopyTestCase):
    def test_list_multipart_uploads_pages(self):
        b = self.bucket("list-uploads")
        self.s3.put_object(Bucket=b, Key="plain/object", Body=b"x")  # not an upload
        expected = []
        for key in ["a"] * 5 + ["b/1", "b/2", "b/2", "c+d ü", "z/deep/1"] + [f"m{i:02d}" for i in range(20)]:
            up = self.s3.create_multipart_upload(Bucket=b, Key=key)["UploadId"]
            expected.append((key, up))
        # S3's order: by key, then one key's uploads oldest first (stable sort
        # keeps the creation order within a key).
        expected.sort(key=lambda e: e[0])
        seen = []
        pages = 0
        for page in self.s3.get_paginator("list_multipart_uploads").paginate(
                Bucket=b, PaginationConfig={"PageSize": 4}):
            pages += 1
            seen += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
        self.assertEqual(seen, expected)
        self.assertGreaterEqual(pages, len(expected) // 4)
        r = self.s3.list_multipart_uploads(Bucket=b, Delimiter="/")
        self.assertEqual([p["Prefix"] for p in r["CommonPrefixes"]], ["b/", "z/"])
        self.assertNotIn("plain/", [p["Prefix"] for p in r["CommonPrefixes"]])
        r = self.s3.list_multipart_uploads(Bucket=b, Prefix="b/")
        self.assertEqual([u["Key"] for u in r["Uploads"]], ["b/1", "b/2", "b/2"])
        two = [u for k, u in expected if k == "b/2"]
        listed = self.s3.list_multipart_uploads(Bucket=b, Prefix="b/2")["Uploads"]
        self.assertLessEqual(listed[0]["Initiated"], listed[1]["Initiated"])
        r = self.s3.list_multipart_uploads(Bucket=b, Prefix="b/", KeyMarker="b/2",
                                           UploadIdMarker=two[0])
        self.assertEqual([(u["Key"], u["UploadId"]) for u in r["Uploads"]], [("b/2", two[1])])
        r = self.s3.list_multipart_uploads(Bucket=b, MaxUploads=3)
        self.assertTrue(r["IsTruncated"])
        self.assertEqual((r["NextKeyMarker"], r["NextUploadIdMarker"]), expected[2])
        # botocore does not decode this listing: the keys arrive as encoded.
        r = self.s3.list_multipart_uploads(Bucket=b, Prefix="c", EncodingType="url")
        self.assertEqual([u["Key"] for u in r["Uploads"]], ["c%2Bd+%C3%BC"])
        for key, up in expected:
            self.s3.abort_multipart_upload(Bucket=b, Key=key, UploadId=up)
        self.assertNotIn("Uploads", self.s3.list_multipart_uploads(Bucket=b))


class ChecksumTest(CopyTestCase):
    def test_composite_crc32(self):
        b = self.bucket("composite")
        parts_data = [random.Random(i).randbytes(n) for i, n in enumerate((6000, 5000, 100))]
        up = self.s3.create_multipart_upload(Bucket=b, Key="k", ChecksumAlgorithm="CRC32")
        up = up["UploadId"]
        parts = []
        for n, data in enumerate(parts_data, 1):
            r = self.s3.upload_part(Bucket=b, Key="k", UploadId=up, PartNumber=n, Body=data,
                                    ChecksumAlgorithm="CRC32")
            self.assertEqual(r["ChecksumCRC32"], base64.b64encode(crc32_raw(data)).decode())
            parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
        expected = base64.b64encode(
            crc32_raw(b"".join(crc32_raw(d) for d in parts_data))).decode() + "-3"
        wrong = [dict(p) for p in parts]
        wrong[1]["ChecksumCRC32"] = base64.b64encode(b"\0\0\0\0").decode()
        self.assert_client_error(self.s3.complete_multipart_upload, "InvalidPart", 400, Bucket=b,
                                 Key="k", UploadId=up, MultipartUpload={"Parts": wrong})
        missing = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in parts]
        raw = h.S3Raw(self.c)
        xml = "<CompleteMultipartUpload>" + "".join(
            f"<Part><PartNumber>{p['PartNumber']}</PartNumber><ETag>{p['ETag']}</ETag></Part>"
            for p in missing) + "</CompleteMultipartUpload>"
        r = raw.request("POST", h.key_path(b, "k"), query=[("uploadId", up)], body=xml.encode())
        self.assertEqual((r.status, r.error()["Code"]), (400, "InvalidRequest"), r)
        r = self.s3.complete_multipart_upload(Bucket=b, Key="k", UploadId=up,
                                              MultipartUpload={"Parts": parts})
        self.assertEqual(r["ChecksumCRC32"], expected)
        head = self.s3.head_object(Bucket=b, Key="k", ChecksumMode="ENABLED")
        self.assertEqual(head["ChecksumCRC32"], expected)
        self.assertEqual(self.body(b, "k"), b"".join(parts_data))


    def test_full_object_crc32(self):
        """x-amz-checksum-type FULL_OBJECT: the object's CRC32 is that of the
        whole body (combined from the parts' CRCs); a wrong declared value
        is BadDigest and leaves the upload completable."""
        b = self.bucket("full-object")
        parts_data = [random.Random(10 + i).randbytes(n) for i, n in enumerate((6000, 5000, 100))]
        whole = base64.b64encode(crc32_raw(b"".join(parts_data))).decode()
        r = self.s3.create_multipart_upload(Bucket=b, Key="k", ChecksumAlgorithm="CRC32",
                                            ChecksumType="FULL_OBJECT")
        self.assertEqual((r["ChecksumAlgorithm"], r["ChecksumType"]), ("CRC32", "FULL_OBJECT"))
        up = r["UploadId"]
        parts = []
        for n, data in enumerate(parts_data, 1):
            r = self.s3.upload_part(Bucket=b, Key="k", UploadId=up, PartNumber=n, Body=data,
                                    ChecksumAlgorithm="CRC32")
            parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
        wrong = base64.b64encode(b"\1\2\3\4").decode()
        self.assert_client_error(self.s3.complete_multipart_upload, "BadDigest", 400, Bucket=b,
                                 Key="k", UploadId=up, MultipartUpload={"Parts": parts},
                                 ChecksumCRC32=wrong, ChecksumType="FULL_OBJECT")
        r = self.s3.complete_multipart_upload(Bucket=b, Key="k", UploadId=up,
                                              MultipartUpload={"Parts": parts},
                                              ChecksumCRC32=whole, ChecksumType="FULL_OBJECT")
        self.assertEqual((r["ChecksumCRC32"], r["ChecksumType"]), (whole, "FULL_OBJECT"))
        head = self.s3.head_object(Bucket=b, Key="k", ChecksumMode="ENABLED")
        self.assertEqual((head["ChecksumCRC32"], head["ChecksumType"]), (whole, "FULL_OBJECT"))
        # botocore checks a full-object checksum against the body it reads.
        got = self.s3.get_object(Bucket=b, Key="k", ChecksumMode="ENABLED")
        self.assertEqual(got["Body"].read(), b"".join(parts_data))

    def test_full_object_crc64nvme_and_refused_types(self):
        """CRC64NVME uploads are full-object by default; SHA256 cannot be
        full-object and CRC64NVME cannot be composite."""
        b = self.bucket("crc64")
        raw = h.S3Raw(self.c)
        path = h.key_path(b, "k")
        r = raw.request("POST", path, query=[("uploads", "")],
                        headers={"x-amz-checksum-algorithm": "CRC64NVME"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("x-amz-checksum-type"), "FULL_OBJECT")
        up = re.search(rb"<UploadId>([^<]+)</UploadId>", r.body).group(1).decode()
        parts_data = [random.Random(20 + i).randbytes(n) for i, n in enumerate((1500, 700))]
        etags = []
        for n, data in enumerate(parts_data, 1):
            r = raw.request("PUT", path, query=[("partNumber", str(n)), ("uploadId", up)],
                            headers={"x-amz-checksum-crc64nvme": crc64nvme_b64(data)}, body=data)
            self.assertEqual(r.status, 200, r)
            etags.append(r.header("etag"))
        xml = "<CompleteMultipartUpload>" + "".join(
            f"<Part><PartNumber>{n}</PartNumber><ETag>{e}</ETag></Part>"
            for n, e in enumerate(etags, 1)) + "</CompleteMultipartUpload>"
        r = raw.request("POST", path, query=[("uploadId", up)], body=xml.encode())
        self.assertEqual(r.status, 200, r)
        whole = crc64nvme_b64(b"".join(parts_data))
        self.assertIn(f"<ChecksumCRC64NVME>{whole}</ChecksumCRC64NVME>", r.body.decode())
        r = raw.request("HEAD", path, headers={"x-amz-checksum-mode": "ENABLED"})
        self.assertEqual((r.header("x-amz-checksum-crc64nvme"), r.header("x-amz-checksum-type")),
                         (whole, "FULL_OBJECT"))
        for headers in ({"x-amz-checksum-algorithm": "SHA256", "x-amz-checksum-type": "FULL_OBJECT"},
                        {"x-amz-checksum-algorithm": "CRC64NVME", "x-amz-checksum-type": "COMPOSITE"},
                        {"x-amz-checksum-type": "FULL_OBJECT"}):
            r = raw.request("POST", path, query=[("uploads", "")], headers=headers)
            self.assertEqual((r.status, r.error()["Code"]), (400, "InvalidRequest"), headers)


class PipelinedWriterTest(CopyTestCase):
    def test_large_put_round_trips(self):
        b = self.bucket("pipelined")
        data = random.Random(64).randbytes(64 * MiB)
        self.s3.put_object(Bucket=b, Key="big", Body=data)
        head = self.s3.head_object(Bucket=b, Key="big")
        self.assertEqual(head["ETag"], '"%s"' % hashlib.md5(data).hexdigest())
        got = self.body(b, "big")
        self.assertTrue(got == data, "the 64 MiB object differs")
        # Ranges across blob boundaries (8 MiB blobs).
        r = self.body(b, "big", Range=f"bytes={8 * MiB - 5}-{16 * MiB + 4}")
        self.assertTrue(r == data[8 * MiB - 5:16 * MiB + 5])

    def test_aborted_body_leaves_the_router_serving(self):
        b = self.bucket("aborted")
        raw = h.S3Raw(self.c)
        path = h.key_path(b, "cut")
        size = 32 * MiB
        signed = raw.sign("PUT", path, headers={"Content-Length": str(size)},
                          payload_hash="UNSIGNED-PAYLOAD")
        head = f"PUT {path} HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in signed.headers.items()) + "\r\n"
        piece = random.Random(1).randbytes(MiB)
        raw.send_raw(head.encode(), [piece] * 20, timeout=10)
        self.assert_client_error(self.s3.head_object, "404", 404, Bucket=b, Key="cut")
        self.s3.put_object(Bucket=b, Key="after", Body=b"still serving")
        self.assertEqual(self.body(b, "after"), b"still serving")


if __name__ == "__main__":
    unittest.main(verbosity=2)
