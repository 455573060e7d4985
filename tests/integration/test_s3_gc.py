#!/usr/bin/env python3
"""Nothing leaks: blob GC, orphan sweeper, repairer and `tessera s3 check`
(issue 5 "Space").

Goal: on one cluster whose blob GC and sweeper run every few hundred ms
(node_settings in the layout; orphan grace a few seconds), after
  * overwrites and deletes (unversioned bucket),
  * versioned puts, a delete marker and a version deleted by id,
  * a multipart upload aborted after two parts,
  * a PUT whose client dies mid-body (raw socket: half of a 20 MiB body,
    then closed), and one whose router is killed mid-body (orphans),
  * puts while one storage node is killed (`tessera cluster kill`), then
    the node restarted (its slots' blobs have two copies until repaired),
`tessera s3 check` passes within a bounded wait (every referenced blob has
3 copies, no unreferenced blob file, no pending GC record), the node
counters show the GC deleted blobs, the sweeper deleted the orphan and the
repairer restored copies, and every live object reads back byte-identical.
The checker also fails on a known violation (a stray blob file).
Timing is printed, never asserted.
"""

import hashlib
import json
import os
import shutil
import socket
import sys
import time
import unittest

import s3_harness as h
from test_kv_cluster import parse_status

CLUSTER = None
KiB, MiB = 1 << 10, 1 << 20
CHECK_TIMEOUT_S = 120
NODE_SETTINGS = ("gc_interval_ms: 300 blob_sweep_interval_ms: 500 blob_min_age_s: 1 "
                 "orphan_grace_s: 4")


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-gc", node_settings=NODE_SETTINGS)
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def body(seed, size):
    out = bytearray()
    block = hashlib.sha256(str(seed).encode()).digest()
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block * 64
    return bytes(out[:size])


class GcTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER
        self.s3 = self.c.boto3_client(retries=8, read_timeout=20, connect_timeout=5)
        self.expected = {}  # (bucket, key) -> bytes of the live latest version

    def counter(self, name):
        return self.c.metric(name)

    def check(self):
        return self.c.cli("s3", "check", check=False, timeout=120)

    def wait_converged(self, timeout_s=90):
        def converged():
            parts = parse_status(self.c.cli("cluster", "status", "--json", check=False).stdout)
            return parts and all(
                any(r["leader"] for r in p["replicas"]) and
                all(r["reachable"] and r["lag"] == 0 for r in p["replicas"]) for p in parts)
        self.assertTrue(h.wait_until(converged, timeout_s, 0.5), "cluster did not converge")

    def put(self, bucket, key, data):
        r = self.s3.put_object(Bucket=bucket, Key=key, Body=data)
        self.expected[(bucket, key)] = data
        return r

    # --- workloads ---------------------------------------------------------
    def overwrites_and_deletes(self):
        self.s3.create_bucket(Bucket="gc-plain")
        for i in range(3):
            self.put("gc-plain", "over", body(f"over{i}", 300 * KiB + i))
        self.put("gc-plain", "gone", body("gone", 200 * KiB))
        self.s3.delete_object(Bucket="gc-plain", Key="gone")
        del self.expected[("gc-plain", "gone")]
        self.put("gc-plain", "small", b"inline bytes")

    def versions(self):
        self.s3.create_bucket(Bucket="gc-versions")
        self.s3.put_bucket_versioning(Bucket="gc-versions",
                                      VersioningConfiguration={"Status": "Enabled"})
        first = self.s3.put_object(Bucket="gc-versions", Key="v", Body=body("v0", 100 * KiB))
        self.put("gc-versions", "v", body("v1", 120 * KiB))
        self.s3.delete_object(Bucket="gc-versions", Key="v", VersionId=first["VersionId"])
        self.put("gc-versions", "m", body("m0", 90 * KiB))
        self.s3.delete_object(Bucket="gc-versions", Key="m")  # a delete marker
        del self.expected[("gc-versions", "m")]

    def aborted_upload(self):
        up = self.s3.create_multipart_upload(Bucket="gc-plain", Key="mp")
        for n in (1, 2):
            self.s3.upload_part(Bucket="gc-plain", Key="mp", UploadId=up["UploadId"],
                                PartNumber=n, Body=body(f"part{n}", 600 * KiB))
        self.s3.abort_multipart_upload(Bucket="gc-plain", Key="mp", UploadId=up["UploadId"])
        # One upload stays in progress: usage counts it and its part bytes.
        pending = self.s3.create_multipart_upload(Bucket="gc-plain", Key="pending")
        self.s3.upload_part(Bucket="gc-plain", Key="pending", UploadId=pending["UploadId"],
                            PartNumber=1, Body=body("pending", 300 * KiB))

    def half_put(self, key, then):
        """Sends half of a 20 MiB PUT body on a raw socket (the router writes
        the first 8 MiB as a blob), then calls then() and closes."""
        raw = h.S3Raw(self.c)
        path = h.key_path("gc-plain", key)
        total = 20 * MiB
        signed = raw.sign("PUT", path, headers={"content-length": str(total)},
                          payload_hash="UNSIGNED-PAYLOAD")
        sock = socket.create_connection(("127.0.0.1", self.c.s3_port), timeout=30)
        try:
            sock.sendall(h.raw_head("PUT", path, raw.host, signed.headers))
            data = body(key, total // 2)
            for i in range(0, len(data), MiB):
                sock.sendall(data[i:i + MiB])
            time.sleep(1.0)
            then()
        finally:
            sock.close()

    def killed_client(self):
        # The router abandons (deletes) the blobs of a body that broke off.
        self.half_put("half", lambda: None)

    def killed_router(self):
        # A router killed mid-body cannot: its blobs are orphans no record
        # names, for the sweeper.
        self.half_put("router-died", lambda: self.c.cli("cluster", "kill", "router-1"))
        self.c.cli("cluster", "restart", "router-1")
        self.assertTrue(h.wait_until(self.c._router_answers, 30, 0.3), "router did not come back")

    def writes_with_a_node_down(self):
        victim = "az2-n1"
        self.c.cli("cluster", "kill", victim)
        try:
            self.s3.create_bucket(Bucket="gc-down")
            for i in range(12):
                self.put("gc-down", f"k{i}", body(f"down{i}", 64 * KiB + 1000 * i))
        finally:
            self.c.cli("cluster", "restart", victim)
        self.wait_converged()

    # --- the test ----------------------------------------------------------
    def test_blobs_on_disk_match_references(self):
        started = time.monotonic()
        self.overwrites_and_deletes()
        self.versions()
        self.aborted_upload()
        self.killed_client()
        self.killed_router()
        self.writes_with_a_node_down()
        print(f"[workload {time.monotonic() - started:.1f}s]", file=sys.stderr, end=" ")

        last = [None]

        def passes():
            last[0] = self.check()
            return last[0].returncode == 0
        ok = h.wait_until(passes, CHECK_TIMEOUT_S, 2)
        self.assertTrue(ok, f"`tessera s3 check` did not pass within {CHECK_TIMEOUT_S}s: rc "
                            f"{last[0].returncode}\n{last[0].stdout[-3000:]}\n{last[0].stderr[-2000:]}")
        print(f"[check passed {time.monotonic() - started:.1f}s]", file=sys.stderr, end=" ")
        self.assertIn("pending GC records 0", last[0].stdout)
        self.assertIn("unreferenced blob files 0", last[0].stdout)

        self.assertGreater(self.counter("tessera_s3_gc_blob_copies_deleted_total"), 0)
        self.assertGreater(self.counter("tessera_s3_gc_records_total"), 0)
        self.assertGreater(self.counter("tessera_blob_orphans_deleted_total"), 0)
        self.assertGreater(self.counter("tessera_blob_repaired_total"), 0)
        self.assertEqual(self.counter("tessera_s3_gc_referenced_skipped_total"), 0)
        # Converged: further sweeper rounds find nothing to repair or delete.
        before = [self.counter(n) for n in ("tessera_blob_repaired_total",
                                            "tessera_blob_orphans_deleted_total")]
        scanned = self.counter("tessera_blob_scanned_total")
        h.wait_until(lambda: self.counter("tessera_blob_scanned_total") > scanned + 200, 20, 0.5)
        after = [self.counter(n) for n in ("tessera_blob_repaired_total",
                                           "tessera_blob_orphans_deleted_total")]
        self.assertEqual(before, after, "repairs or orphan deletes after convergence")

        for (bucket, key), data in self.expected.items():
            got = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            self.assertEqual(hashlib.sha256(got).hexdigest(), hashlib.sha256(data).hexdigest(),
                             f"{bucket}/{key}")
        listed = {o["Key"] for o in self.s3.list_objects_v2(Bucket="gc-plain").get("Contents", [])}
        self.assertEqual(listed, {"over", "small"})
        self.usage_is_exact()
        self.checker_catches_a_stray_file()

    def usage(self, bucket):
        return json.loads(self.c.cli("s3", "usage", bucket, "--json").stdout)

    def usage_is_exact(self):
        """`tessera s3 usage` after overwrites, deletes, versions, an aborted
        and a pending upload, broken bodies and a node outage."""
        plain = self.usage("gc-plain")
        self.assertEqual((plain["objects"], plain["bytes"], plain["versions"]),
                         (2, len(self.expected[("gc-plain", "over")]) +
                          len(self.expected[("gc-plain", "small")]), 0), plain)
        self.assertEqual((plain["uploads"], plain["part_bytes"]), (1, 300 * KiB), plain)
        versions = self.usage("gc-versions")
        # Stored: v's second version (120 KiB), m's version (90 KiB) and its
        # delete marker; live: v only.
        self.assertEqual((versions["objects"], versions["bytes"], versions["versions"],
                          versions["uploads"]), (1, 120 * KiB + 90 * KiB, 3, 0), versions)
        down = self.usage("gc-down")
        self.assertEqual((down["objects"], down["bytes"]),
                         (12, sum(64 * KiB + 1000 * i for i in range(12))), down)

    def checker_catches_a_stray_file(self):
        """A known violation: a blob file nothing references."""
        blobs = os.path.join(self.c.dir, "data", "az1-n1", "blobs")
        source = next(os.path.join(d, f) for d, _, files in os.walk(blobs) for f in files
                      if f.endswith(".blob"))
        # Slot 0x0fff lives in directory ff (slot mod 256); its header names
        # another id, so the sweeper leaves it alone (a damaged file).
        os.makedirs(os.path.join(blobs, "ff"), exist_ok=True)
        stray = os.path.join(blobs, "ff", "0fff-" + "ab" * 16 + ".blob")
        shutil.copyfile(source, stray)
        try:
            p = self.check()
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("unreferenced blob files 1", p.stdout)
        finally:
            os.remove(stray)
        self.assertEqual(self.check().returncode, 0)
        j = self.c.cli("s3", "check", "--json").stdout
        self.assertIn('"ok":true', j)


if __name__ == "__main__":
    unittest.main(verbosity=2)
