#!/usr/bin/env python3
"""The blob GC deletes every copy, its own node's included, by itself.

Goal: on a cluster whose blob GC runs every 300 ms and whose orphan sweeper
does not run at all (`blob_sweep_interval_ms: 0`, so nothing but the GC can
remove a file), overwrite and delete objects above the inline size in one
bucket. The node that leads the bucket's `_s3` partition runs its GC and,
with 6 nodes and 3 copies per blob, holds a copy of about half the blobs.
Then, without waiting for any sweeper:
  * `tessera s3 check` passes (no pending GC record, no unreferenced blob
    file, every live blob at 3 copies);
  * every blob file the GC leader held before the overwrites, all of them
    garbage now, is gone from its disk (the test requires there were some);
  * the nodes' tessera_s3_gc_blob_copies_deleted_total equals the files
    that went (3 per garbage blob), and tessera_s3_gc_blobs_retired_total
    the garbage blobs;
  * every live object reads back byte-identical.
Timing is printed, never asserted.
"""

import hashlib
import os
import sys
import time
import unittest

import s3_harness as h

CLUSTER = None
KiB = 1 << 10
OBJECTS = 24
DELETED = 8  # of the overwritten objects, the first DELETED are then deleted
CHECK_TIMEOUT_S = 90
NODE_SETTINGS = "gc_interval_ms: 300 blob_sweep_interval_ms: 0"
BUCKET = "gc-own-copy"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-gc-own", node_settings=NODE_SETTINGS)
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def body(key, generation):
    """Above the inline size (16 KiB), below one blob (8 MiB): one blob each."""
    seed = hashlib.sha256(f"{key}/{generation}".encode()).digest()
    return (seed * ((40 * KiB + 97 * generation) // len(seed) + 1))[:40 * KiB + 97 * generation]


def blob_files(cluster, node):
    """The blob ids (file names without .blob) in `node`'s blob store."""
    root = os.path.join(cluster.dir, "data", node, "blobs")
    return {f[:-len(".blob")] for _, _, files in os.walk(root) for f in files if f.endswith(".blob")}


class OwnCopyTest(h.ClusterTestCase):
    def counter(self, name):
        return self.c.metric(name)

    def test_gc_leader_deletes_its_own_copies(self):
        started = time.monotonic()
        s3 = self.c.boto3_client(retries=4)
        s3.create_bucket(Bucket=BUCKET)
        keys = [f"k{i:02d}" for i in range(OBJECTS)]
        for key in keys:
            s3.put_object(Bucket=BUCKET, Key=key, Body=body(key, 0))
        leader = self.c.bucket_leader(self, BUCKET)
        nodes = [f"{az}-n{n}" for az in h.AZS for n in (1, 2)]
        # A put is acknowledged at two copies; the third lands just after.
        h.wait_until(lambda: sum(len(blob_files(self.c, n)) for n in nodes) == 3 * OBJECTS, 20)
        before = {node: blob_files(self.c, node) for node in nodes}
        self.assertEqual(sum(len(files) for files in before.values()), 3 * OBJECTS,
                         "three copies of one blob per object expected")
        self.assertEqual(len(set().union(*before.values())), OBJECTS)
        on_leader = before[leader]
        self.assertGreater(len(on_leader), 0, f"the GC leader {leader} holds no copy: nothing tested")
        copies_before = self.counter("tessera_s3_gc_blob_copies_deleted_total")
        retired_before = self.counter("tessera_s3_gc_blobs_retired_total")

        expected = {}
        for key in keys:
            data = body(key, 1)
            s3.put_object(Bucket=BUCKET, Key=key, Body=data)
            expected[key] = data
        for key in keys[:DELETED]:
            s3.delete_object(Bucket=BUCKET, Key=key)
            del expected[key]
        garbage_blobs = OBJECTS + DELETED
        print(f"[leader {leader} held {len(on_leader)} of {OBJECTS} first blobs; workload "
              f"{time.monotonic() - started:.1f}s]", file=sys.stderr, end=" ")

        last = [None]

        def clean():
            last[0] = self.c.cli("s3", "check", check=False, timeout=120)
            return last[0].returncode == 0
        ok = h.wait_until(clean, CHECK_TIMEOUT_S, 1)
        self.assertTrue(ok, f"`tessera s3 check` did not pass within {CHECK_TIMEOUT_S}s with the "
                            f"sweeper off:\n{last[0].stdout[-3000:]}\n{last[0].stderr[-2000:]}")
        print(f"[check passed {time.monotonic() - started:.1f}s]", file=sys.stderr, end=" ")
        self.assertIn("unreferenced blob files 0", last[0].stdout)
        self.assertIn("pending GC records 0", last[0].stdout)

        after = {node: blob_files(self.c, node) for node in nodes}
        self.assertEqual(on_leader & after[leader], set(),
                         f"first-generation blobs left on the GC leader {leader}")
        self.assertEqual(sum(len(before[n] & after[n]) for n in nodes), 0,
                         "first-generation blob files left")
        self.assertEqual(sum(len(after[n]) for n in nodes), 3 * len(expected),
                         "blob files of the live objects")
        self.assertEqual(self.counter("tessera_s3_gc_blob_copies_deleted_total") - copies_before,
                         3 * garbage_blobs)
        self.assertEqual(self.counter("tessera_s3_gc_blobs_retired_total") - retired_before,
                         garbage_blobs)

        for key, data in expected.items():
            got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
            self.assertEqual(hashlib.sha256(got).hexdigest(), hashlib.sha256(data).hexdigest(), key)
        listed = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
        self.assertEqual(listed, set(expected))


if __name__ == "__main__":
    unittest.main(verbosity=2)
