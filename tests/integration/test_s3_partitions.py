#!/usr/bin/env python3
"""S3 listings of one bucket spread over many `_s3` partitions.

Goal: prove that a bucket whose keys span 9 partitions of the `_s3` table
lists exactly as S3 does, and reads only the partitions it must:
  1. `tessera cluster up --s3-split 77:K` (8 object-key split points) gives
     `_s3` exactly the even bucket-id splits plus BucketPrefix(77),
     BucketPrefix(78) and ObjectPrefix(77, K), and bad --s3-split values
     fail with a message; `tessera s3 bucket create NAME --owner admin --id
     77` puts the bucket on those partitions (and refuses a used id);
  2. list_objects_v2 and list_objects (v1), with and without delimiter "/",
     with prefixes and start-after, in pages of 1, 3, 7 and 1000 keys,
     return page for page exactly what a brute-force model of S3 listing
     gives from the key set (keys equal to split points, keys just around
     them, common prefixes straddling a split such as "p/" over "p/q"), and
     no common prefix repeats across pages or partitions;
  3. a prefix listing contacts exactly the partitions whose range overlaps
     [prefix, prefix successor) (delta of the router's Prometheus counter
     tessera_s3_list_partition_reads_total, expected count computed from
     `tessera cluster status`).
The model's rule for start-after (marker) with a delimiter: keys after it,
rolled up into common prefixes; a common prefix <= start-after is not
shown. This is what makes a NextMarker / continuation token that is a
common prefix resume past it, and what Ceph RGW does (skip_after_delim)
for a marker inside a common prefix. One cluster for the whole file.
"""

import concurrent.futures
import os
import random
import re
import sys
import time
import unittest
import urllib.request

import s3_harness as h
from test_kv_cluster import parse_metrics, parse_status

BUCKET_ID = 77
BUCKET = "parts"
SPLIT_KEYS = ["d/", "f", "k/", "m", "p/q", "t", "w/", "y"]
PAGE_SIZES = (1, 3, 7, 1000)
METRIC = "tessera_s3_list_partition_reads_total"
CLUSTER = None


def be64(n):
    return n.to_bytes(8, "big")


def even_split_points(partitions=8):
    """meta::S3TableSplitPoints: floor(k * 2^64 / partitions), 8 bytes BE."""
    return [be64(k * (1 << 64) // partitions) for k in range(1, partitions)]


def prefix_successor(b):
    """The smallest byte string above every string starting with b (b"" if none)."""
    b = bytearray(b)
    while b and b[-1] == 0xFF:
        b.pop()
    if not b:
        return b""
    b[-1] += 1
    return bytes(b)


def utf8(s):
    return s.encode("utf-8")


def make_keys():
    """A few hundred keys in every partition of the bucket: the split keys
    themselves, keys just before and after each, deep trees under common
    prefixes that straddle a split, and random keys."""
    keys = set(SPLIT_KEYS)
    for s in SPLIT_KEYS:
        stem, last = s[:-1], s[-1]
        keys.update({stem + chr(ord(last) - 1), stem + chr(ord(last) - 1) + "~",
                     s + "a", s + "/", s + "/x", s + "-", s + ".", s + "!", s + "~"})
        if stem:
            keys.add(stem)
    # Common prefixes across splits: "p/" over "p/q", "k/" and "w/" and "d/"
    # starting exactly at a split, "x/" ending just before "y".
    for i in range(40):
        keys.add(f"p/{chr(ord('a') + i % 26)}{i:02d}")
        keys.add(f"p/q{i % 7}/{i:02d}")
        keys.add(f"p/r/{i:02d}")
    for top in ("d/", "k/", "w/", "x/", "m/", "t/"):
        for i in range(10):
            keys.add(f"{top}{i % 4}/{i}")
            keys.add(f"{top}f{i}")
    keys.update({"0", "0/a", "A", "!", "a/b/c", "c/", "ü", "ü/ß", "鍵/1", "zz", "z/z", "y/ü"})
    rnd = random.Random(77)
    alphabet = "abdfkmpqtwy/._-~"
    while len(keys) < 420:
        keys.add("".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 7))))
    return sorted(keys, key=utf8)


def model_list(keys, prefix, delimiter, start_after):
    """S3 listing of the sorted key set -> [(name, is_common_prefix)]."""
    out = []
    after = utf8(start_after or "")
    for k in keys:
        if not k.startswith(prefix) or (after and utf8(k) <= after):
            continue
        if delimiter:
            at = k.find(delimiter, len(prefix))
            if at >= 0:
                common = k[:at + len(delimiter)]
                if (after and utf8(common) <= after) or (out and out[-1] == (common, True)):
                    continue
                out.append((common, True))
                continue
        out.append((k, False))
    return out


