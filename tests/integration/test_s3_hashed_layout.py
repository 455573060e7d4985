#!/usr/bin/env python3
"""Hashed layout: listing order and pagination match the ordered layout on
the same keys.

Goal: a bucket created with `tessera s3 bucket create NAME --layout
hashed:8` answers every listing (ListObjectsV2 and V1, ListObjectVersions,
ListMultipartUploads; prefix, delimiter, page sizes, start-after, markers,
continuation tokens) page for page as an ordered bucket holding the same
keys does, with boto3; GET, HEAD, DELETE and CopyObject between the two
layouts agree; its sequential and date-prefixed keys land in several
`_s3` partitions once its range is split at hash-range boundaries (the
ordered bucket's stay in one); bad layouts exit 2 with a message, and a
bucket keeps the layout it was created with. One small cluster (3
storage nodes, one autoadmin for the splits).
"""

import concurrent.futures
import json
import os
import time
import unittest

import s3_harness as h

CLUSTER = None
ORDERED, HASHED = "ordered-b", "hashed-b"
# Printable bucket ids: split keys pass as command-line text.
ORDERED_ID = int.from_bytes(b"HASHO001", "big")
HASHED_ID = int.from_bytes(b"HASHH001", "big")
RANGES = 8
SPLIT_RANGES = (3, 5, 7)  # the hashed bucket is split at `B 03`, `B 05`, `B 07`
AUTOADMIN_SETTINGS = ("split_bytes: 1099511627776 poll_interval_ms: 200 lease_ms: 2000 "
                      "max_concurrent: 8 dead_after_ms: 30000")


def object_keys():
    keys = [f"seq/{i:05d}" for i in range(80)]
    keys += [f"2024-01-{d:02d}/log-{i:03d}" for d in range(1, 6) for i in range(16)]
    keys += [f"a/b/c/{i}" for i in range(12)] + [f"a/b/{i}" for i in range(12)]
    keys += [f"a/{i}" for i in range(12)] + ["a", "a/", "z", "v/x"]
    return keys


VERSIONED = [f"v/{i}" for i in range(8)]  # written twice; the first three deleted
UPLOADS = ["up/0", "up/0", "up/1", "up/2", "a/b/up", "seq/00003", "z"]


def split_text(range_byte):
    return (HASHED_ID.to_bytes(8, "big") + bytes([range_byte])).decode()


class HashedCluster(h.S3Cluster):
    def __init__(self):
        super().__init__("s3-hashed", nodes_per_az=1, autoadmins=1,
                         autoadmin_settings=AUTOADMIN_SETTINGS)

    def split(self, key_text):
        self.cli("kv", "partition", "split", "_s3", "--key", key_text, timeout=120)

    def usage(self, bucket):
        return json.loads(self.cli("s3", "usage", bucket, "--json").stdout)


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = HashedCluster()
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    c = CLUSTER
    c.cli("s3", "bucket", "create", ORDERED, "--owner", "admin", "--id", str(ORDERED_ID))
    out = c.cli("s3", "bucket", "create", HASHED, "--owner", "admin", "--id", str(HASHED_ID),
                "--layout", f"hashed:{RANGES}").stdout
    assert f"layout=hashed:{RANGES}" in out, out
    for r in SPLIT_RANGES:
        c.split(split_text(r))
    s3 = c.boto3_client(retries=8, read_timeout=30)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for bucket in (ORDERED, HASHED):
            s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
            list(pool.map(lambda k, b=bucket: s3.put_object(Bucket=b, Key=k, Body=k.encode()),
                          object_keys() + VERSIONED))
            list(pool.map(lambda k, b=bucket: s3.put_object(Bucket=b, Key=k, Body=b"2" + k.encode()),
                          VERSIONED))
            for k in VERSIONED[:3]:
                s3.delete_object(Bucket=bucket, Key=k)
            for k in UPLOADS:
                s3.create_multipart_upload(Bucket=bucket, Key=k)


def v2_pages(s3, bucket, **kw):
    pages, token = [], None
    for _ in range(1000):
        args = dict(kw, Bucket=bucket)
        if token:
            args["ContinuationToken"] = token
        r = s3.list_objects_v2(**args)
        pages.append(([o["Key"] for o in r.get("Contents", [])],
                      [p["Prefix"] for p in r.get("CommonPrefixes", [])], r["KeyCount"],
                      r["IsTruncated"]))
        if not r["IsTruncated"]:
            return pages
        token = r["NextContinuationToken"]
    raise AssertionError("the listing does not end")


