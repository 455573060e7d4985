#!/usr/bin/env python3
"""Multipart, versioning and batch deletes with real clients (issue 5).

Goal: prove against a whole local Tessera cluster that
  1. the aws CLI uploads 1 GiB over HTTPS in 8 MiB parts with its default
     checksums (streamed through its stdin and stdout: generated and hashed
     on the fly, never stored on the client side), and the download has the
     same SHA-256 and S3's multipart ETag; boto3 uploads
     100 MiB over HTTP and HTTPS the same way;
  2. ranged GETs across part boundaries and `?partNumber=N` GET/HEAD of
     multipart objects return the right bytes, Content-Range and
     x-amz-mp-parts-count (partNumber: expected failure, see the test);
  3. a versioned bucket round-trips versions and delete markers (also a
     multipart version): GET/HEAD by versionId, 405 on a delete marker, 404
     on its key (x-amz-delete-marker header: expected failure, see the
     test), removing the marker restores the object; ListObjectVersions
     pages (max-keys 1, 2, 3, 7, 1000, key-marker and version-id-marker)
     concatenate to exactly the expected order, and the aws CLI's paginated
     listing and `get-object --version-id` over HTTPS agree;
  4. DeleteObjects of 1,000 keys in a versioned bucket: verbose creates and
     reports 1,000 delete markers, quiet removes them by version id and
     reports nothing, and every object is back;
  5. s3cmd (`--multipart-chunk-size-mb=15`) and rclone (`--s3-upload-cutoff`,
     `--s3-chunk-size`) upload 100 MiB multipart over HTTPS byte-identically;
  6. bad input not covered by test_s3_multipart.py gets exactly S3's code and
     status: a re-uploaded part's old ETag and a part of another upload
     (InvalidPart), a small middle part (EntityTooSmall), part numbers 0 and
     10001 and bad markers (InvalidArgument), an upload id of another key
     (NoSuchUpload), a versionId of another key (NoSuchVersion) and a
     malformed one (InvalidArgument); a refusal stores nothing.
One cluster for the whole file. Timing is printed, never asserted.
"""

import concurrent.futures
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

import s3_harness as h

CLUSTER = None
MiB = 1 << 20
GiB = 1 << 30
PART_BYTES = 8 * MiB  # the aws CLI's and boto3's default multipart_chunksize
GEN_BLOCK = MiB


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-mpclients")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


# --- streamed data -----------------------------------------------------------

class Digest:
    """SHA-256 and S3's multipart ETag of a byte stream cut in part_bytes parts."""

    def __init__(self, part_bytes):
        self.part_bytes, self.size = part_bytes, 0
        self.sha = hashlib.sha256()
        self.part_md5s, self._part, self._in_part = [], hashlib.md5(), 0

    def update(self, data):
        self.sha.update(data)
        self.size += len(data)
        view = memoryview(data)
        while view:
            take = min(len(view), self.part_bytes - self._in_part)
            self._part.update(view[:take])
            self._in_part += take
            view = view[take:]
            if self._in_part == self.part_bytes:
                self.part_md5s.append(self._part.digest())
                self._part, self._in_part = hashlib.md5(), 0

    def etag(self):
        md5s = self.part_md5s + ([self._part.digest()] if self._in_part else [])
        return f'"{hashlib.md5(b"".join(md5s)).hexdigest()}-{len(md5s)}"'


