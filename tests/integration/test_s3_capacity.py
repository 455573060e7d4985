#!/usr/bin/env python3
"""S3 bucket capacities charged through global admission control.

Goal: prove on real processes (3 storage nodes in 3 AZs, 3 meta replicas,
2 routers, 1 GAC instance) that `tessera s3 bucket set-capacity` holds a
bucket's capacity over both routers together (docs/admission.md, "S3
buckets"):
  1. bad input (negative, zero or absurd units, --on-demand with --rcu, an
     unknown bucket, not the owner) exits non-zero with a message and
     changes nothing;
  2. a bucket at N WCU: the PUTs admitted over both routers sum to within
     10% of N per second whatever the split of clients (each empty PUT
     costs one write unit); a bucket without a capacity is not throttled;
  3. refused requests reach boto3 (retries off) as 503 SlowDown with
     Retry-After;
  4. a set-capacity change reaches the routers' shares within two GAC
     intervals (one meta poll, one report);
  5. an on-demand bucket's peak survives a restart of its GAC instance
     (the routers report the peak of their last grant);
  6. a listing is charged one read unit per started 4 KiB of keys listed;
  7. a 60-key DeleteObjects is charged 60 write units, a version listing
     by its keys, an abort of 5 parts 6 write units (what serving learns
     is charged afterwards);
  8. with a capacity on the `_s3` table, the storage nodes charge S3 reads
     (s3.get, s3.list) to its partitions like KV reads, and refuse them
     beyond it: SlowDown to the client.
Admitted counts decide, not latencies.

Standard library + boto3; free loopback ports, a fresh temp dir, the
cluster brought down at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import collections
import os
import re
import threading
import time
import unittest
import urllib.request

import s3_harness as h
from free_ports import free_ports
from kv_harness import series_sum

BUCKET, FREE, ON_DEMAND = "capped", "uncapped", "elastic"
ON_DEMAND_INITIAL_WCU = 20
WCU = 40
INTERVAL_MS = 500
CLUSTER = None


class CapacityCluster(h.S3Cluster):
    """3 nodes (one per AZ), 3 meta replicas, 2 routers, 1 GAC instance."""

    def _write_layout(self):
        ports = iter(free_ports(3 * 2 + 3 * 2 + 2 * 4 + 2))
        lines = ['name: "s3-capacity"', 'azs: ["az1", "az2", "az3"]']
        self.node_http_ports = []
        for az in h.AZS:
            peer, http = next(ports), next(ports)
            self.node_http_ports.append(http)
            lines.append(f'nodes {{ name: "{az}-n1" az: "{az}" host: "127.0.0.1" '
                         f"peer_port: {peer} http_port: {http} }}")
        for az in h.AZS:
            lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                         f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        self.s3_ports, self.http_ports = [], []
        for i, az in enumerate(("az1", "az2")):
            kv, http, s3, s3_tls = (next(ports) for _ in range(4))
            self.s3_ports.append(s3)
            self.http_ports.append(http)
            lines.append(f'routers {{ name: "router-{i + 1}" az: "{az}" host: "127.0.0.1" '
                         f"kv_port: {kv} http_port: {http} s3_port: {s3} s3_tls_port: {s3_tls} }}")
        self.s3_port, self.router_http_port = self.s3_ports[0], self.http_ports[0]
        self.s3_tls_port = 0
        gac_peer, self.gac_http_port = next(ports), next(ports)
        lines.append(f'gac {{ name: "gac-az1" az: "az1" host: "127.0.0.1" '
                     f"peer_port: {gac_peer} http_port: {self.gac_http_port} }}")
        lines.append(f"gac_settings {{ interval_ms: {INTERVAL_MS} "
                     f"on_demand_initial_wcu: {ON_DEMAND_INITIAL_WCU} }}")
        with open(self.layout, "w") as f:
            f.write("\n".join(lines) + "\n")

    def client(self, router, retries=0):
        import boto3
        from botocore.config import Config
        cfg = Config(region_name=h.REGION, signature_version="s3v4", s3={"addressing_style": "path"},
                     retries={"total_max_attempts": retries + 1, "mode": "standard"},
                     connect_timeout=10, read_timeout=30)
        session = boto3.session.Session(aws_access_key_id=self.access_key,
                                        aws_secret_access_key=self.secret_key, region_name=h.REGION)
        return session.client("s3", endpoint_url=f"http://127.0.0.1:{self.s3_ports[router]}",
                              config=cfg)

    def router_metric(self, router, name, **labels):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_ports[router]}/metrics",
                                    timeout=10) as r:
            return series_sum(r.read().decode(), name, labels)

    def node_metric(self, name, **labels):
        """`name` summed over the storage nodes (each charges what it leads)."""
        total = 0.0
        for port in self.node_http_ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                total += series_sum(r.read().decode(), name, labels)
        return total

    def gac_reports(self):
        """Reports the GAC instance answered since it started (0: down)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.gac_http_port}/metrics",
                                        timeout=5) as r:
                return series_sum(r.read().decode(), "tessera_gac_reports_total", {})
        except OSError:
            return 0

    def granted_sum(self, bucket=BUCKET):
        return sum(self.router_metric(r, "tessera_gac_router_granted_units_per_s",
                                      table="s3:" + bucket, kind="write") for r in (0, 1))