def v1_pages(s3, bucket, **kw):
    pages, marker = [], None
    for _ in range(1000):
        args = dict(kw, Bucket=bucket)
        if marker:
            args["Marker"] = marker
        r = s3.list_objects(**args)
        keys = [o["Key"] for o in r.get("Contents", [])]
        prefixes = [p["Prefix"] for p in r.get("CommonPrefixes", [])]
        pages.append((keys, prefixes, r.get("NextMarker"), r["IsTruncated"]))
        if not r["IsTruncated"]:
            return pages
        marker = r.get("NextMarker") or keys[-1]
    raise AssertionError("the listing does not end")


def version_pages(s3, bucket, **kw):
    """Version ids differ between buckets: pages of (key, is_latest, kind)."""
    pages, markers = [], {}
    for _ in range(1000):
        r = s3.list_object_versions(Bucket=bucket, **kw, **markers)
        items = sorted([(v["Key"], v["IsLatest"], "v") for v in r.get("Versions", [])] +
                       [(m["Key"], m["IsLatest"], "m") for m in r.get("DeleteMarkers", [])],
                       key=lambda i: i[0])
        pages.append((items, [p["Prefix"] for p in r.get("CommonPrefixes", [])],
                      r.get("NextKeyMarker"), r["IsTruncated"]))
        if not r["IsTruncated"]:
            return pages
        markers = {"KeyMarker": r["NextKeyMarker"]}
        if r.get("NextVersionIdMarker"):
            markers["VersionIdMarker"] = r["NextVersionIdMarker"]
    raise AssertionError("the listing does not end")


def upload_pages(s3, bucket, **kw):
    pages, markers = [], {}
    for _ in range(1000):
        r = s3.list_multipart_uploads(Bucket=bucket, **kw, **markers)
        pages.append(([u["Key"] for u in r.get("Uploads", [])],
                      [p["Prefix"] for p in r.get("CommonPrefixes", [])], r["IsTruncated"]))
        if not r["IsTruncated"]:
            return pages
        # NextKeyMarker names the last upload, never a common prefix
        # (s3-compatibility): past a page ending in one, page on from it.
        last_prefix = max((p["Prefix"] for p in r.get("CommonPrefixes", [])), default="")
        if last_prefix.encode() > r.get("NextKeyMarker", "").encode():
            markers = {"KeyMarker": last_prefix}
        else:
            markers = {"KeyMarker": r["NextKeyMarker"], "UploadIdMarker": r["NextUploadIdMarker"]}
    raise AssertionError("the listing does not end")


SHAPES = [dict(), dict(Prefix="a/"), dict(Delimiter="/"), dict(Prefix="a/", Delimiter="/"),
          dict(Prefix="2024-01-0", Delimiter="/"), dict(Prefix="seq/000")]