class SplitCluster(h.S3Cluster):
    """S3Cluster whose `cluster up` adds --s3-split flags."""

    def __init__(self, name, s3_splits):
        super().__init__(name)
        self.s3_splits = s3_splits
        with open(self.layout) as f:
            self.router_http_port = int(re.search(r"routers \{[^}]*http_port: (\d+)", f.read())[1])

    def cli(self, *args, **kw):
        if args[:2] == ("cluster", "up"):
            args += tuple(f"--s3-split={s}" for s in self.s3_splits)
        return super().cli(*args, **kw)

    def metric(self, name):
        url = f"http://127.0.0.1:{self.router_http_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            return parse_metrics(r.read().decode())[name]


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = SplitCluster("s3-partitions", [f"{BUCKET_ID}:{k}" for k in SPLIT_KEYS])
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


class PartitionedBucketTest(unittest.TestCase):
    keys = None

    @classmethod
    def setUpClass(cls):
        c = CLUSTER
        out = c.cli("s3", "bucket", "create", BUCKET, "--owner", "admin", "--id",
                    str(BUCKET_ID)).stdout
        assert out.startswith(f"{BUCKET} id={BUCKET_ID} owner=admin "), out
        cls.s3 = c.boto3_client()
        cls.keys = make_keys()
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda k: cls.s3.put_object(Bucket=BUCKET, Key=k, Body=utf8(k)),
                          cls.keys))
        print(f"[{len(cls.keys)} keys put in {time.monotonic() - started:.1f}s]", file=sys.stderr,
              end=" ")

    def setUp(self):
        self.c = CLUSTER
        self.started = time.monotonic()

    def tearDown(self):
        print(f"[{self.id().split('.')[-1]}: {time.monotonic() - self.started:.1f}s]",
              file=sys.stderr, end=" ")

    # --- helpers --------------------------------------------------------------
    def s3_partitions(self):
        """The `_s3` partitions from `tessera cluster status`: [(start, end)]."""
        parts = parse_status(self.c.cli("cluster", "status", "--json").stdout)
        return sorted((p["start"], p["end"]) for p in parts if p["table"] == "_s3")

    def bucket_ranges(self):
        """The partition ranges inside the bucket, as object-key bounds."""
        lo, hi = be64(BUCKET_ID), be64(BUCKET_ID + 1)
        return [(s, e) for s, e in self.s3_partitions() if s >= lo and e and e <= hi]

    def list_pages(self, v2, prefix, delimiter, start_after, max_keys):
        """Every page of one listing -> [[(name, is_common_prefix)] per page].
        Checks each page's bookkeeping (counts, truncation, markers)."""
        pages, token, marker = [], None, start_after
        for _ in range(2000):
            kw = {"Bucket": BUCKET, "Prefix": prefix, "MaxKeys": max_keys}
            if delimiter:
                kw["Delimiter"] = delimiter
            if v2:
                if start_after:
                    kw["StartAfter"] = start_after  # ignored by S3 once a token is given
                if token:
                    kw["ContinuationToken"] = token
                r = self.s3.list_objects_v2(**kw)
            else:
                if marker:
                    kw["Marker"] = marker
                r = self.s3.list_objects(**kw)
            contents = [(o["Key"], False) for o in r.get("Contents", [])]
            prefixes = [(p["Prefix"], True) for p in r.get("CommonPrefixes", [])]
            page = sorted(contents + prefixes, key=lambda item: utf8(item[0]))
            where = f"v2={v2} prefix={prefix!r} delimiter={delimiter!r} " \
                    f"start_after={start_after!r} max_keys={max_keys} page {len(pages)}"
            self.assertLessEqual(len(page), max_keys, where)
            if v2:
                self.assertEqual(r["KeyCount"], len(page), where)
            pages.append(page)
            if not r["IsTruncated"]:
                self.assertNotIn("NextContinuationToken", r, where)
                return pages
            self.assertTrue(page, f"truncated empty page: {where}")
            if v2:
                token = r["NextContinuationToken"]
            else:
                if delimiter:
                    self.assertEqual(r.get("NextMarker"), page[-1][0], where)
                marker = r.get("NextMarker") or contents[-1][0]
        self.fail("listing did not end")

    def check_listing(self, v2, prefix, delimiter, start_after, max_keys):
        expected = model_list(self.keys, prefix, delimiter, start_after)
        pages = self.list_pages(v2, prefix, delimiter, start_after, max_keys)
        where = (f"v2={v2} prefix={prefix!r} delimiter={delimiter!r} "
                 f"start_after={start_after!r} max_keys={max_keys}")
        # Page for page: every page but the last is full.
        want_pages = [expected[i:i + max_keys] for i in range(0, len(expected), max_keys)] or [[]]
        got = [item for page in pages for item in page]
        self.assertEqual(got, expected, where)
        self.assertEqual(pages, want_pages, where)
        names = [name for name, _ in got]
        self.assertEqual(len(names), len(set(names)), f"an item repeats across pages: {where}")
        return len(pages)

    # --- tests ------------------------------------------------------------------
    def test_split_points_and_bucket_placement(self):
        want = sorted(set(even_split_points()) |
                      {be64(BUCKET_ID), be64(BUCKET_ID + 1)} |
                      {be64(BUCKET_ID) + utf8(k) for k in SPLIT_KEYS})
        parts = self.s3_partitions()
        self.assertEqual([s for s, _ in parts], [b""] + want)
        self.assertEqual([e for _, e in parts], want + [b""])
        inside = self.bucket_ranges()
        self.assertEqual(len(inside), len(SPLIT_KEYS) + 1, inside)
        # Every partition of the bucket holds keys of the test set.
        for start, end in inside:
            held = [k for k in self.keys if start <= be64(BUCKET_ID) + utf8(k) < end]
            self.assertGreaterEqual(len(held), 5, (start, end))
        out = self.c.cli("s3", "buckets").stdout
        self.assertRegex(out, rf"(?m)^{BUCKET} id={BUCKET_ID} owner=admin ")
        # Re-creating it is answered from the registry; the id is not reusable.
        out = self.c.cli("s3", "bucket", "create", BUCKET, "--owner", "admin", "--id",
                         str(BUCKET_ID)).stdout
        self.assertIn("(already owned by you)", out)
        p = self.c.cli("s3", "bucket", "create", "other-name", "--owner", "admin", "--id",
                       str(BUCKET_ID), check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("tessera s3:", p.stderr)
        p = self.c.cli("s3", "bucket", "create", BUCKET, "--owner", "admin", "--id",
                       str(BUCKET_ID + 1), check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn(f"exists with id {BUCKET_ID}", p.stderr)
        p = self.c.cli("s3", "bucket", "create", "zero-id", "--owner", "admin", "--id", "0",
                       check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)

    def test_bad_split_flags_fail_with_a_message(self):
        for bad in ("nocolon", "0:x", "abc:x", "-1:x", ":x", "77x:y", " 77:x",
                    "18446744073709551616:x", f"77:{'k' * 1020}"):
            with self.subTest(value=bad):
                p = self.c.cli("cluster", "up", "--detach", f"--s3-split={bad}", check=False,
                               timeout=30)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn("--s3-split", p.stderr)
                self.assertNotIn("started", p.stdout)
        # The running cluster was not touched.
        self.assertEqual(self.s3.head_bucket(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"],
                         200)

    def test_every_key_reads_back(self):
        got = [o["Key"] for p in self.s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
               for o in p.get("Contents", [])]
        self.assertEqual(got, self.keys)
        for k in SPLIT_KEYS + ["p/", "p/p39", "p/q0/00", "x/3/3", "ü/ß"]:
            if k in self.keys:
                self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=k)["Body"].read(), utf8(k))

    def test_whole_bucket_in_every_page_size(self):
        requests = 0
        for v2 in (True, False):
            for delimiter in (None, "/"):
                for max_keys in PAGE_SIZES:
                    requests += self.check_listing(v2, "", delimiter, None, max_keys)
        print(f"[{requests} list requests]", file=sys.stderr, end=" ")

    def test_prefixes_and_start_after(self):
        prefixes = ["d", "d/", "e", "f", "k", "k/", "m", "p", "p/", "p/q", "p/q/", "p/r/", "t",
                    "w", "w/", "x/", "y", "ü", "nothing-here"]
        starts = [None, "d/", "e~", "k/", "m", "p/", "p/a", "p/q", "p/q3/", "p/r/", "t", "x/",
                  "y", "zz"]
        requests = 0
        for v2 in (True, False):
            for delimiter in (None, "/"):
                for prefix in prefixes:
                    for max_keys in PAGE_SIZES:
                        requests += self.check_listing(v2, prefix, delimiter, None, max_keys)
                for start_after in starts:
                    for prefix in ("", "p/", "p", "k/"):
                        for max_keys in (3, 1000):
                            requests += self.check_listing(v2, prefix, delimiter, start_after,
                                                           max_keys)
        print(f"[{requests} list requests]", file=sys.stderr, end=" ")

    def test_prefix_listing_reads_only_overlapping_partitions(self):
        parts = self.s3_partitions()

        def overlapping(prefix):
            lo = be64(BUCKET_ID) + utf8(prefix)
            hi = prefix_successor(lo)
            return sum(1 for s, e in parts if s < hi and (not e or e > lo))

        cases = ["", "0", "d", "d/", "d/3", "e", "f", "k", "k/", "m", "m/", "p", "p/", "p/q",
                 "p/q/", "p/q3", "p/r", "t", "w", "w/", "x", "y", "yz", "z", "ü", "nothing-here"]
        seen = set()
        for prefix in cases:
            want = overlapping(prefix)
            seen.add(want)
            for v2 in (True, False):
                with self.subTest(prefix=prefix, v2=v2):
                    before = self.c.metric(METRIC)
                    kw = {"Bucket": BUCKET, "Prefix": prefix, "MaxKeys": 1000}
                    r = self.s3.list_objects_v2(**kw) if v2 else self.s3.list_objects(**kw)
                    self.assertFalse(r["IsTruncated"])
                    delta = self.c.metric(METRIC) - before
                    self.assertEqual(delta, want, f"prefix {prefix!r}: {delta} partitions read, "
                                                  f"{want} overlap it")
        # The cases exercise one, two and all nine partitions.
        self.assertTrue({1, 2, len(SPLIT_KEYS) + 1} <= seen, seen)


if __name__ == "__main__":
    unittest.main(verbosity=2)