class Load:
    """Threads putting empty objects to `bucket` through the routers as fast
    as answered; records (time, router, ok)."""

    def __init__(self, bucket, per_router_threads):
        self.bucket, self.events, self.lock = bucket, [], threading.Lock()
        self.stop_flag = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(r, t), daemon=True)
                        for r, n in enumerate(per_router_threads) for t in range(n)]

    def start(self):
        for th in self.threads:
            th.start()
        return self

    def stop(self):
        self.stop_flag.set()
        for th in self.threads:
            th.join(30)

    def run(self, router, thread):
        from botocore.exceptions import ClientError
        s3 = CLUSTER.client(router)
        i = 0
        while not self.stop_flag.is_set():
            i += 1
            try:
                s3.put_object(Bucket=self.bucket, Key=f"k-{router}-{thread}-{i}", Body=b"")
                ok = True
            except ClientError as e:
                ok = False
                if e.response["Error"]["Code"] != "SlowDown":
                    raise
            with self.lock:
                self.events.append((time.monotonic(), router, ok))

    def count(self, t_from, t_to, ok=True, router=None):
        with self.lock:
            return sum(1 for t, r, o in self.events
                       if t_from <= t < t_to and o == ok and (router is None or r == router))


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = CapacityCluster("s3-capacity")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    s3 = CLUSTER.client(0, retries=3)
    for bucket in (BUCKET, FREE, ON_DEMAND):
        s3.create_bucket(Bucket=bucket)


def set_capacity(*args, check=True):
    return CLUSTER.cli("s3", "bucket", "set-capacity", *args, check=check)


def bucket_line(bucket):
    out = CLUSTER.cli("s3", "buckets").stdout
    m = re.search(rf"^{bucket} .*$", out, re.M)
    return m.group(0) if m else out


