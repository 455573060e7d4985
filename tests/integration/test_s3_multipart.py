#!/usr/bin/env python3
"""Multipart uploads and batch deletes with real clients and their errors.

Goal: prove against a whole local Tessera cluster that
  1. `aws s3 cp` of a 100 MiB file (default multipart settings: 8 MiB
     parts; default checksums) goes up and comes back byte-identical over
     HTTP and HTTPS, with S3's multipart ETag; boto3 ranged GETs across
     part boundaries return the right bytes;
  2. s3cmd (15 MiB parts) and rclone (5 MiB parts, `rclone check`) upload
     multipart and read back byte-identically;
  3. DeleteObjects of 1,000 keys works quiet and not quiet, an invalid key
     gets its per-key error and the others are deleted, and `s3cmd del
     --recursive` empties a prefix;
  4. CompleteMultipartUpload refuses missing, duplicate, unordered,
     wrong-ETag and too-small parts, an empty part list and unknown uploads
     with S3's codes and statuses (InvalidPart, InvalidPartOrder,
     EntityTooSmall, InvalidRequest, NoSuchUpload), stores nothing when it
     refuses, and still completes afterwards; AbortMultipartUpload makes
     ListParts answer NoSuchUpload.
One cluster for the whole file.
"""

import concurrent.futures
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
import unittest

import s3_harness as h

CLUSTER = None
MiB = 1 << 20
AWS_PART_BYTES = 8 * MiB  # the aws CLI's default multipart_chunksize


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-multipart")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def write_random(path, n, seed):
    data = random.Random(seed).randbytes(n)
    with open(path, "wb") as f:
        f.write(data)
    return data


def read(path):
    with open(path, "rb") as f:
        return f.read()


def multipart_etag(data, part_bytes):
    """S3's ETag of an object uploaded in parts of part_bytes."""
    parts = [data[i:i + part_bytes] for i in range(0, len(data), part_bytes)]
    digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    return f'"{digest}-{len(parts)}"'


class MultipartTestCase(h.ClusterTestCase):
    pass


class ClientMultipartTest(MultipartTestCase):
    def aws_default_env(self, https):
        """The aws CLI's environment with its default s3 settings (the
        harness's config forces single-part uploads)."""
        config = os.path.join(self.tmp, "aws-config-default")
        with open(config, "w") as f:
            f.write(f"[default]\nregion = {h.REGION}\n")
        env = self.c.client_env(https)
        env["AWS_CONFIG_FILE"] = config
        return env

    def check_aws_cp_100mib(self, https):
        c = self.c
        bucket = f"mp-cli-{'https' if https else 'http'}"
        env = self.aws_default_env(https)
        c.aws("s3", "mb", f"s3://{bucket}", https=https, env=env)
        src = os.path.join(self.tmp, "big.bin")
        data = write_random(src, 100 * MiB, bucket)
        c.aws("s3", "cp", "--only-show-errors", src, f"s3://{bucket}/big ü.bin", https=https,
              env=env)
        s3 = c.boto3_client(https=https)
        head = s3.head_object(Bucket=bucket, Key="big ü.bin")
        self.assertEqual(head["ContentLength"], len(data))
        self.assertEqual(head["ETag"], multipart_etag(data, AWS_PART_BYTES))
        dst = os.path.join(self.tmp, "big.back")
        c.aws("s3", "cp", "--only-show-errors", f"s3://{bucket}/big ü.bin", dst, https=https,
              env=env)
        self.assertTrue(read(dst) == data, "the 100 MiB download differs")
        # Ranges across part boundaries (parts are 8 MiB).
        b = AWS_PART_BYTES
        for first, last in ((b - 10, b + 9), (b - 1, b), (2 * b - 5, 5 * b + 3), (0, 3 * b),
                            (12 * b - 1, len(data) - 1)):
            with self.subTest(range=(first, last)):
                r = s3.get_object(Bucket=bucket, Key="big ü.bin", Range=f"bytes={first}-{last}")
                self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 206)
                self.assertEqual(r["ContentRange"], f"bytes {first}-{last}/{len(data)}")
                self.assertTrue(r["Body"].read() == data[first:last + 1], (first, last))
        r = s3.get_object(Bucket=bucket, Key="big ü.bin", Range=f"bytes=-{b + 7}")
        self.assertTrue(r["Body"].read() == data[-(b + 7):])
        c.aws("s3", "rm", "--only-show-errors", f"s3://{bucket}/big ü.bin", https=https, env=env)
        c.aws("s3", "rb", f"s3://{bucket}", https=https, env=env)

    def test_aws_cp_100mib_http(self):
        self.check_aws_cp_100mib(https=False)

    def test_aws_cp_100mib_https(self):
        self.check_aws_cp_100mib(https=True)

    def test_s3cmd_multipart_put_get(self):
        c = self.c
        config = os.path.join(self.tmp, "s3cfg-multipart")
        with open(c.s3cfg(False)) as f:
            text = f.read().replace("enable_multipart = False", "enable_multipart = True")
        with open(config, "w") as f:
            f.write(text)

        def s3cmd(*args):
            return c.run(["s3cmd", "-c", config, *args])
        s3cmd("mb", "s3://mp-s3cmd")
        src = os.path.join(self.tmp, "forty.bin")
        data = write_random(src, 40 * MiB, "s3cmd")
        s3cmd("put", "--multipart-chunk-size-mb=15", src, "s3://mp-s3cmd/forty.bin")
        head = c.boto3_client().head_object(Bucket="mp-s3cmd", Key="forty.bin")
        self.assertEqual(head["ETag"], multipart_etag(data, 15 * MiB))
        dst = os.path.join(self.tmp, "forty.back")
        s3cmd("get", "s3://mp-s3cmd/forty.bin", dst)
        self.assertTrue(read(dst) == data, "the s3cmd download differs")
        s3cmd("del", "s3://mp-s3cmd/forty.bin")
        s3cmd("rb", "s3://mp-s3cmd")

    def test_rclone_multipart_copy_check(self):
        c = self.c
        src = os.path.join(self.tmp, "src")
        os.makedirs(src)
        data = write_random(os.path.join(src, "thirty.bin"), 30 * MiB, "rclone")
        chunked = ("--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M")
        c.rclone("copy", *chunked, src, "ts:mp-rclone/data")
        head = c.boto3_client().head_object(Bucket="mp-rclone", Key="data/thirty.bin")
        self.assertEqual(head["ETag"], multipart_etag(data, 5 * MiB))
        c.rclone("check", src, "ts:mp-rclone/data")
        c.rclone("check", "--download", src, "ts:mp-rclone/data")
        c.rclone("purge", "ts:mp-rclone")


