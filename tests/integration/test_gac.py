#!/usr/bin/env python3
"""Integration test of global admission control (docs/admission.md).

Goal: prove, on real processes (3 metadata replicas, 3 storage nodes in 3
AZs, 2 routers, 2 GAC instances), that a table's capacity holds over all
routers together:
  1. two routers, one table at 1,000 WCU: the sum admitted over both stays
     within 10% of 1,000 units/s whatever the split of clients between them
     (without GAC each router would admit the table's rate on its own);
  2. a paced load at 90% of capacity over both routers is not throttled
     (the throttled share is printed);
  3. a GAC instance killed and restarted under load: no admitted-rate dip
     longer than one interval;
  4. every GAC down: a router keeps its last share for hold_ms, then falls
     back to capacity / routers;
  5. an on-demand table admits a step to twice its previous peak at once;
  6. bad GAC settings and names are refused with a clear message;
  7. skew: 80% of a load at 90% of a two-partition table's capacity on one
     partition is admitted with adaptive capacity and GAC, and throttled by
     the static split with both off (knobs; the nodes and routers are
     restarted with them); both figures are printed.
Admitted units decide (each put costs 10 write units), not latencies.

Python 3 standard library only; free loopback ports, a fresh temp dir,
`tessera cluster down` at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import http.client
import os
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

from free_ports import free_ports
from kv_harness import TESSERA_BIN, KvCluster, series_sum

AZS = ("az1", "az2", "az3")
TABLE = "gt"
WCU = 1000
VALUE = b"v" * (10 * 1024 - 64)  # key + value within 10 KiB: 10 write units
UNITS_PER_PUT = 10
INTERVAL_MS = 500
HOLD_MS = 3000
ON_DEMAND_INITIAL_WCU = 150
GACS = ("gac-az1", "gac-az2")


def write_layout(path, extra=""):
    """3 AZs x 1 storage node, one meta replica per AZ, two routers, two
    GAC instances. Returns (router HTTP ports, router names)."""
    ports = iter(free_ports(3 * 2 + 3 * 2 + 2 * 4 + 2 * 2))
    lines = ['name: "gac"', 'azs: ["az1", "az2", "az3"]']
    for az in AZS:
        lines.append(f'nodes {{ name: "{az}-n1" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    for az in AZS:
        lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    http_ports = []
    for i, az in enumerate(("az1", "az2")):
        kv, http, s3, s3_tls = next(ports), next(ports), next(ports), next(ports)
        http_ports.append(http)
        lines.append(f'routers {{ name: "router-{i + 1}" az: "{az}" host: "127.0.0.1" kv_port: {kv} '
                     f"http_port: {http} s3_port: {s3} s3_tls_port: {s3_tls} }}")
    for name, az in zip(GACS, ("az1", "az2")):
        lines.append(f'gac {{ name: "{name}" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    lines.append(f"gac_settings {{ interval_ms: {INTERVAL_MS} hold_ms: {HOLD_MS} "
                 f"on_demand_initial_wcu: {ON_DEMAND_INITIAL_WCU} {extra} }}")
    lines.append("node_settings { admission_capacity_refresh_ms: 200 admission_burst_window_s: 0 }")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return http_ports


def owner(table, instances):
    """GacOwnerIndex: FNV-1a of the name, modulo."""
    h = 14695981039346656037
    for c in table.encode():
        h ^= c
        h = (h * 1099511628211) % (1 << 64)
    return h % instances


class Load:
    """Client threads putting to `table` through given routers as fast as
    answered (rate None) or paced; records (time, router index, status)."""

    def __init__(self, cluster, table, per_router_threads, rate_per_thread=None, prefix=""):
        self.c, self.table, self.prefix = cluster, table, prefix
        self.events = []
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.threads = []
        for r, n in enumerate(per_router_threads):
            for t in range(n):
                th = threading.Thread(target=self.run, args=(r, t, rate_per_thread), daemon=True)
                self.threads.append(th)

    def start(self):
        for th in self.threads:
            th.start()
        return self

    def stop(self):
        self.stop_flag.set()
        for th in self.threads:
            th.join(30)

    def run(self, router, thread, rate):
        conn = http.client.HTTPConnection("127.0.0.1", self.c.http_ports[router], timeout=15)
        headers = {"Authorization": "Bearer " + self.c.token, "Content-Type": "application/octet-stream"}
        i = 0
        t0 = time.monotonic()
        while not self.stop_flag.is_set():
            if rate:
                delay = t0 + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            key = f"{self.prefix}{self.table}-{router}-{thread}-{i}"
            i += 1
            try:
                conn.request("PUT", f"/kv/{self.table}/{key}", body=VALUE, headers=headers)
                resp = conn.getresponse()
                resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.c.http_ports[router], timeout=15)
                status = 0
            with self.lock:
                self.events.append((time.monotonic(), router, status))

    def count(self, t_from, t_to, status=200, router=None):
        with self.lock:
            return sum(1 for t, r, s in self.events
                       if t_from <= t < t_to and s == status and (router is None or r == router))


class Cluster(KvCluster):
    def __init__(self):
        super().__init__("tessera-gac-", write_layout)
        self.http_ports = self.ports

    def router_metric(self, router, name, **labels):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_ports[router]}/metrics", timeout=15) as r:
            return series_sum(r.read().decode(), name, labels)

    def granted(self, router, table=TABLE):
        return self.router_metric(router, "tessera_gac_router_granted_units_per_s", table=table, kind="write")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class GacTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not TESSERA_BIN:
            raise unittest.SkipTest("TESSERA_BIN is not set (run through ctest)")
        cls.c = Cluster()
        cls.c.up()
        cls.c.cli("kv", "table", "create", TABLE, "--wcu", str(WCU), "--rcu", "1000")
        time.sleep(1.5)  # the GACs and nodes poll the capacity

    @classmethod
    def tearDownClass(cls):
        cls.c.down()

    def window_rate(self, load, t_from, t_to, router=None):
        return load.count(t_from, t_to, router=router) * UNITS_PER_PUT / (t_to - t_from)

    def test_1_sum_over_routers_within_capacity(self):
        for split in ((7, 1), (4, 4)):
            load = Load(self.c, TABLE, split).start()
            time.sleep(3)  # shares converge
            t0 = time.monotonic()
            time.sleep(5)
            t1 = time.monotonic()
            load.stop()
            rate = self.window_rate(load, t0, t1)
            per = [self.window_rate(load, t0, t1, r) for r in (0, 1)]
            refused = load.count(t0, t1, status=429)
            log(f"split {split}: admitted {rate:.0f} units/s (router-1 {per[0]:.0f}, router-2 {per[1]:.0f}), "
                f"{refused} refused")
            self.assertGreater(refused, 0, "the load must exceed the capacity")
            self.assertLessEqual(abs(rate - WCU), 0.1 * WCU, split)
        throttled = sum(self.c.router_metric(r, "tessera_gac_router_throttled_total", table=TABLE)
                        for r in (0, 1))
        self.assertGreater(throttled, 0)  # refused by the routers' shares

    def test_2_uniform_ninety_percent(self):
        # Idle long enough for the shares (and the buckets the previous
        # overload drained: one second's worth) to fill.
        time.sleep(2)
        rate_per_thread = 0.9 * WCU / UNITS_PER_PUT / 4  # 2 threads per router
        load = Load(self.c, TABLE, (2, 2), rate_per_thread).start()
        t0 = time.monotonic()
        time.sleep(5)
        t1 = time.monotonic()
        load.stop()
        ok, refused = load.count(t0, t1), load.count(t0, t1, status=429)
        share = 100.0 * refused / max(1, ok + refused)
        log(f"90% uniform: {ok} admitted, {refused} throttled ({share:.3f}%)")
        self.assertGreater(ok, 0)
        self.assertLessEqual(share, 0.5)

    def test_3_gac_restart_under_load(self):
        name = GACS[owner(TABLE, len(GACS))]
        load = Load(self.c, TABLE, (3, 3)).start()
        time.sleep(3)
        t0 = time.monotonic()
        time.sleep(2)
        self.c.cli("cluster", "kill", name)
        t_kill = time.monotonic()
        time.sleep(1)
        self.c.cli("cluster", "restart", name)
        time.sleep(4)
        t1 = time.monotonic()
        load.stop()
        buckets = []
        t = t0
        while t + 0.5 <= t1:
            buckets.append(self.window_rate(load, t, t + 0.5))
            t += 0.5
        log(f"restart of {name} at +{t_kill - t0:.1f} s; admitted units/s per 0.5 s: "
            + " ".join(f"{b:.0f}" for b in buckets))
        # A dip below half the capacity lasts at most one interval (one
        # bucket); none of the admitted rate is lost for longer.
        low = [i for i, b in enumerate(buckets) if b < 0.5 * WCU]
        self.assertLessEqual(len(low), 1, buckets)
        total = self.window_rate(load, t0, t1)
        log(f"restart window: {total:.0f} units/s on average")
        self.assertLessEqual(total, 1.2 * WCU)

    def test_4_all_gacs_down_hold_then_fallback(self):
        # router-1 asks for far more than router-2 (paced at 200 units/s):
        # its share is above capacity / 2.
        busy = Load(self.c, TABLE, (4, 0)).start()
        light = Load(self.c, TABLE, (0, 1), rate_per_thread=200 / UNITS_PER_PUT).start()
        try:
            deadline = time.monotonic() + 10
            while self.c.granted(0) < 650 and time.monotonic() < deadline:
                time.sleep(0.2)
            before = self.c.granted(0)
            log(f"router-1 share before: {before:.0f}")
            self.assertGreater(before, 650)
            for name in GACS:
                self.c.cli("cluster", "kill", name)
            t_kill = time.monotonic()
            time.sleep(HOLD_MS / 1000 * 0.5)
            held = self.c.granted(0)
            log(f"router-1 share {time.monotonic() - t_kill:.1f} s after all GACs died: {held:.0f}")
            self.assertAlmostEqual(held, before, delta=1)
            time.sleep(HOLD_MS / 1000 * 0.5 + 3 * INTERVAL_MS / 1000)
            fallback = self.c.granted(0)
            log(f"router-1 share {time.monotonic() - t_kill:.1f} s after: {fallback:.0f}")
            self.assertAlmostEqual(fallback, WCU / 2, delta=1)
            t0 = time.monotonic()
            time.sleep(2)
            served = self.window_rate(busy, t0, time.monotonic())
            log(f"router-1 admitted at the fallback share: {served:.0f} units/s")
            self.assertGreater(served, 0.3 * WCU)
        finally:
            for name in GACS:
                self.c.cli("cluster", "restart", name, check=False)
            busy.stop()
            light.stop()

    def test_5_on_demand_step_to_twice_the_peak(self):
        self.c.cli("kv", "table", "create", "od", "--on-demand")
        time.sleep(1.5)
        peak = ON_DEMAND_INITIAL_WCU  # units/s; capacity is twice it
        # Warm: the peak load for 3 s (both routers, paced).
        warm = Load(self.c, "od", (1, 1), rate_per_thread=peak / UNITS_PER_PUT / 2).start()
        time.sleep(3)
        warm.stop()
        step = Load(self.c, "od", (2, 2), rate_per_thread=2 * peak / UNITS_PER_PUT / 4).start()
        t0 = time.monotonic()
        time.sleep(3)
        t1 = time.monotonic()
        step.stop()
        ok, refused = step.count(t0, t1), step.count(t0, t1, status=429)
        log(f"on-demand step to 2x peak ({2 * peak} units/s): {ok} admitted, {refused} throttled")
        self.assertGreater(ok, 0)
        self.assertLessEqual(refused, max(1, ok // 50))

    def test_6_bad_input(self):
        bad = os.path.join(self.c.root, "bad.textproto")
        good = open(self.c.layout).read()
        for text, field in ((good.replace(f"interval_ms: {INTERVAL_MS}", "interval_ms: 0"),
                             "gac_settings.interval_ms"),
                            (good.replace("gac_settings {", "gac_settings { on_demand_initial_rcu: -1"),
                             "gac_settings.on_demand_initial_rcu")):
            with open(bad, "w") as f:
                f.write(text)
            p = subprocess.run([TESSERA_BIN, "gac", "--layout", bad, "--name", GACS[0], "--dir", self.c.dir],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(field, p.stderr)
        p = subprocess.run([TESSERA_BIN, "gac", "--layout", self.c.layout, "--name", "router-1",
                            "--dir", self.c.dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not a gac entry", p.stderr)
        # A bad capacity changes nothing: the share in force stays.
        p = self.c.cli("kv", "table", "update", TABLE, "--wcu=-5", check=False)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"capacity provisioned rcu=1000 wcu={WCU}",
                      self.c.cli("kv", "table", "describe", TABLE).stdout)

    def put_once(self, router, key):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.c.http_ports[router], timeout=5)
            conn.request("PUT", f"/kv/skew/{key}", body=b"x", headers={"Authorization": "Bearer " + self.c.token})
            r = conn.getresponse()
            r.read()
            conn.close()
            return r.status
        except (OSError, http.client.HTTPException):
            return 0

    def skew_run(self, label):
        """80% of 900 units/s on the first partition (keys below 0x80),
        20% on the second (keys from 0xF0), both routers, paced, 5 s."""
        hot = Load(self.c, "skew", (2, 2), rate_per_thread=0.8 * 0.9 * WCU / UNITS_PER_PUT / 4).start()
        cold = Load(self.c, "skew", (1, 1), rate_per_thread=0.2 * 0.9 * WCU / UNITS_PER_PUT / 2,
                    prefix="%F0").start()
        time.sleep(2)  # adaptive capacity converges within a few refreshes
        t0 = time.monotonic()
        time.sleep(5)
        t1 = time.monotonic()
        hot.stop()
        cold.stop()
        ok = hot.count(t0, t1) + cold.count(t0, t1)
        refused = hot.count(t0, t1, status=429) + cold.count(t0, t1, status=429)
        share = 100.0 * refused / max(1, ok + refused)
        log(f"skew 80/20 at 90% ({label}): {ok} admitted, {refused} throttled ({share:.2f}%)")
        return share

    def test_7_skew_adaptive_and_static(self):
        self.c.cli("kv", "table", "create", "skew", "--partitions", "2", "--wcu", str(WCU), "--rcu", "1000")
        time.sleep(1.5)
        adaptive = self.skew_run("adaptive capacity and GAC on")
        # Both off: rewrite the knobs in the layout and in the cluster
        # directory's copy of it (which the processes are started with),
        # and restart the processes that read them.
        text = open(self.c.layout).read()
        text = text.replace("node_settings {", "node_settings { admission_adaptive: false", 1)
        text = text.replace("gac_settings {", "gac_settings { enabled: false", 1)
        for path in (self.c.layout, os.path.join(self.c.dir, "layout.textproto")):
            with open(path, "w") as f:
                f.write(text)
        self.c.cli("cluster", "restart", "az1-n1", "az2-n1", "az3-n1", "router-1", "router-2", timeout=180)
        deadline = time.monotonic() + 60
        while not all(self.put_once(r, key) == 200 for r, key in ((0, "probe"), (1, "%F0probe"))):
            self.assertLess(time.monotonic(), deadline, "the restarted cluster does not serve")
            time.sleep(0.5)
        time.sleep(1)  # the nodes poll the capacities
        static = self.skew_run("both off: static split")
        self.assertLessEqual(adaptive, 1.0)
        self.assertGreater(static, 5.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
