#!/usr/bin/env python3
"""Listing cost follows the keys read, not the bucket's partition count.

Goal: a ListObjectsV2 walk of the 1,000 keys under one prefix reads the
same partitions, the same number of times, and returns the same keys in
the same pages, whether the bucket's `_s3` range is one partition, 8 or 64
(range sharding: a listing that fanned out to every partition of the
bucket would read 8 or 64 times as many). One cluster (3 storage nodes, one
per AZ, one autoadmin); the objects are written once while the bucket is
one partition, then the bucket is split by hand (`tessera kv partition
split _s3 --key ...`) to 8 and then to 64 partitions, with the prefix's
keys in one partition of their own ([prefix, prefix successor)) and the
other split points below and above it. At each count, for pages of 1,000
and of 100 keys, with and without the delimiter "/":
  1. the keys and common prefixes equal the model's, page for page;
  2. the router's tessera_s3_list_partition_reads_total grows by one per
     page (each page reads one partition), the same at every count;
and at 64 partitions a walk of the whole bucket reads every one of its
partitions (the counter counts what a fan-out would cost).
Timing is printed, never asserted (bench/s3_listing_cost.py measures it).
"""

import concurrent.futures
import sys
import time
import unittest
import urllib.request

import s3_harness as h
from test_kv_cluster import parse_metrics

CLUSTER = None
# Bucket ids are 8 bytes big-endian at the start of every `_s3` key; ids
# made of printable ASCII let the split keys pass as command-line text.
BUCKET = "listcost"
BUCKET_ID = int.from_bytes(b"LISTC001", "big")
PREFIX = "list/"
PREFIX_END = "list0"  # the prefix successor of "list/"
METRIC = "tessera_s3_list_partition_reads_total"
PAGE_SIZES = (1000, 100)
DELIMITERS = (None, "/")
# The autoadmin carries at most this many requested splits at once (its
# max_concurrent below; meta holds at most 16 requests).
SPLITS_IN_FLIGHT = 8
SPLIT_WAIT_S = 90
AUTOADMIN_SETTINGS = ("split_bytes: 1099511627776 poll_interval_ms: 200 lease_ms: 2000 "
                      "max_concurrent: 8 dead_after_ms: 30000")


def list_keys():
    """The 1,000 keys under PREFIX: 100 under "list/a/" (one common prefix
    with the delimiter) and 900 directly under it."""
    return [f"{PREFIX}a/{i:03d}" for i in range(100)] + [f"{PREFIX}k{i:04d}" for i in range(900)]


def split_keys(partitions):
    """The object keys at which the bucket is split into `partitions`
    (1, 8 or 64): always the prefix's bounds, the rest half below and half
    above it. Every set contains the smaller ones."""
    if partitions == 1:
        return []
    keys = [PREFIX, PREFIX_END, "c", "f", "p", "t", "w"]
    if partitions == 64:
        keys += [f"g{i:02d}" for i in range(28)] + [f"r{i:02d}" for i in range(28)]
    assert len(keys) == partitions - 1, partitions
    return sorted(keys)


def filler_keys():
    """Objects in every partition other than the prefix's: a walk that
    fanned out would have something to read there."""
    starts = ["a"] + [k for k in split_keys(64) if k != PREFIX]
    return [f"{s}-fill{i}" for s in starts for i in range(2)]


def model(max_keys, delimiter):
    """The expected pages of the walk: [[(name, is_common_prefix)]]."""
    items = []
    for k in sorted(list_keys()):
        if delimiter and delimiter in k[len(PREFIX):]:
            common = k[:k.index(delimiter, len(PREFIX)) + 1]
            if not items or items[-1] != (common, True):
                items.append((common, True))
            continue
        items.append((k, False))
    return [items[i:i + max_keys] for i in range(0, len(items), max_keys)]