class SeededBytes:
    """`size` bytes of a seeded PRNG stream cut in GEN_BLOCK blocks, each
    seeded on its own: any range is regenerated from its blocks, so a stream
    of any size is checked without being stored anywhere."""

    def __init__(self, seed, size):
        self.seed, self.size = seed, size

    def block(self, index):
        length = min(GEN_BLOCK, self.size - index * GEN_BLOCK)
        return random.Random(f"{self.seed}/{index}").randbytes(length)

    def blocks(self):
        for index in range(-(-self.size // GEN_BLOCK)):
            yield self.block(index)

    def range(self, first, last):
        """Bytes first..last inclusive."""
        blocks = range(first // GEN_BLOCK, last // GEN_BLOCK + 1)
        joined = b"".join(self.block(i) for i in blocks)
        start = first - blocks[0] * GEN_BLOCK
        return joined[start:start + last - first + 1]


def generate(path, size, seed, part_bytes=PART_BYTES):
    """Writes SeededBytes(seed, size) to path -> Digest."""
    digest = Digest(part_bytes)
    with open(path, "wb") as f:
        for block in SeededBytes(seed, size).blocks():
            digest.update(block)
            f.write(block)
    return digest


def file_sha256(path):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(GEN_BLOCK):
            sha.update(block)
    return sha.hexdigest()


def file_range(path, first, last):
    with open(path, "rb") as f:
        f.seek(first)
        return f.read(last - first + 1)


def local(tag):
    return tag.rsplit("}", 1)[-1]


def parse_versions_page(body):
    """A ListVersionsResult -> (fields, entries in document order: (kind,
    key, version id, is latest, etag, size))."""
    root = ET.fromstring(body)
    fields, entries = {}, []
    for child in root:
        tag = local(child.tag)
        if tag in ("Version", "DeleteMarker"):
            e = {local(x.tag): (x.text or "") for x in child}
            entries.append((tag, e["Key"], e["VersionId"], e["IsLatest"] == "true",
                            e.get("ETag"), int(e["Size"]) if "Size" in e else None))
        else:
            fields[tag] = child.text or ""
    return fields, entries


class ClientTestCase(h.ClusterTestCase):
    assert_error = h.ClusterTestCase.assert_client_error


    def assert_raw_error(self, resp, code, status):
        self.assertEqual(resp.status, status, resp)
        if resp.body:
            self.assertEqual(resp.error()["Code"], code, resp)

    def aws_default_env(self, https):
        """The aws CLI's environment with its default s3 transfer settings
        (the harness's config forces single-part uploads)."""
        config = os.path.join(self.tmp, "aws-config-default")
        with open(config, "w") as f:
            f.write(f"[default]\nregion = {h.REGION}\n")
        env = self.c.client_env(https)
        env["AWS_CONFIG_FILE"] = config
        return env

    def check_ranges(self, s3, bucket, key, expected, size, part_bytes):
        """`expected(first, last)` -> the bytes first..last of the object."""
        b = part_bytes
        for first, last in ((b - 1, b), (b - 100, 2 * b + 99), (3 * b, 3 * b),
                            (size - b - 3, size - 1), (0, b)):
            with self.subTest(range=(first, last)):
                r = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={first}-{last}")
                self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 206)
                self.assertEqual(r["ContentRange"], f"bytes {first}-{last}/{size}")
                self.assertTrue(r["Body"].read() == expected(first, last), (first, last))

    def check_part_numbers(self, s3, bucket, key, path, size, part_bytes, etag):
        parts = -(-size // part_bytes)
        for n in (1, 2, parts):
            with self.subTest(part=n):
                first, last = (n - 1) * part_bytes, min(n * part_bytes, size) - 1
                r = s3.get_object(Bucket=bucket, Key=key, PartNumber=n)
                meta = r["ResponseMetadata"]
                self.assertEqual(meta["HTTPStatusCode"], 206, meta)
                self.assertEqual(r.get("ContentRange"), f"bytes {first}-{last}/{size}")
                self.assertEqual(r.get("PartsCount"), parts)
                self.assertEqual(r["ETag"], etag)
                self.assertEqual(r["ContentLength"], last - first + 1)
                self.assertTrue(r["Body"].read() == file_range(path, first, last), n)
                hd = s3.head_object(Bucket=bucket, Key=key, PartNumber=n)
                self.assertEqual((hd["ContentLength"], hd.get("PartsCount")),
                                 (last - first + 1, parts))
        self.assert_error(s3.get_object, "InvalidPartNumber", 416, Bucket=bucket, Key=key,
                          PartNumber=parts + 1)


# --- 1. + 2. large uploads -----------------------------------------------------

class LargeUploadTest(ClientTestCase):
    def test_aws_cli_1gib_https(self):
        """Streamed both ways through the CLI's stdin and stdout: the only
        copies of the 1 GiB on disk are the cluster's three replicas."""
        c, https, bucket, key = self.c, True, "mpc-gib", "one gib.bin"
        free = shutil.disk_usage(c.root).free
        self.assertGreater(free, 4 * GiB, f"this test stores 3 GiB (three replicas) under "
                           f"{c.root}: only {free / GiB:.1f} GiB free")
        env = self.aws_default_env(https)
        c.aws("s3", "mb", f"s3://{bucket}", https=https, env=env)
        data, sent = SeededBytes("one-gib", GiB), Digest(PART_BYTES)
        t0 = time.monotonic()
        self.aws_stream(["s3", "cp", "--only-show-errors", "--expected-size", str(GiB), "-",
                         f"s3://{bucket}/{key}"], env, feed=data.blocks(), digest=sent)
        up_s = time.monotonic() - t0
        self.assertEqual(sent.size, GiB)
        head = c.boto3_client(https=https).head_object(Bucket=bucket, Key=key)
        self.assertEqual((head["ContentLength"], head["ETag"]), (GiB, sent.etag()))
        s3 = c.boto3_client(https=https)
        self.check_ranges(s3, bucket, key, data.range, GiB, PART_BYTES)
        received = Digest(PART_BYTES)
        t0 = time.monotonic()
        self.aws_stream(["s3", "cp", "--only-show-errors", f"s3://{bucket}/{key}", "-"], env,
                        digest=received)
        down_s = time.monotonic() - t0
        self.assertEqual(received.size, GiB)
        self.assertEqual(received.sha.hexdigest(), sent.sha.hexdigest(),
                         "the 1 GiB download differs")
        print(f"[1 GiB over HTTPS: up {up_s:.1f}s, down {down_s:.1f}s]", file=sys.stderr, end=" ")
        c.aws("s3", "rm", "--only-show-errors", f"s3://{bucket}/{key}", https=https, env=env)
        c.aws("s3", "rb", f"s3://{bucket}", https=https, env=env)

    def aws_stream(self, args, env, feed=None, digest=None, timeout=900):
        """Runs the aws CLI over HTTPS with `feed`'s blocks on its stdin (each
        added to `digest`), or with its stdout added to `digest`."""
        cmd = ["aws", "--endpoint-url", self.c.endpoint(True), *args]
        with tempfile.TemporaryFile() as err, subprocess.Popen(
                cmd, env=env, stderr=err,
                stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if feed else subprocess.PIPE) as proc:
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
            try:
                if feed:
                    for block in feed:
                        digest.update(block)
                        proc.stdin.write(block)
                    proc.stdin.close()
                else:
                    while block := proc.stdout.read(GEN_BLOCK):
                        digest.update(block)
                rc = proc.wait()
            except BrokenPipeError:
                rc = proc.wait()
            finally:
                timer.cancel()
            err.seek(0)
            self.assertEqual(rc, 0, f"{cmd} -> rc {rc}\nstderr:\n"
                             f"{err.read().decode('utf-8', 'replace')[-4000:]}\n"
                             f"router log:\n{self.c.log_tail()}")

    def boto3_round_trip(self, https):
        from boto3.s3.transfer import TransferConfig
        c = self.c
        bucket = f"mpc-boto3-{'https' if https else 'http'}"
        key = "dir/hundred ü.bin"
        s3 = c.boto3_client(https=https)
        s3.create_bucket(Bucket=bucket)
        src = os.path.join(self.tmp, "hundred.bin")
        digest = generate(src, 100 * MiB, bucket)
        cfg = TransferConfig(multipart_threshold=PART_BYTES, multipart_chunksize=PART_BYTES,
                             max_concurrency=4)
        s3.upload_file(src, bucket, key, Config=cfg)  # default checksums of this botocore
        head = s3.head_object(Bucket=bucket, Key=key)
        self.assertEqual((head["ContentLength"], head["ETag"]), (100 * MiB, digest.etag()))
        dst = os.path.join(self.tmp, "hundred.back")
        s3.download_file(bucket, key, dst, Config=cfg)
        self.assertEqual(file_sha256(dst), digest.sha.hexdigest(), "the boto3 download differs")
        self.check_ranges(s3, bucket, key, lambda a, b: file_range(src, a, b), 100 * MiB,
                          PART_BYTES)
        s3.delete_object(Bucket=bucket, Key=key)
        s3.delete_bucket(Bucket=bucket)

    def test_boto3_100mib_http(self):
        self.boto3_round_trip(https=False)

    def test_boto3_100mib_https(self):
        self.boto3_round_trip(https=True)

    # GET/HEAD ?partNumber=N of a multipart object (S3: 206, the part's
    # Content-Range, x-amz-mp-parts-count, the whole object's ETag; a part
    # number past the last: 416 InvalidPartNumber).
    def test_part_number_get(self):
        from boto3.s3.transfer import TransferConfig
        s3 = self.c.boto3_client()
        bucket, key, size, part = "mpc-partnumber", "parts.bin", 23 * MiB, 5 * MiB
        s3.create_bucket(Bucket=bucket)
        src = os.path.join(self.tmp, "parts.bin")
        digest = generate(src, size, "parts", part_bytes=part)
        s3.upload_file(src, bucket, key, Config=TransferConfig(multipart_threshold=part,
                                                               multipart_chunksize=part))
        self.addCleanup(s3.delete_bucket, Bucket=bucket)
        self.addCleanup(s3.delete_object, Bucket=bucket, Key=key)
        self.check_part_numbers(s3, bucket, key, src, size, part, digest.etag())


# --- 3. versioning -----------------------------------------------------------------

class VersioningTest(ClientTestCase):
    BUCKET = "mpc-versions"

    def test_versions_delete_markers_and_pagination(self):
        from boto3.s3.transfer import TransferConfig
        c, bucket = self.c, self.BUCKET
        s3 = c.boto3_client()
        raw = h.S3Raw(c)
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        rnd = random.Random("versions")
        # model[key]: versions newest first: (kind, version id, data or None)
        model = {}

        def put(key, data):
            r = s3.put_object(Bucket=bucket, Key=key, Body=data)
            self.assertEqual(r["ETag"], f'"{hashlib.md5(data).hexdigest()}"')
            model.setdefault(key, []).insert(0, ("Version", r["VersionId"], data))

        def delete(key):
            r = s3.delete_object(Bucket=bucket, Key=key)
            self.assertTrue(r.get("DeleteMarker"), r)
            model.setdefault(key, []).insert(0, ("DeleteMarker", r["VersionId"], None))

        keys = ["a", "b/1", "b/2", "c ü", "d", "e"]
        for round_ in range(3):
            for key in keys:
                put(key, rnd.randbytes(rnd.choice((0, 7, 3000, 70_000))))
        # A multipart version of "e" (two parts), then a small one on top.
        src = os.path.join(self.tmp, "e.bin")
        digest = generate(src, 11 * MiB, "e-multipart", part_bytes=5 * MiB)
        s3.upload_file(src, bucket, "e", Config=TransferConfig(multipart_threshold=5 * MiB,
                                                               multipart_chunksize=5 * MiB))
        e_versions = s3.list_object_versions(Bucket=bucket, Prefix="e")["Versions"]
        mp = next(v for v in e_versions if v["IsLatest"])
        self.assertEqual((mp["ETag"], mp["Size"]), (digest.etag(), 11 * MiB))
        with open(src, "rb") as f:
            model["e"].insert(0, ("Version", mp["VersionId"], f.read()))
        put("e", b"after multipart")
        delete("b/1")
        delete("d")
        put("d", b"back after a marker")
        delete("c ü")
        delete("c ü")  # a marker on a marker

        expected = [(kind, key, vid, i == 0) for key in sorted(model)
                    for i, (kind, vid, _) in enumerate(model[key])]
        etag_size = {vid: (f'"{hashlib.md5(d).hexdigest()}"', len(d))
                     for key in model for kind, vid, d in model[key] if kind == "Version"}
        etag_size[mp["VersionId"]] = (digest.etag(), 11 * MiB)

        # Every version reads back; markers answer 405; latest markers 404.
        for key, versions in model.items():
            for kind, vid, data in versions:
                with self.subTest(key=key, version=vid):
                    if kind == "Version":
                        r = s3.get_object(Bucket=bucket, Key=key, VersionId=vid)
                        self.assertEqual(r["VersionId"], vid)
                        self.assertTrue(r["Body"].read() == data)
                    else:
                        resp = raw.request("GET", h.key_path(bucket, key),
                                           query=[("versionId", vid)])
                        self.assert_raw_error(resp, "MethodNotAllowed", 405)
                        self.assertEqual(resp.header("x-amz-delete-marker"), "true")
        for key in ("b/1", "c ü"):  # the headers: test_key_behind_delete_marker_headers
            self.assert_raw_error(raw.request("GET", h.key_path(bucket, key)), "NoSuchKey", 404)
            self.assertEqual(raw.head_status(bucket, key), 404)
        self.assertEqual(self.listed_keys(s3, bucket),
                         sorted(k for k, v in model.items() if v[0][0] == "Version"))

        # Pages of every size concatenate to the expected order.
        for max_keys in (1, 2, 3, 7, 1000):
            with self.subTest(max_keys=max_keys):
                got = self.list_versions_raw(raw, bucket, max_keys)
                self.assertEqual([e[:4] for e in got], expected)
                for kind, _, vid, _, etag, size in got:
                    if kind == "Version":
                        self.assertEqual((etag, size), etag_size[vid], vid)
        # key-marker alone starts after every version of that key.
        _, entries = parse_versions_page(raw.request(
            "GET", f"/{bucket}", query=[("versions", ""), ("key-marker", "b/1")]).body)
        self.assertEqual([e[:4] for e in entries], [e for e in expected if e[1] > "b/1"])
        # key-marker + version-id-marker starts after that version.
        d_versions = [e for e in expected if e[1] == "d"]
        _, entries = parse_versions_page(raw.request(
            "GET", f"/{bucket}", query=[("versions", ""), ("key-marker", "d"),
                                        ("version-id-marker", d_versions[1][2])]).body)
        self.assertEqual([e[:4] for e in entries],
                         d_versions[2:] + [e for e in expected if e[1] > "d"])
        # boto3's paginator and the aws CLI over HTTPS (page size 2) agree.
        pages = s3.get_paginator("list_object_versions").paginate(
            Bucket=bucket, PaginationConfig={"PageSize": 3})
        boto_ids = sorted(v["VersionId"] for p in pages
                          for v in p.get("Versions", []) + p.get("DeleteMarkers", []))
        self.assertEqual(boto_ids, sorted(e[2] for e in expected))
        _, out, _ = c.aws("s3api", "list-object-versions", "--bucket", bucket, "--page-size", "2",
                          "--output", "json", https=True)
        doc = json.loads(out)
        cli = sorted([("Version", v["Key"], v["VersionId"], v["IsLatest"])
                      for v in doc.get("Versions", [])] +
                     [("DeleteMarker", v["Key"], v["VersionId"], v["IsLatest"])
                      for v in doc.get("DeleteMarkers", [])])
        self.assertEqual(cli, sorted(expected))
        version = model["c ü"][2]
        dst = os.path.join(self.tmp, "cli-version.bin")
        c.aws("s3api", "get-object", "--bucket", bucket, "--key", "c ü", "--version-id",
              version[1], dst, https=True)
        with open(dst, "rb") as f:
            self.assertTrue(f.read() == version[2], "aws s3api get-object --version-id")

        # Removing the latest marker restores the version below it.
        marker = model["b/1"][0][1]
        r = s3.delete_object(Bucket=bucket, Key="b/1", VersionId=marker)
        self.assertEqual((r.get("DeleteMarker"), r.get("VersionId")), (True, marker))
        restored = s3.get_object(Bucket=bucket, Key="b/1")
        self.assertEqual(restored["VersionId"], model["b/1"][1][1])
        self.assertTrue(restored["Body"].read() == model["b/1"][1][2])
        # Deleting a version (not the latest) keeps the latest.
        old = model["a"][2][1]
        s3.delete_object(Bucket=bucket, Key="a", VersionId=old)
        self.assert_error(s3.get_object, "NoSuchVersion", 404, Bucket=bucket, Key="a",
                          VersionId=old)
        self.assertTrue(s3.get_object(Bucket=bucket, Key="a")["Body"].read() == model["a"][0][2])
        self.empty_versioned(s3, bucket)

    # GET and HEAD of a key whose latest version is a delete marker: 404
    # NoSuchKey with `x-amz-delete-marker: true` and the marker's version id
    # (clients use them to tell "deleted" from "never existed").
    def test_key_behind_delete_marker_headers(self):
        s3, raw, bucket = self.c.boto3_client(), h.S3Raw(self.c), "mpc-marker-headers"
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
        marker = s3.delete_object(Bucket=bucket, Key="gone")["VersionId"]
        self.addCleanup(self.empty_versioned, s3, bucket)
        for method in ("GET", "HEAD"):
            with self.subTest(method=method):
                resp = raw.request(method, h.key_path(bucket, "gone"))
                self.assertEqual(resp.status, 404, resp)
                self.assertEqual((resp.header("x-amz-delete-marker"),
                                  resp.header("x-amz-version-id")), ("true", marker), resp)

    # A bucket whose only contents are noncurrent versions or delete
    # markers is not empty: DeleteBucket refuses it (it used to delete the
    # bucket and every version in it).
    def test_bucket_with_only_old_versions_is_not_empty(self):
        s3, bucket = self.c.boto3_client(), "mpc-old-versions"
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"kept")["VersionId"]
        marker = s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
        self.assertEqual(s3.list_objects_v2(Bucket=bucket)["KeyCount"], 0)
        self.assert_client_error(s3.delete_bucket, "BucketNotEmpty", 409, Bucket=bucket)
        self.assertEqual(s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read(), b"kept")
        s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
        self.assert_client_error(s3.delete_bucket, "BucketNotEmpty", 409, Bucket=bucket)  # the marker
        s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
        s3.delete_bucket(Bucket=bucket)
        self.assert_client_error(s3.head_bucket, "404", 404, Bucket=bucket)

    # Small objects keep their bytes in a data record per version: through
    # unversioned overwrites, the switch to Enabled (the old latest becomes
    # the null version), Suspended null replacement and version deletes,
    # every version reads back its own bytes (whole, ranged, HEAD size) and
    # the bucket's usage counts exactly what is left.
    def test_inline_versions_through_suspend_and_deletes(self):
        s3, bucket = self.c.boto3_client(), "mpc-inline"
        s3.create_bucket(Bucket=bucket)
        self.addCleanup(self.empty_versioned, s3, bucket)

        def check(key, data, version=None):
            kw = {"VersionId": version} if version else {}
            self.assertTrue(s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read() == data)
            self.assertEqual(s3.head_object(Bucket=bucket, Key=key, **kw)["ContentLength"],
                             len(data))
            if len(data) > 3:
                r = s3.get_object(Bucket=bucket, Key=key, Range="bytes=1-3", **kw)
                self.assertEqual(r["Body"].read(), data[1:4])

        s3.put_object(Bucket=bucket, Key="k", Body=b"first unversioned")
        s3.put_object(Bucket=bucket, Key="k", Body=b"second unversioned")
        check("k", b"second unversioned")
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"v1 bytes")["VersionId"]
        v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"v2 bytes!")["VersionId"]
        check("k", b"v2 bytes!")
        check("k", b"second unversioned", "null")
        check("k", b"v1 bytes", v1)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
        # A write that makes the null version names no version id (as S3).
        self.assertNotIn("VersionId",
                         s3.put_object(Bucket=bucket, Key="k", Body=b"suspended null"))
        check("k", b"suspended null")
        check("k", b"suspended null", "null")
        check("k", b"v2 bytes!", v2)
        s3.delete_object(Bucket=bucket, Key="k", VersionId="null")
        check("k", b"v2 bytes!")
        s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)
        check("k", b"v1 bytes")
        usage = json.loads(self.c.cli("s3", "usage", bucket, "--json").stdout)
        self.assertEqual((usage["objects"], usage["bytes"], usage["versions"]), (1, 8, 1), usage)

    def listed_keys(self, s3, bucket):
        return [o["Key"] for p in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                for o in p.get("Contents", [])]

    def list_versions_raw(self, raw, bucket, max_keys):
        out, key_marker, vid_marker = [], None, None
        for _ in range(1000):
            query = [("versions", ""), ("max-keys", str(max_keys))]
            if key_marker is not None:
                query += [("key-marker", key_marker), ("version-id-marker", vid_marker)]
            resp = raw.request("GET", f"/{bucket}", query=query)
            self.assertEqual(resp.status, 200, resp)
            fields, entries = parse_versions_page(resp.body)
            self.assertLessEqual(len(entries), max_keys)
            out += entries
            if fields["IsTruncated"] != "true":
                self.assertNotIn("NextKeyMarker", fields)
                return out
            self.assertEqual(len(entries), max_keys, fields)
            self.assertEqual((fields["NextKeyMarker"], fields["NextVersionIdMarker"]),
                             entries[-1][1:3])
            key_marker, vid_marker = fields["NextKeyMarker"], fields["NextVersionIdMarker"]
        self.fail("the version listing does not end")

    def empty_versioned(self, s3, bucket):
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
            doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                      for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
            if doomed:
                r = s3.delete_objects(Bucket=bucket, Delete={"Objects": doomed, "Quiet": True})
                self.assertEqual(r.get("Errors", []), [])
        self.assertEqual(s3.list_object_versions(Bucket=bucket).get("Versions", []), [])
        s3.delete_bucket(Bucket=bucket)

    # --- 4. batch delete in a versioned bucket
    def test_delete_objects_1000_versioned(self):
        s3 = self.c.boto3_client()
        bucket = "mpc-versioned-batch"
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        keys = [f"k/{i:04d}" for i in range(1000)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            versions = dict(pool.map(
                lambda k: (k, s3.put_object(Bucket=bucket, Key=k, Body=k.encode())["VersionId"]),
                keys))
        # Verbose: one delete marker per key, each reported.
        r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
        self.assertEqual(r.get("Errors", []), [])
        deleted = r["Deleted"]
        self.assertEqual(sorted(d["Key"] for d in deleted), keys)
        self.assertTrue(all(d.get("DeleteMarker") for d in deleted), deleted[:3])
        markers = {d["Key"]: d["DeleteMarkerVersionId"] for d in deleted}
        self.assertEqual(len(set(markers.values())), 1000)
        self.assertTrue(set(markers.values()).isdisjoint(versions.values()))
        self.assertEqual(self.listed_keys(s3, bucket), [])
        listed_markers, listed_versions = {}, {}
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
            for m in page.get("DeleteMarkers", []):
                self.assertTrue(m["IsLatest"], m)
                listed_markers[m["Key"]] = m["VersionId"]
            for v in page.get("Versions", []):
                self.assertFalse(v["IsLatest"], v)
                listed_versions[v["Key"]] = v["VersionId"]
        self.assertEqual((listed_markers, listed_versions), (markers, versions))
        # Quiet, by version id: the markers go, nothing is reported.
        r = s3.delete_objects(Bucket=bucket, Delete={
            "Objects": [{"Key": k, "VersionId": markers[k]} for k in keys], "Quiet": True})
        self.assertEqual((r.get("Deleted", []), r.get("Errors", [])), ([], []))
        self.assertEqual(self.listed_keys(s3, bucket), keys)
        for k in ("k/0000", "k/0500", "k/0999"):
            got = s3.get_object(Bucket=bucket, Key=k)
            self.assertEqual((got["VersionId"], got["Body"].read()), (versions[k], k.encode()))
        self.empty_versioned(s3, bucket)


# --- 5. s3cmd and rclone ---------------------------------------------------------

class OtherClientsTest(ClientTestCase):
    def test_s3cmd_multipart_https(self):
        c = self.c
        config = os.path.join(self.tmp, "s3cfg-multipart")
        with open(c.s3cfg(True)) as f:
            text = f.read().replace("enable_multipart = False", "enable_multipart = True")
        with open(config, "w") as f:
            f.write(text)

        def s3cmd(*args):
            return c.run(["s3cmd", "-c", config, *args], https=True)
        s3cmd("mb", "s3://mpc-s3cmd")
        src = os.path.join(self.tmp, "s3cmd.bin")
        digest = generate(src, 100 * MiB, "s3cmd", part_bytes=15 * MiB)
        s3cmd("put", "--multipart-chunk-size-mb=15", src, "s3://mpc-s3cmd/hundred.bin")
        head = c.boto3_client(https=True).head_object(Bucket="mpc-s3cmd", Key="hundred.bin")
        self.assertEqual((head["ContentLength"], head["ETag"]), (100 * MiB, digest.etag()))
        os.unlink(src)
        dst = os.path.join(self.tmp, "s3cmd.back")
        s3cmd("get", "s3://mpc-s3cmd/hundred.bin", dst)
        self.assertEqual(file_sha256(dst), digest.sha.hexdigest(), "the s3cmd download differs")
        s3cmd("del", "s3://mpc-s3cmd/hundred.bin")
        s3cmd("rb", "s3://mpc-s3cmd")

    def test_rclone_multipart_https(self):
        c = self.c
        src = os.path.join(self.tmp, "src")
        os.makedirs(src)
        digest = generate(os.path.join(src, "hundred.bin"), 100 * MiB, "rclone",
                          part_bytes=10 * MiB)
        chunked = ("--s3-upload-cutoff", "10M", "--s3-chunk-size", "10M")
        c.rclone("copy", *chunked, src, "tss:mpc-rclone/data", https=True)
        head = c.boto3_client(https=True).head_object(Bucket="mpc-rclone", Key="data/hundred.bin")
        self.assertEqual((head["ContentLength"], head["ETag"]), (100 * MiB, digest.etag()))
        c.rclone("check", "--download", src, "tss:mpc-rclone/data", https=True)
        c.rclone("purge", "tss:mpc-rclone", https=True)


# --- 6. bad input ------------------------------------------------------------------

class BadInputTest(ClientTestCase):
    BUCKET = "mpc-bad"

    @classmethod
    def setUpClass(cls):
        cls.s3 = CLUSTER.boto3_client(retries=1)
        cls.s3.create_bucket(Bucket=cls.BUCKET)

    def upload(self, key, sizes):
        s3 = self.s3
        upload_id = s3.create_multipart_upload(Bucket=self.BUCKET, Key=key)["UploadId"]
        self.addCleanup(self.abort_quietly, key, upload_id)
        parts = []
        for n, size in enumerate(sizes, start=1):
            data = random.Random(f"{key}/{n}").randbytes(size)
            r = s3.upload_part(Bucket=self.BUCKET, Key=key, UploadId=upload_id, PartNumber=n,
                               Body=data)
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
        return upload_id, parts

    def abort_quietly(self, key, upload_id):
        try:
            self.s3.abort_multipart_upload(Bucket=self.BUCKET, Key=key, UploadId=upload_id)
        except Exception:  # noqa: BLE001 - completed or aborted already
            pass

    def complete(self, key, upload_id, parts):
        return self.s3.complete_multipart_upload(Bucket=self.BUCKET, Key=key, UploadId=upload_id,
                                                 MultipartUpload={"Parts": parts})

    def assert_absent(self, key):
        self.assert_error(self.s3.head_object, "404", 404, Bucket=self.BUCKET, Key=key)

    def test_reuploaded_part_and_part_of_another_upload(self):
        key = "reupload"
        upload_id, (p1, p2) = self.upload(key, [5 * MiB, 100])
        other_id, (q1, _) = self.upload("other", [5 * MiB, 10])
        # Part 1 uploaded again with other bytes: only the new ETag counts.
        r = self.s3.upload_part(Bucket=self.BUCKET, Key=key, UploadId=upload_id, PartNumber=1,
                                Body=random.Random("again").randbytes(5 * MiB))
        new_p1 = {"PartNumber": 1, "ETag": r["ETag"]}
        self.assertNotEqual(new_p1["ETag"], p1["ETag"])
        for name, parts in (("superseded ETag", [p1, p2]), ("another upload's part", [q1, p2])):
            with self.subTest(case=name):
                self.assert_error(self.complete, "InvalidPart", 400, key=key,
                                  upload_id=upload_id, parts=parts)
                self.assert_absent(key)
        parts = self.s3.list_parts(Bucket=self.BUCKET, Key=key, UploadId=upload_id)["Parts"]
        self.assertEqual([(p["PartNumber"], p["ETag"]) for p in parts],
                         [(1, new_p1["ETag"]), (2, p2["ETag"])])
        self.complete(key, upload_id, [new_p1, p2])
        self.assertEqual(self.s3.head_object(Bucket=self.BUCKET, Key=key)["ContentLength"],
                         5 * MiB + 100)
        self.s3.delete_object(Bucket=self.BUCKET, Key=key)

    def test_small_middle_part(self):
        key = "small-middle"
        upload_id, parts = self.upload(key, [5 * MiB, 1000, 5 * MiB])
        self.assert_error(self.complete, "EntityTooSmall", 400, key=key, upload_id=upload_id,
                          parts=parts)
        self.assert_absent(key)

    def test_part_number_out_of_range(self):
        key = "part-numbers"
        upload_id, parts = self.upload(key, [10])
        for n in (0, 10001):
            with self.subTest(part_number=n):
                self.assert_error(self.s3.upload_part, "InvalidArgument", 400, Bucket=self.BUCKET,
                                  Key=key, UploadId=upload_id, PartNumber=n, Body=b"x")
        raw = h.S3Raw(self.c)
        for name, value in (("max-parts", "-1"), ("max-parts", "ten"),
                            ("part-number-marker", "x")):
            with self.subTest(param=name, value=value):
                resp = raw.request("GET", h.key_path(self.BUCKET, key),
                                   query=[("uploadId", upload_id), (name, value)])
                self.assert_raw_error(resp, "InvalidArgument", 400)
        self.complete(key, upload_id, parts)
        self.s3.delete_object(Bucket=self.BUCKET, Key=key)

    def test_upload_id_of_another_key(self):
        upload_id, parts = self.upload("owner-key", [10])
        for call, kw in ((self.s3.upload_part, {"PartNumber": 1, "Body": b"x"}),
                         (self.s3.list_parts, {}),
                         (self.s3.abort_multipart_upload, {})):
            with self.subTest(call=call.__name__):
                self.assert_error(call, "NoSuchUpload", 404, Bucket=self.BUCKET, Key="thief",
                                  UploadId=upload_id, **kw)
        self.assert_absent("thief")
        # The owner's upload is intact and completes.
        self.complete("owner-key", upload_id, parts)
        self.s3.delete_object(Bucket=self.BUCKET, Key="owner-key")

    def test_version_ids(self):
        s3, bucket = self.c.boto3_client(retries=1), "mpc-bad-versions"
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        va = s3.put_object(Bucket=bucket, Key="a", Body=b"a1")["VersionId"]
        s3.put_object(Bucket=bucket, Key="b", Body=b"b1")
        # A version id of another key: no such version of this one.
        self.assert_error(s3.get_object, "NoSuchVersion", 404, Bucket=bucket, Key="b",
                          VersionId=va)
        self.assert_error(s3.head_object, "404", 404, Bucket=bucket, Key="b", VersionId=va)
        self.assert_error(s3.get_object, "NoSuchVersion", 404, Bucket=bucket, Key="nokey",
                          VersionId=va)
        # Deleting it through the other key never touches key a.
        try:
            s3.delete_object(Bucket=bucket, Key="b", VersionId=va)
        except Exception:  # noqa: BLE001 - S3 answers 204; an error is acceptable too
            pass
        self.assertEqual(s3.get_object(Bucket=bucket, Key="a", VersionId=va)["Body"].read(), b"a1")
        self.assertEqual(s3.get_object(Bucket=bucket, Key="b")["Body"].read(), b"b1")
        raw = h.S3Raw(self.c)
        for value in ("not-a-version", "\u00e9" * 3):
            with self.subTest(version_id=value):
                resp = raw.request("GET", h.key_path(bucket, "a"), query=[("versionId", value)])
                self.assert_raw_error(resp, "InvalidArgument", 400)
        resp = raw.request("GET", h.key_path(bucket, "a"), query=[("versionId", "")])
        self.assert_raw_error(resp, "InvalidArgument", 400)
        # version-id-marker without key-marker.
        resp = raw.request("GET", f"/{bucket}", query=[("versions", ""),
                                                       ("version-id-marker", va)])
        self.assert_raw_error(resp, "InvalidArgument", 400)
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
            for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
                s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])
        s3.delete_bucket(Bucket=bucket)


if __name__ == "__main__":
    unittest.main(verbosity=2)