class BatchDeleteTest(MultipartTestCase):
    def put_keys(self, s3, bucket, keys):
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode()), keys))

    def listed(self, s3, bucket):
        return [o["Key"] for p in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                for o in p.get("Contents", [])]

    def test_delete_objects_1000_keys(self):
        s3 = self.c.boto3_client()
        bucket = "batch-delete"
        s3.create_bucket(Bucket=bucket)
        keys = [f"k/{i:04d}" for i in range(1000)]
        bad = "x" * 1025  # KeyTooLongError
        self.put_keys(s3, bucket, keys)
        # Not quiet: 999 keys and one invalid one.
        r = s3.delete_objects(Bucket=bucket, Delete={
            "Objects": [{"Key": k} for k in keys[:999]] + [{"Key": bad}]})
        self.assertEqual(sorted(d["Key"] for d in r.get("Deleted", [])), keys[:999])
        self.assertEqual([(e["Key"], e["Code"]) for e in r.get("Errors", [])],
                         [(bad, "KeyTooLongError")])
        self.assertEqual(self.listed(s3, bucket), keys[999:])
        # Quiet: all 1,000 keys (999 of them already gone): nothing to report.
        self.put_keys(s3, bucket, keys[:500])
        r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys],
                                                     "Quiet": True})
        self.assertEqual((r.get("Deleted", []), r.get("Errors", [])), ([], []))
        self.assertEqual(self.listed(s3, bucket), [])
        # Quiet still reports errors; absent keys count as deleted.
        r = s3.delete_objects(Bucket=bucket, Delete={
            "Objects": [{"Key": "absent"}, {"Key": bad}], "Quiet": True})
        self.assertEqual(r.get("Deleted", []), [])
        self.assertEqual([(e["Key"], e["Code"]) for e in r.get("Errors", [])],
                         [(bad, "KeyTooLongError")])
        r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "absent"}]})
        self.assertEqual([d["Key"] for d in r["Deleted"]], ["absent"])
        # More than 1,000 keys in one request: MalformedXML, nothing deleted.
        s3.put_object(Bucket=bucket, Key="k/0000", Body=b"x")
        self.assert_client_error(s3.delete_objects, "MalformedXML", 400, Bucket=bucket, Delete={
            "Objects": [{"Key": f"k/{i:04d}"} for i in range(1001)]})
        self.assertEqual(self.listed(s3, bucket), ["k/0000"])
        s3.delete_object(Bucket=bucket, Key="k/0000")
        s3.delete_bucket(Bucket=bucket)

    def test_s3cmd_del_recursive(self):
        c = self.c
        s3 = c.boto3_client()
        s3.create_bucket(Bucket="s3cmd-batch")
        keys = [f"tree/{i % 5}/f{i:03d}" for i in range(60)] + ["keep/me"]
        self.put_keys(s3, "s3cmd-batch", keys)
        # A multipart object under the prefix too: its parts go with it.
        from boto3.s3.transfer import TransferConfig
        import io
        s3.upload_fileobj(io.BytesIO(random.Random(1).randbytes(11 * MiB)), "s3cmd-batch",
                          "tree/multi.bin", Config=TransferConfig(multipart_threshold=5 * MiB,
                                                                  multipart_chunksize=5 * MiB))
        c.s3cmd("del", "--recursive", "--force", "s3://s3cmd-batch/tree/")
        self.assertEqual(self.listed(s3, "s3cmd-batch"), ["keep/me"])
        c.s3cmd("del", "--recursive", "--force", "s3://s3cmd-batch/")
        self.assertEqual(self.listed(s3, "s3cmd-batch"), [])
        s3.delete_bucket(Bucket="s3cmd-batch")