class HashedLayoutTest(unittest.TestCase):
    def setUp(self):
        self.s3 = CLUSTER.boto3_client(retries=8, read_timeout=30)

    def same(self, pages_of, **kw):
        ordered = pages_of(self.s3, ORDERED, **kw)
        hashed = pages_of(self.s3, HASHED, **kw)
        self.assertEqual(hashed, ordered, f"{pages_of.__name__} {kw}")
        return ordered

    def test_list_objects_v2_pages_match(self):
        for shape in SHAPES:
            for max_keys in (1000, 7):
                with self.subTest(shape=shape, max_keys=max_keys):
                    pages = self.same(v2_pages, MaxKeys=max_keys, **shape)
                    self.assertTrue(any(p[0] or p[1] for p in pages))
        whole = self.same(v2_pages, MaxKeys=1000)
        expected = sorted(set(object_keys()) | set(VERSIONED[3:]), key=str.encode)
        self.assertEqual(whole[0][0], expected)
        for start in ("a/b", "a/", "2024-01-03", "seq/00050", "zz"):
            with self.subTest(start_after=start):
                self.same(v2_pages, MaxKeys=9, StartAfter=start)
                self.same(v2_pages, MaxKeys=4, StartAfter=start, Delimiter="/")

    def test_list_objects_v1_pages_match(self):
        for shape in SHAPES:
            for max_keys in (1000, 11):
                with self.subTest(shape=shape, max_keys=max_keys):
                    self.same(v1_pages, MaxKeys=max_keys, **shape)

    def test_version_and_upload_listings_match(self):
        for shape in (dict(), dict(Prefix="v/"), dict(Delimiter="/"), dict(Prefix="a/", Delimiter="/")):
            for max_keys in (1000, 3):
                with self.subTest(versions=shape, max_keys=max_keys):
                    pages = self.same(version_pages, MaxKeys=max_keys, **shape)
                    self.assertTrue(any(p[0] or p[1] for p in pages))
        pages = self.same(version_pages, MaxKeys=1000, Prefix="v/")
        self.assertEqual(len(pages[0][0]), 2 * len(VERSIONED) + 3 + 1)  # and v/x
        for shape in (dict(), dict(Delimiter="/"), dict(Prefix="up/")):
            for max_uploads in (1000, 2):
                with self.subTest(uploads=shape, max_uploads=max_uploads):
                    self.same(upload_pages, MaxUploads=max_uploads, **shape)
        self.assertEqual(self.same(upload_pages, MaxUploads=1000)[0][0],
                         sorted(UPLOADS, key=str.encode))

    def test_object_operations_and_copies_agree(self):
        s3 = self.s3
        for key in ("seq/00007", "2024-01-02/log-003", "a/", "a"):
            for bucket in (ORDERED, HASHED):
                self.assertEqual(s3.get_object(Bucket=bucket, Key=key)["Body"].read(), key.encode())
                self.assertEqual(s3.head_object(Bucket=bucket, Key=key)["ContentLength"], len(key))
        for src, dst in ((ORDERED, HASHED), (HASHED, ORDERED), (HASHED, HASHED)):
            s3.copy_object(Bucket=dst, Key=f"copy/{src}", CopySource={"Bucket": src, "Key": "a/b/c/3"})
            self.assertEqual(s3.get_object(Bucket=dst, Key=f"copy/{src}")["Body"].read(), b"a/b/c/3")
        s3.copy_object(Bucket=ORDERED, Key=f"copy/{ORDERED}",
                       CopySource={"Bucket": ORDERED, "Key": "a/b/c/3"})
        for bucket in (ORDERED, HASHED):
            s3.delete_object(Bucket=bucket, Key="z")
            with self.assertRaises(s3.exceptions.ClientError) as e:
                s3.head_object(Bucket=bucket, Key="z")
            self.assertEqual(e.exception.response["Error"]["Code"], "404")
        self.same(v2_pages, MaxKeys=5, Prefix="copy/")
        self.same(v2_pages, MaxKeys=1000)
        self.same(version_pages, MaxKeys=6, Prefix="z")
        for bucket in (ORDERED, HASHED):
            s3.put_object(Bucket=bucket, Key="z", Body=b"z")

    def test_keys_land_in_several_partitions(self):
        hashed, ordered = CLUSTER.usage(HASHED), CLUSTER.usage(ORDERED)
        self.assertEqual(hashed["versions"], ordered["versions"])
        spread = [n for n in hashed["partition_objects"] if n > 0]
        self.assertGreaterEqual(len(spread), len(SPLIT_RANGES) + 1, hashed)
        self.assertEqual(len([n for n in ordered["partition_objects"] if n > 0]), 1, ordered)

    def test_longest_key_with_a_blob_body(self):
        # The stored key is one byte longer in a hashed bucket; a blob's owner
        # (B h K) of a 1,024-byte key still fits its bound.
        s3 = self.s3
        key = "long/" + "k" * 1019
        body = os.urandom(300 << 10)  # above the inline bound: stored in blobs
        for bucket in (ORDERED, HASHED):
            s3.put_object(Bucket=bucket, Key=key, Body=body)
            self.assertEqual(s3.get_object(Bucket=bucket, Key=key)["Body"].read(), body)
            s3.delete_object(Bucket=bucket, Key=key)

    def test_bad_layouts_are_refused(self):
        c = CLUSTER
        for bad in ("hashed:1", "hashed:256", "hashed:x", "hashed", "hashed:0"):
            p = c.cli("s3", "bucket", "create", "bad-layout", "--owner", "admin", "--layout", bad,
                      check=False)
            self.assertEqual(p.returncode, 2, (bad, p.stdout, p.stderr))
            self.assertIn("2..255", p.stderr, bad)
        # The layout is fixed at creation: asking another one names it.
        p = c.cli("s3", "bucket", "create", HASHED, "--owner", "admin", "--layout", "ordered",
                  check=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn(f"key layout hashed:{RANGES}", p.stderr)
        lines = c.cli("s3", "buckets").stdout.splitlines()
        self.assertTrue(any(l.startswith(HASHED + " ") and f"layout=hashed:{RANGES}" in l for l in lines))
        self.assertTrue(any(l.startswith(ORDERED + " ") and "layout=ordered" in l for l in lines))


if __name__ == "__main__":
    unittest.main()