class S3CapacityTest(unittest.TestCase):
    def test_1_bad_input_changes_nothing(self):
        cases = [
            (["--rcu=-5", "--wcu", "10"], 2, "--rcu"),
            (["--rcu", "0", "--wcu", "10"], 2, "--rcu"),
            (["--rcu", "10", "--wcu", "99999999999"], 2, "--wcu"),
            (["--on-demand", "--rcu", "10"], 2, "--on-demand"),
            (["--rcu", "10"], 2, "both"),
            ([], 2, "needs"),
        ]
        for args, rc, needle in cases:
            p = set_capacity(BUCKET, *args, check=False)
            self.assertEqual(p.returncode, rc, (args, p.stderr))
            self.assertIn(needle, p.stderr, args)
        p = set_capacity("no-such-bucket", "--rcu", "10", "--wcu", "10", check=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("does not exist", p.stderr)
        p = set_capacity(BUCKET, "--rcu", "10", "--wcu", "10", "--owner", "mallory", check=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("owned by another user", p.stderr)
        self.assertIn("capacity=unset", bucket_line(BUCKET))

    def test_2_capacity_holds_over_both_routers(self):
        out = set_capacity(BUCKET, "--rcu", "1000", "--wcu", str(WCU)).stdout
        self.assertIn(f"capacity=provisioned rcu=1000 wcu={WCU}", out)
        for split in ((3, 1), (2, 2)):
            load = Load(BUCKET, split).start()
            time.sleep(2)  # shares follow the demand
            t0 = time.monotonic()
            time.sleep(4)
            t1 = time.monotonic()
            load.stop()
            rate = load.count(t0, t1) / (t1 - t0)
            per = [load.count(t0, t1, router=r) / (t1 - t0) for r in (0, 1)]
            refused = load.count(t0, t1, ok=False)
            print(f"split {split}: {rate:.1f} PUTs/s admitted (router-1 {per[0]:.1f}, router-2 "
                  f"{per[1]:.1f}), {refused} SlowDown; capacity {WCU} WCU", flush=True)
            self.assertGreater(refused, 0, "the load must exceed the capacity")
            self.assertLessEqual(abs(rate - WCU), 0.1 * WCU, split)
        throttled = sum(CLUSTER.router_metric(r, "tessera_gac_router_throttled_total",
                                              table="s3:" + BUCKET) for r in (0, 1))
        self.assertGreater(throttled, 0)
        # A bucket without a capacity keeps today's behaviour: not charged.
        free = Load(FREE, (2, 2)).start()
        time.sleep(2)
        free.stop()
        self.assertEqual(free.count(0, time.monotonic() + 1, ok=False), 0)
        self.assertGreater(free.count(0, time.monotonic() + 1), 0)

    def test_3_slowdown_with_retry_after(self):
        from botocore.exceptions import ClientError
        set_capacity(BUCKET, "--rcu", "1000", "--wcu", str(WCU))
        s3 = CLUSTER.client(0, retries=0)
        seen = None
        deadline = time.monotonic() + 20
        i = 0
        while seen is None and time.monotonic() < deadline:
            i += 1
            try:
                s3.put_object(Bucket=BUCKET, Key=f"burst-{i}", Body=b"")
            except ClientError as e:
                seen = e.response
        self.assertIsNotNone(seen, "no request was refused")
        self.assertEqual(seen["Error"]["Code"], "SlowDown")
        self.assertEqual(seen["ResponseMetadata"]["HTTPStatusCode"], 503)
        self.assertEqual(seen["ResponseMetadata"]["HTTPHeaders"].get("retry-after"), "1")

    def test_4_change_takes_effect_within_two_intervals(self):
        set_capacity(BUCKET, "--rcu", "1000", "--wcu", str(WCU))
        self.assertTrue(h.wait_until(lambda: abs(CLUSTER.granted_sum() - WCU) < 1, 10))
        t0 = time.monotonic()
        out = set_capacity(BUCKET, "--wcu", str(3 * WCU)).stdout  # --rcu kept
        self.assertIn(f"rcu=1000 wcu={3 * WCU}", out)
        ok = h.wait_until(lambda: abs(CLUSTER.granted_sum() - 3 * WCU) < 1, 10, 0.05)
        took = time.monotonic() - t0
        print(f"capacity change seen by the routers' shares after {took:.2f} s "
              f"(interval {INTERVAL_MS} ms)", flush=True)
        self.assertTrue(ok, CLUSTER.granted_sum())
        # A meta poll and a report, plus the CLI's own return and scrape time.
        self.assertLessEqual(took, 2 * INTERVAL_MS / 1000 + 1.0)
        out = set_capacity(BUCKET, "--on-demand").stdout
        self.assertIn("capacity=on-demand", out)

    def test_5_on_demand_peak_survives_a_gac_restart(self):
        set_capacity(ON_DEMAND, "--on-demand")
        time.sleep(2 * INTERVAL_MS / 1000)  # GAC reads it
        load = Load(ON_DEMAND, (2, 2)).start()
        time.sleep(5)  # the peak follows the admitted rate, capacity 2x it
        load.stop()
        before = CLUSTER.granted_sum(ON_DEMAND)
        print(f"on-demand capacity before the restart: {before:.0f} WCU "
              f"(initial {2 * ON_DEMAND_INITIAL_WCU})", flush=True)
        self.assertGreater(before, 2 * 2 * ON_DEMAND_INITIAL_WCU, "the load did not raise the peak")
        CLUSTER.cli("cluster", "kill", "gac-az1")
        CLUSTER.cli("cluster", "restart", "gac-az1")
        # The new instance has answered both routers twice (a report each to
        # learn the peak, the next grant carries it); then one more interval.
        self.assertTrue(h.wait_until(lambda: CLUSTER.gac_reports() >= 4, 20), "GAC did not return")
        time.sleep(2 * INTERVAL_MS / 1000)
        after = CLUSTER.granted_sum(ON_DEMAND)
        print(f"on-demand capacity after the restart: {after:.0f} WCU", flush=True)
        self.assertGreaterEqual(after, 0.9 * before)

    def test_6_listing_charged_by_keys_listed(self):
        set_capacity(BUCKET, "--rcu", "1000", "--wcu", str(WCU))
        s3 = CLUSTER.client(0, retries=3)
        s3.list_objects_v2(Bucket=BUCKET, MaxKeys=1)  # the share is granted
        time.sleep(3 * INTERVAL_MS / 1000)
        page = s3.list_objects_v2(Bucket=BUCKET, MaxKeys=1000)
        key_bytes = sum(len(o["Key"]) for o in page.get("Contents", []))
        self.assertGreater(key_bytes, 4096, "test_2 wrote the keys")
        def units():
            return CLUSTER.router_metric(0, "tessera_gac_router_admitted_units_total",
                                         table="s3:" + BUCKET, kind="read")
        before = units()
        s3.list_objects_v2(Bucket=BUCKET, MaxKeys=1000)
        charged = units() - before
        expected = -(-key_bytes // 4096)
        print(f"listing of {key_bytes} key bytes charged {charged:.0f} read units", flush=True)
        self.assertGreaterEqual(charged, expected)  # 1 up front alone would fail
        self.assertLessEqual(charged, expected + 1)

    def test_7_batch_delete_version_listing_and_abort_charged_by_what_they_touch(self):
        set_capacity(BUCKET, "--rcu", "1000", "--wcu", "1000")
        s3 = CLUSTER.client(0, retries=3)
        s3.list_object_versions(Bucket=BUCKET, MaxKeys=1)  # the share is granted
        time.sleep(3 * INTERVAL_MS / 1000)
        def units(kind):
            return CLUSTER.router_metric(0, "tessera_gac_router_admitted_units_total",
                                         table="s3:" + BUCKET, kind=kind)
        before = units("write")
        keys = [{"Key": f"absent-{i}"} for i in range(60)]
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})
        charged = units("write") - before
        print(f"a delete of 60 keys charged {charged:.0f} write units", flush=True)
        self.assertEqual(charged, 60)  # one up front alone would fail

        page = s3.list_object_versions(Bucket=BUCKET, MaxKeys=1000)
        key_bytes = sum(len(v["Key"]) for v in page.get("Versions", []))
        self.assertGreater(key_bytes, 4096, "test_2 wrote the keys")
        before = units("read")
        s3.list_object_versions(Bucket=BUCKET, MaxKeys=1000)
        charged = units("read") - before
        expected = -(-key_bytes // 4096)
        print(f"a version listing of {key_bytes} key bytes charged {charged:.0f} read units",
              flush=True)
        self.assertGreaterEqual(charged, expected)
        self.assertLessEqual(charged, expected + 1)

        upload = s3.create_multipart_upload(Bucket=BUCKET, Key="aborted")["UploadId"]
        for n in range(1, 6):
            s3.upload_part(Bucket=BUCKET, Key="aborted", UploadId=upload, PartNumber=n, Body=b"p")
        before = units("write")
        s3.abort_multipart_upload(Bucket=BUCKET, Key="aborted", UploadId=upload)
        charged = units("write") - before
        print(f"an abort of 5 parts charged {charged:.0f} write units", flush=True)
        self.assertEqual(charged, 6)  # the upload's record and each part's; 1 alone would fail

    def test_8_s3_reads_charged_on_the_nodes(self):
        s3 = CLUSTER.client(0, retries=0)
        s3.put_object(Bucket=FREE, Key="read-me", Body=b"x")

        def read_units():
            return CLUSTER.node_metric("tessera_admission_units_total", table="_s3", kind="read")

        CLUSTER.cli("kv", "table", "update", "_s3", "--rcu", "1000000", "--wcu", "1000000")
        deadline = time.monotonic() + 15  # every node polls the capacity (1 s by default)
        while time.monotonic() < deadline:
            before = read_units()
            s3.head_object(Bucket=FREE, Key="read-me")
            if read_units() > before:
                break
            time.sleep(0.3)
        before = read_units()
        for _ in range(20):
            s3.head_object(Bucket=FREE, Key="read-me")
        charged = read_units() - before
        print(f"20 HEADs charged {charged:.0f} read units on the nodes", flush=True)
        self.assertGreaterEqual(charged, 20)  # one strong record read each
        self.assertLessEqual(charged, 40)
        before = read_units()
        s3.list_objects_v2(Bucket=FREE, MaxKeys=10)
        self.assertGreaterEqual(read_units() - before, 1)

        from botocore.exceptions import ClientError
        CLUSTER.cli("kv", "table", "update", "_s3", "--rcu", "1", "--wcu", "1000000")
        codes = collections.Counter()
        deadline = time.monotonic() + 15
        while codes["SlowDown"] + codes["503"] == 0 and time.monotonic() < deadline:
            try:
                s3.head_object(Bucket=FREE, Key="read-me")
                codes["ok"] += 1
            except ClientError as e:
                # A HEAD's error has no body: boto3 names it by its status.
                codes[e.response["Error"]["Code"]] += 1
        print(f"HEADs at 1 read unit/s on _s3: {dict(codes)}", flush=True)
        CLUSTER.cli("kv", "table", "update", "_s3", "--rcu", "1000000", "--wcu", "1000000")
        self.assertGreater(codes["SlowDown"] + codes["503"], 0, codes)


if __name__ == "__main__":
    unittest.main()