class MultipartErrorsTest(MultipartTestCase):
    BUCKET = "mp-errors"

    @classmethod
    def setUpClass(cls):
        cls.s3 = CLUSTER.boto3_client(retries=1)
        cls.s3.create_bucket(Bucket=cls.BUCKET)

    def upload(self, key, sizes):
        """A new upload of `key` with parts 1..n of the given sizes ->
        (upload id, [{PartNumber, ETag}], data of each part)."""
        s3 = self.s3
        upload_id = s3.create_multipart_upload(Bucket=self.BUCKET, Key=key)["UploadId"]
        parts, datas = [], []
        for n, size in enumerate(sizes, start=1):
            data = random.Random(f"{key}{n}").randbytes(size)
            r = s3.upload_part(Bucket=self.BUCKET, Key=key, UploadId=upload_id, PartNumber=n,
                               Body=data)
            self.assertEqual(r["ETag"], f'"{hashlib.md5(data).hexdigest()}"')
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
            datas.append(data)
        return upload_id, parts, datas

    def complete(self, key, upload_id, parts):
        return self.s3.complete_multipart_upload(Bucket=self.BUCKET, Key=key, UploadId=upload_id,
                                                 MultipartUpload={"Parts": parts})

    def assert_absent(self, key):
        self.assert_client_error(self.s3.head_object, "404", 404, Bucket=self.BUCKET, Key=key)

    def test_complete_refuses_bad_part_lists(self):
        key = "bad-lists"
        upload_id, parts, datas = self.upload(key, [5 * MiB, 5 * MiB, 1000])
        p1, p2, p3 = parts
        wrong = dict(p2, ETag='"' + "0" * 32 + '"')
        cases = [
            ("missing part", [p1, {"PartNumber": 4, "ETag": p3["ETag"]}], "InvalidPart", 400),
            ("wrong ETag", [p1, wrong, p3], "InvalidPart", 400),
            ("malformed ETag", [p1, dict(p2, ETag='"nope"'), p3], "InvalidPart", 400),
            ("unordered", [p2, p1, p3], "InvalidPartOrder", 400),
            ("duplicate", [p1, p1, p2, p3], "InvalidPartOrder", 400),
            ("no parts", [], "InvalidRequest", 400),
        ]
        for name, listed, code, status in cases:
            with self.subTest(case=name):
                self.assert_client_error(self.complete, code, status, key=key,
                                         upload_id=upload_id, parts=listed)
                self.assert_absent(key)
        # The upload survived every refusal: its parts are still listed and
        # a valid completion (parts 1 and 3 only is valid too) succeeds.
        listed = self.s3.list_parts(Bucket=self.BUCKET, Key=key, UploadId=upload_id,
                                    MaxParts=100)["Parts"]  # default: see test_list_parts_default
        self.assertEqual([(p["PartNumber"], p["ETag"], p["Size"]) for p in listed],
                         [(p["PartNumber"], p["ETag"], len(d)) for p, d in zip(parts, datas)])
        r = self.complete(key, upload_id, [p1, p3])
        data = datas[0] + datas[2]
        want_etag = '"' + hashlib.md5(hashlib.md5(datas[0]).digest() +
                                      hashlib.md5(datas[2]).digest()).hexdigest() + '-2"'
        self.assertEqual(r["ETag"], want_etag)
        got = self.s3.get_object(Bucket=self.BUCKET, Key=key)
        self.assertEqual((got["ETag"], got["ContentLength"]), (want_etag, len(data)))
        self.assertTrue(got["Body"].read() == data)
        # Completed: the same completion sent again (an SDK retrying a lost
        # answer) gets the same answer while the object is the latest; any
        # other use of the upload id finds no upload.
        again = self.complete(key, upload_id, [p1, p3])
        self.assertEqual(again["ETag"], want_etag)
        self.assertEqual(self.s3.get_object(Bucket=self.BUCKET, Key=key)["ETag"], want_etag)
        self.assert_client_error(self.complete, "NoSuchUpload", 404, key=key,
                                 upload_id=upload_id, parts=[p1])
        self.assert_client_error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=self.BUCKET,
                                 Key=key, UploadId=upload_id)
        self.s3.delete_object(Bucket=self.BUCKET, Key=key)

    def test_too_small_part_is_refused(self):
        key = "too-small"
        upload_id, parts, _ = self.upload(key, [1 * MiB, 1 * MiB])
        self.assert_client_error(self.complete, "EntityTooSmall", 400, key=key,
                                 upload_id=upload_id, parts=parts)
        self.assert_absent(key)
        # The last part may be small: part 1 alone completes.
        self.complete(key, upload_id, parts[:1])
        self.assertEqual(self.s3.head_object(Bucket=self.BUCKET, Key=key)["ContentLength"], MiB)
        self.s3.delete_object(Bucket=self.BUCKET, Key=key)

    def test_unknown_upload_id(self):
        key = "unknown"
        fake = "0" * 32
        part = {"PartNumber": 1, "ETag": '"' + "1" * 32 + '"'}
        self.assert_client_error(self.complete, "NoSuchUpload", 404, key=key, upload_id=fake,
                                 parts=[part])
        # An unknown upload is reported before what is wrong with the list.
        self.assert_client_error(self.complete, "NoSuchUpload", 404, key=key, upload_id=fake,
                                 parts=[])
        self.assert_client_error(self.s3.upload_part, "NoSuchUpload", 404, Bucket=self.BUCKET,
                                 Key=key, UploadId=fake, PartNumber=1, Body=b"x")
        self.assert_client_error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=self.BUCKET,
                                 Key=key, UploadId=fake)
        self.assert_client_error(self.s3.abort_multipart_upload, "NoSuchUpload", 404,
                                 Bucket=self.BUCKET, Key=key, UploadId=fake)
        # An upload id of another key is unknown for this one.
        upload_id, parts, _ = self.upload("other-key", [1000])
        self.assert_client_error(self.complete, "NoSuchUpload", 404, key=key,
                                 upload_id=upload_id, parts=parts)
        self.s3.abort_multipart_upload(Bucket=self.BUCKET, Key="other-key", UploadId=upload_id)
        self.assert_absent(key)

    # ListParts without max-parts (or with 1000) once asked the KV scan for
    # 1001 items, above its limit, and answered 400 for every upload.
    def test_list_parts_default(self):
        key = "list-parts-default"
        upload_id, parts, datas = self.upload(key, [10, 20])
        self.addCleanup(self.s3.abort_multipart_upload, Bucket=self.BUCKET, Key=key,
                        UploadId=upload_id)
        for kw in ({}, {"MaxParts": 1000}):
            r = self.s3.list_parts(Bucket=self.BUCKET, Key=key, UploadId=upload_id, **kw)
            self.assertEqual([(p["PartNumber"], p["Size"]) for p in r["Parts"]], [(1, 10), (2, 20)])
            self.assertFalse(r["IsTruncated"])

    def test_abort_then_list_parts(self):
        key = "aborted"
        upload_id, parts, _ = self.upload(key, [5 * MiB, 10])
        self.assertEqual(len(self.s3.list_parts(Bucket=self.BUCKET, Key=key, UploadId=upload_id,
                                                MaxParts=10)["Parts"]), 2)
        r = self.s3.abort_multipart_upload(Bucket=self.BUCKET, Key=key, UploadId=upload_id)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assert_client_error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=self.BUCKET,
                                 Key=key, UploadId=upload_id)
        self.assert_client_error(self.complete, "NoSuchUpload", 404, key=key,
                                 upload_id=upload_id, parts=parts)
        self.assert_client_error(self.s3.upload_part, "NoSuchUpload", 404, Bucket=self.BUCKET,
                                 Key=key, UploadId=upload_id, PartNumber=3, Body=b"late")
        self.assert_absent(key)


if __name__ == "__main__":
    unittest.main(verbosity=2)
