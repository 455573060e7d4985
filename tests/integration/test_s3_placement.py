#!/usr/bin/env python3
"""Bucket placement by keys per partition (docs/formats/meta-keys.md, rules 8
and 17; docs/autoadmin.md, "Bucket placement weights").

Goal: a partition holding many objects receives (almost) no new buckets
while the other partitions share them: with one bucket in each of the 8
`_s3` partitions (explicit ids, so bucket counts alone would place new
buckets uniformly), 300 objects put into one of them, and the autoadmin
publishing the leaders' key estimates every 500 ms, 40 buckets placed by
meta put at most 1 in the full partition (bucket counts alone: 5 expected,
at most 1 with probability 3 %) and the rest over the others.

One cluster (3 nodes, one per AZ, 1 autoadmin). Counts are printed.
"""

import concurrent.futures
import re
import sys
import unittest

import s3_harness as h

CLUSTER = None
OBJECTS = 300
NEW_BUCKETS = 40


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-placement", nodes_per_az=1, autoadmins=1,
                          autoadmin_settings="placement_interval_ms: 500 poll_interval_ms: 300 "
                                             "lease_ms: 2000 dead_after_ms: 30000")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def first_id(start_key):
    """The first bucket id a partition starting at start_key holds wholly."""
    return max(1, int.from_bytes(start_key[:8].ljust(8, b"\0"), "big"))


class S3PlacementTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER
        self.s3 = self.c.boto3_client(retries=8)

    def s3_partitions(self):
        parts = [p for p in self.c.partitions() if p["table"] == "_s3"]
        return sorted(parts, key=lambda p: p["start"])

    def group_of(self, parts, bucket_id):
        key = bucket_id.to_bytes(8, "big")
        for p in parts:
            if p["start"] <= key and (not p["end"] or key < p["end"]):
                return p["group"]
        raise AssertionError(f"bucket id {bucket_id} in no partition")

    def published_keys(self):
        status = self.c.cli("autoadmin", "status", check=False).stdout
        m = re.search(r"placement weights published: .*, (\d+) _s3 partitions, (\d+) keys", status)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)

    def test_full_partition_receives_no_new_buckets(self):
        parts = self.s3_partitions()
        self.assertEqual(len(parts), 8, parts)
        for i, p in enumerate(parts):
            self.c.cli("s3", "bucket", "create", f"seed-{i}", "--owner", "admin", "--id",
                       str(first_id(p["start"])))
        full = parts[3]["group"]
        body = b"x" * 200

        def put(i):
            self.s3.put_object(Bucket="seed-3", Key=f"obj/{i:05d}", Body=body)

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(put, range(OBJECTS)))
        # The leaders' estimates, published by the autoadmin, include them.
        published = h.wait_until(lambda: self.published_keys()[1] >= OBJECTS, 30, 0.5)
        self.assertTrue(published, self.c.cli("autoadmin", "status", check=False).stdout)
        self.assertEqual(self.published_keys()[0], 8)

        for i in range(NEW_BUCKETS):
            self.s3.create_bucket(Bucket=f"new-{i:02d}")
        listing = self.c.cli("s3", "buckets").stdout
        counts = {p["group"]: 0 for p in parts}
        for m in re.finditer(r"^new-\d\d id=(\d+) ", listing, re.M):
            counts[self.group_of(parts, int(m.group(1)))] += 1
        print(f"new buckets per _s3 group (full: {full}): {counts}", file=sys.stderr)
        self.assertEqual(sum(counts.values()), NEW_BUCKETS, listing)
        self.assertLessEqual(counts[full], 1, counts)
        others = [n for g, n in counts.items() if g != full]
        self.assertGreater(sum(others) / len(others), counts[full] + 3, counts)
        # Every object of the full partition still reads back.
        listed = self.s3.list_objects_v2(Bucket="seed-3", MaxKeys=1000).get("Contents", [])
        self.assertEqual(len(listed), OBJECTS)


if __name__ == "__main__":
    unittest.main(verbosity=2)