class ListingCluster(h.S3Cluster):
    """An S3Cluster with one autoadmin (splits only on request) that splits
    `_s3` by hand and reads the router's listing counter."""

    def __init__(self, name="s3-listing-cost"):
        super().__init__(name, nodes_per_az=1, autoadmins=1,
                         autoadmin_settings=AUTOADMIN_SETTINGS)

    def metric(self, name=METRIC):
        url = f"http://127.0.0.1:{self.router_http_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            return parse_metrics(r.read().decode()).get(name, 0.0)

    def create_bucket(self, name, bucket_id):
        out = self.cli("s3", "bucket", "create", name, "--owner", "admin", "--id",
                       str(bucket_id)).stdout
        assert out.startswith(f"{name} id={bucket_id} "), out

    def bucket_partitions(self, bucket_id):
        """The `_s3` partitions overlapping the bucket, in key order."""
        lo, hi = bucket_id.to_bytes(8, "big"), (bucket_id + 1).to_bytes(8, "big")
        parts = [p for p in self.partitions()
                 if p["table"] == "_s3" and p["start"] < hi and (not p["end"] or p["end"] > lo)]
        return sorted(parts, key=lambda p: p["start"])

    def split_bucket(self, bucket_id, keys):
        """Splits the bucket's partitions until every object key of `keys`
        starts one; each round asks for the middle missing point of every
        partition (at most SPLITS_IN_FLIGHT at once) and waits for them."""
        prefix = bucket_id.to_bytes(8, "big")
        points = sorted(prefix + k.encode() for k in keys)
        deadline, refusals = time.monotonic() + SPLIT_WAIT_S, []
        while time.monotonic() < deadline:
            parts = self.bucket_partitions(bucket_id)
            missing = [pt for pt in points if pt not in {p["start"] for p in parts}]
            if not missing:
                return len(parts)
            asks = []
            for p in parts:
                inside = [pt for pt in missing if p["start"] < pt and (not p["end"] or pt < p["end"])]
                if inside:
                    asks.append(inside[len(inside) // 2])
            asks = asks[:SPLITS_IN_FLIGHT]
            with concurrent.futures.ThreadPoolExecutor(len(asks)) as pool:
                # A refused request (one still pending from a round that
                # timed out) is asked again next round.
                answers = list(pool.map(lambda pt: self.cli(
                    "kv", "partition", "split", "_s3", "--key", pt.decode(), "--no-wait",
                    check=False), asks))
            refusals += [a.stderr.strip() for a in answers if a.returncode != 0]
            h.wait_until(lambda: set(asks) <= {p["start"] for p in self.bucket_partitions(bucket_id)},
                         max(1.0, deadline - time.monotonic()), 0.3)
        raise AssertionError(f"the bucket is not split at {keys} within {SPLIT_WAIT_S} s; "
                             f"refused requests: {refusals[-5:]}")

    def put_objects(self, s3, bucket, keys, threads=8):
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode()), keys))


def walk(s3, bucket, max_keys, delimiter, prefix=PREFIX):
    """Every page of one ListObjectsV2 walk -> [[(name, is_common_prefix)]]."""
    pages, token = [], None
    for _ in range(2000):
        kw = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": max_keys}
        if delimiter:
            kw["Delimiter"] = delimiter
        if token:
            kw["ContinuationToken"] = token
        r = s3.list_objects_v2(**kw)
        items = [(o["Key"], False) for o in r.get("Contents", [])]
        items += [(p["Prefix"], True) for p in r.get("CommonPrefixes", [])]
        pages.append(sorted(items, key=lambda item: item[0].encode()))
        if not r["IsTruncated"]:
            return pages
        token = r["NextContinuationToken"]
    raise AssertionError("the listing does not end")


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = ListingCluster()
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


class ListingCostTest(unittest.TestCase):
    def measure(self, s3):
        """{(max_keys, delimiter): (pages, partition reads)} of every walk,
        after one warm-up walk (the router learns the new partition map)."""
        walk(s3, BUCKET, 1000, None)
        out = {}
        for max_keys in PAGE_SIZES:
            for delimiter in DELIMITERS:
                before = CLUSTER.metric()
                pages = walk(s3, BUCKET, max_keys, delimiter)
                out[(max_keys, delimiter)] = (pages, CLUSTER.metric() - before)
        return out

    def test_listing_cost_does_not_grow_with_partitions(self):
        c = CLUSTER
        s3 = c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)
        started = time.monotonic()
        c.create_bucket(BUCKET, BUCKET_ID)
        c.put_objects(s3, BUCKET, list_keys() + filler_keys())
        print(f"[objects put in {time.monotonic() - started:.1f}s]", file=sys.stderr, end=" ")
        self.assertEqual(len(c.bucket_partitions(BUCKET_ID)), 1)

        results = {}
        for count in (1, 8, 64):
            t = time.monotonic()
            got = c.split_bucket(BUCKET_ID, split_keys(count))
            split_s = time.monotonic() - t
            self.assertEqual(got, count)
            t = time.monotonic()
            results[count] = self.measure(s3)
            reads = {f"{m}{'/' if d else ''}": r for (m, d), (_, r) in results[count].items()}
            print(f"[{count} partitions: split {split_s:.1f}s, "
                  f"walks {time.monotonic() - t:.1f}s, partition reads {reads}]",
                  file=sys.stderr, end=" ")

        for (max_keys, delimiter), (pages, reads) in results[1].items():
            where = f"max_keys={max_keys} delimiter={delimiter!r}"
            self.assertEqual(pages, model(max_keys, delimiter), where)
            # One partition read per page: the prefix lies in one partition.
            self.assertEqual(reads, len(pages), where)
            for count in (8, 64):
                with self.subTest(partitions=count, max_keys=max_keys, delimiter=delimiter):
                    got_pages, got_reads = results[count][(max_keys, delimiter)]
                    self.assertEqual(got_pages, pages, f"{count} partitions, {where}")
                    self.assertEqual(got_reads, reads, f"{count} partitions, {where}: "
                                     f"{got_reads} partition reads against {reads} at one")

        # The counter counts what a fan-out costs: the whole bucket (every
        # partition holds objects) reads each of its 64 partitions.
        before = c.metric()
        every = [name for page in walk(s3, BUCKET, 1000, None, prefix="") for name, _ in page]
        self.assertEqual(every, sorted(list_keys() + filler_keys(), key=str.encode))
        self.assertGreaterEqual(c.metric() - before, 64)


if __name__ == "__main__":
    unittest.main(verbosity=2)
