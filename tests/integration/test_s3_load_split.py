#!/usr/bin/env python3
"""Load splits of the `_s3` table (docs/partition-splits.md, "Splits by load"
and "`_s3`").

Goal: with a small autoadmin split_load and split_after_s,
  1. boto3 GETs and PUTs concentrated on one key range of one bucket split
     the bucket's `_s3` partition between two objects (the child starts at
     `B K` for an object key K of the range), and every acknowledged object
     reads back with its last acknowledged body, in a listing too;
  2. GETs of one hot object cause no split: the refusal (`_s3`,
     one_hot_key) is shown by `tessera autoadmin status` and the bucket
     stays on one partition.
One cluster (3 nodes, one per AZ, 1 autoadmin). Timing is printed.
"""

import random
import re
import sys
import threading
import time
import unittest

import s3_harness as h

CLUSTER = None
SPLIT_LOAD = 20
SPLIT_AFTER_S = 3
KEYS = 100
WORKERS = 4


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-loadsplit", nodes_per_az=1, autoadmins=1,
                          autoadmin_settings=f"split_load: {SPLIT_LOAD} split_after_s: {SPLIT_AFTER_S} "
                                             "poll_interval_ms: 300 lease_ms: 2000 dead_after_ms: 30000")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def key_of(i):
    return f"r/k{i:03d}"


class Load(threading.Thread):
    """GETs any key of `keys` and PUTs its own share (keys i with i %
    WORKERS == n, so no two threads race on one key) until stopped; keeps
    each key's last acknowledged body."""

    def __init__(self, s3, bucket, keys, n, puts=True):
        super().__init__(daemon=True)
        self.s3, self.bucket, self.keys, self.n, self.puts = s3, bucket, keys, n, puts
        self.acked, self.count, self.errors = {}, 0, 0
        self.stop = threading.Event()
        self.rng = random.Random(n)

    def run(self):
        while not self.stop.is_set():
            key = self.rng.choice(self.keys)
            try:
                own = self.puts and self.keys.index(key) % WORKERS == self.n
                if own and self.rng.random() < 0.5:
                    body = f"{key}@{self.n}.{self.count}".encode()
                    self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
                    self.acked[key] = body
                else:
                    self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            except Exception:  # noqa: BLE001 (counted; the read-back decides)
                self.errors += 1
            self.count += 1


def run_loads(loads, until):
    for l in loads:
        l.start()
    try:
        return until()
    finally:
        for l in loads:
            l.stop.set()
        for l in loads:
            l.join(30)


class S3LoadSplitTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER

    def client(self):
        return self.c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)

    def bucket_prefix(self, bucket):
        found = h.wait_until(lambda: re.search(rf"^{re.escape(bucket)} id=(\d+) ",
                                               self.c.cli("s3", "buckets").stdout, re.M), 10, 0.5)
        self.assertIsNotNone(found)
        return int(found.group(1)).to_bytes(8, "big")

    def bucket_partitions(self, prefix):
        end = (int.from_bytes(prefix, "big") + 1).to_bytes(8, "big")
        parts = [p for p in self.c.partitions()
                 if p["table"] == "_s3" and p["start"] < end and (not p["end"] or p["end"] > prefix)]
        return sorted(parts, key=lambda p: p["start"])

    def test_1_load_on_a_key_range_splits_between_objects(self):
        s3 = self.client()
        s3.create_bucket(Bucket="ranged")
        prefix = self.bucket_prefix("ranged")
        keys = [key_of(i) for i in range(KEYS)]
        acked = {}
        for k in keys:
            s3.put_object(Bucket="ranged", Key=k, Body=k.encode())
            acked[k] = k.encode()
        loads = [Load(self.client(), "ranged", keys, n) for n in range(WORKERS)]
        started = time.monotonic()

        def until_split():
            h.wait_until(lambda: len(self.bucket_partitions(prefix)) >= 2, 50, 0.5)
            return self.bucket_partitions(prefix)

        parts = run_loads(loads, until_split)
        took = time.monotonic() - started
        requests = sum(l.count for l in loads)
        print(f"_s3 load split after {took:.1f} s, {requests} requests "
              f"({sum(l.errors for l in loads)} failed)", file=sys.stderr)
        status = self.c.cli("autoadmin", "status", check=False).stdout
        self.assertGreaterEqual(len(parts), 2, status)
        self.assertIn("load ", status)
        # Every split point inside the bucket is an object's prefix `B K`.
        for p in parts[1:]:
            if p["start"][:8] != prefix:
                continue
            self.assertIn(p["start"][8:].decode(), keys, parts)
        for l in loads:
            acked.update(l.acked)
        for k, body in acked.items():
            self.assertEqual(s3.get_object(Bucket="ranged", Key=k)["Body"].read(), body, k)
        listed = [o["Key"] for o in s3.list_objects_v2(Bucket="ranged", MaxKeys=1000).get("Contents", [])]
        self.assertEqual(listed, keys)

    def test_2_one_hot_object_is_refused(self):
        s3 = self.client()
        s3.create_bucket(Bucket="hotone")
        prefix = self.bucket_prefix("hotone")
        s3.put_object(Bucket="hotone", Key="hot", Body=b"h")
        before = self.bucket_partitions(prefix)
        loads = [Load(self.client(), "hotone", ["hot"], n, puts=False) for n in range(WORKERS)]

        def refused():
            def seen():
                s = self.c.cli("autoadmin", "status", check=False).stdout
                return s if re.search(r"\(_s3\): .*one_hot_key", s) else None
            status = h.wait_until(seen, 45, 0.5)
            if status:
                time.sleep(SPLIT_AFTER_S + 1)  # longer than split_after: still no split
            return status or self.c.cli("autoadmin", "status", check=False).stdout

        status = run_loads(loads, refused)
        self.assertRegex(status, r"\(_s3\): .*one_hot_key")
        self.assertEqual(len(self.bucket_partitions(prefix)), len(before), status)
        self.assertEqual(s3.get_object(Bucket="hotone", Key="hot")["Body"].read(), b"h")


if __name__ == "__main__":
    unittest.main(verbosity=2)
