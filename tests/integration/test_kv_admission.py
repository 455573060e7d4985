#!/usr/bin/env python3
"""Integration test of capacity admission on a real cluster (docs/admission.md).

Goal: prove, on real processes (3 metadata replicas, 3 storage nodes in 3
AZs, 1 router), that a table created with `tessera kv table create --wcu 200`
  1. admits a paced load at 90% of its capacity with no throttled request
     (counted from the answers and from the nodes' metrics);
  2. refuses a large share of a load at 300%, each refusal answered 429
     `ThroughputExceeded` by the HTTP API and never applied;
  3. after an idle burst window (2 s here, node_settings) absorbs a burst
     above its rate from burst credit (the nodes count burst units);
  4. at a capacity smaller than one write, refuses it distinctly: the CLI
     prints "throughput exceeded" (exit 4), HTTP answers 429, nothing applied;
  5. bad input (zero, negative, absurd capacities, --rcu without --wcu,
     --on-demand with --rcu, unknown tables, another capacity at create)
     gets a clear error and a non-zero exit, and changes nothing;
  6. burst credit is spent only while the node has spare capacity: with
     another table's load draining the node-wide write bucket of the
     partition's leader (NODE_WCU per second here), the same burst spends
     no burst credit and is refused in part; once that load stops, it is
     absorbed again.
Request counts decide, never timings: each write costs 10 write units.

Python 3 standard library only; free loopback ports, a fresh temp dir,
`tessera cluster down` at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import collections
import concurrent.futures
import json
import sys
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from kv_harness import TESSERA_BIN, KvCluster, series_sum, three_az_layout, write_layout_file
from test_kv_cluster import parse_status

HTTP_TIMEOUT_S = 15
TABLE = "orders"
WCU = 200
# key + value stay within 10 KiB: 10 write units per put.
VALUE = b"v" * (10 * 1024 - 64)
UNITS_PER_PUT = 10
BURST_WINDOW_S = 2
# The node-wide write bucket: far above test 1's loads on one node (600
# units/s at most), below what the noisy table of test 3 asks of it.
NODE_WCU = 1500
NOISY = "noisy"
NOISY_VALUE = b"n" * (40 * 1024 - 64)  # 40 write units per put


def write_layout(path):
    """3 AZs x 1 storage node, one meta replica per AZ, one router; short
    burst window and capacity refresh, a node-wide write bucket of NODE_WCU.
    Returns the router's HTTP port and the nodes' HTTP ports."""
    layout = three_az_layout("admission")
    layout.lines.append(f"node_settings {{ admission_burst_window_s: {BURST_WINDOW_S} "
                        f"admission_capacity_refresh_ms: 200 admission_node_wcu_per_s: {NODE_WCU} }}")
    write_layout_file(path, layout.lines)
    return layout.router_http[0], layout.node_http


class Cluster(KvCluster):
    def __init__(self):
        super().__init__("tessera-adm-", write_layout)
        self.http_port, self.node_http_ports = self.ports

    def put(self, key, value=VALUE, table=TABLE):
        path = f"/kv/{table}/{urllib.parse.quote(key, safe='')}"
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=value, method="PUT",
                                     headers={"Authorization": "Bearer " + self.token,
                                              "Content-Type": "application/octet-stream"})
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def get_status(self, key, table=TABLE):
        path = f"/kv/{table}/{urllib.parse.quote(key, safe='')}"
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}",
                                     headers={"Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    def node_metric(self, name, **labels):
        total = 0.0
        for port in self.node_http_ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=HTTP_TIMEOUT_S) as r:
                total += series_sum(r.read().decode(), name, labels)
        return total

    def paced(self, prefix, rate_per_s, count, threads=8, table=TABLE):
        """`count` puts at `rate_per_s` (slot i at t0 + i / rate; a late slot
        goes at once). Returns {status: [keys]}."""
        t0 = time.monotonic() + 0.05
        lock = threading.Lock()
        out = {}

        def one(i):
            delay = t0 + i / rate_per_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            key = f"{prefix}-{i:05d}"
            status, _, body = self.put(key, table=table)
            with lock:
                out.setdefault(status, []).append((key, body))

        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(count)))
        return out


class KvAdmissionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not TESSERA_BIN:
            raise unittest.SkipTest("TESSERA_BIN is not set (run through ctest)")
        cls.c = Cluster()
        cls.c.up()

    @classmethod
    def tearDownClass(cls):
        cls.c.down()

    def describe(self, table=TABLE):
        return self.c.cli("kv", "table", "describe", table).stdout

    def wait_described(self, text, table=TABLE, timeout_s=10):
        """`describe` reads one metadata replica's MemDS, which applies the
        update a moment after the leader answered it."""
        deadline = time.monotonic() + timeout_s
        while text not in self.describe(table) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertIn(text, self.describe(table))

    def test_1_capacity_admission(self):
        c = self.c
        out = c.cli("kv", "table", "create", TABLE, "--wcu", str(WCU), "--rcu", "400").stdout
        self.assertIn(f"capacity provisioned rcu=400 wcu={WCU}", out)
        self.assertIn("partitions 1", out)
        time.sleep(1.0)  # every node polls the capacity within 200 ms

        # 1. 90% of capacity: 18 puts/s x 10 units for 4 s.
        rate = 0.9 * WCU / UNITS_PER_PUT
        answers = c.paced("ninety", rate, int(rate * 4))
        total = sum(len(v) for v in answers.values())
        print(f"90%: {total} puts, answers {{{', '.join(f'{k}: {len(v)}' for k, v in answers.items())}}}",
              file=sys.stderr)
        self.assertEqual(set(answers), {200}, {k: v[:2] for k, v in answers.items() if k != 200})
        self.assertEqual(c.node_metric("tessera_admission_throttled_total", table=TABLE), 0)
        self.assertGreaterEqual(c.node_metric("tessera_admission_admitted_total", table=TABLE, kind="write"),
                                total)

        # 2. 300%: 60 puts/s for 4 s; a large share refused, distinctly, not applied.
        rate = 3 * WCU / UNITS_PER_PUT
        answers = c.paced("triple", rate, int(rate * 4))
        total = sum(len(v) for v in answers.values())
        refused = answers.get(429, [])
        print(f"300%: {total} puts, answers {{{', '.join(f'{k}: {len(v)}' for k, v in answers.items())}}}",
              file=sys.stderr)
        self.assertEqual(set(answers) - {200, 429}, set(), {k: v[:2] for k, v in answers.items()})
        self.assertGreaterEqual(len(refused), total // 5)
        self.assertEqual(json.loads(refused[0][1])["code"], "ThroughputExceeded", refused[0][1])
        for key, _ in refused[:20]:
            self.assertEqual(c.get_status(key), 404, key)  # answered, not applied
        self.assertGreaterEqual(c.node_metric("tessera_admission_throttled_total", table=TABLE, kind="write"),
                                len(refused))

        # 3. Idle past the burst window (1 s to refill, 2 s of credit), then a
        # burst of 550 units at once: above one second's 200, absorbed.
        time.sleep(1 + BURST_WINDOW_S + 1)
        burst_before = c.node_metric("tessera_admission_burst_units_total", table=TABLE)
        answers = c.paced("burst", 10_000, 55, threads=11)
        print(f"burst: answers {{{', '.join(f'{k}: {len(v)}' for k, v in answers.items())}}}",
              file=sys.stderr)
        self.assertEqual(set(answers), {200}, {k: v[:2] for k, v in answers.items() if k != 200})
        burst_spent = c.node_metric("tessera_admission_burst_units_total", table=TABLE) - burst_before
        print(f"burst units spent: {burst_spent}", file=sys.stderr)
        self.assertGreater(burst_spent, 0)

        # 4. A capacity below one write's units: refused whatever the timing.
        out = c.cli("kv", "table", "update", TABLE, "--wcu", "1").stdout
        self.assertIn("capacity provisioned rcu=400 wcu=1", out)
        self.wait_described("capacity provisioned rcu=400 wcu=1")

        # Until every node has polled the new capacity (one refresh
        # interval) a put may still pass: probe with keys of their own, so
        # that the key checked below is written only once it is refused.
        probes = iter(range(1_000_000))

        def refused_now():
            return c.put(f"probe-{next(probes)}")[0] == 429
        deadline = time.monotonic() + 10
        while not refused_now() and time.monotonic() < deadline:
            time.sleep(0.2)
        status, headers, body = c.put("small-capacity")
        self.assertEqual(status, 429, body)
        self.assertEqual(json.loads(body)["code"], "ThroughputExceeded")
        self.assertEqual(headers.get("Retry-After"), "1")
        p = c.cli("kv", "put", TABLE, "cli-key", VALUE.decode(), check=False)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("throughput exceeded", p.stderr)
        self.assertEqual(c.get_status("small-capacity"), 404)
        self.assertEqual(c.get_status("cli-key"), 404)
        # The default table keeps today's behaviour: no capacity, never refused.
        self.assertEqual(c.put("k", table="kv")[0], 200)

    def leaders(self, table):
        """{(start, end): leading node name} of `table`'s partitions."""
        out = {}
        for p in parse_status(self.c.cli("cluster", "status", "--json", check=False).stdout):
            leading = [r["name"] for r in p["replicas"] if r["leader"]]
            if p["table"] == table and leading:
                out[(p["start"], p["end"])] = leading[0]
        return out

    def create_led(self, table, partitions, *capacity):
        """Creates `table` and waits until every partition has a leader and
        the router writes to it; returns leaders(table)."""
        self.c.cli("kv", "table", "create", table, "--partitions", str(partitions), *capacity)
        deadline = time.monotonic() + 30
        while len(self.leaders(table)) < partitions and time.monotonic() < deadline:
            time.sleep(0.3)
        led = self.leaders(table)
        self.assertEqual(len(led), partitions, led)
        for start, _ in led:
            key = start + b"\x01probe"
            while self.c.put(key, b"x", table=table)[0] != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
        return led

    def test_3_burst_only_while_the_node_has_spare_capacity(self):
        c = self.c
        noisy = self.create_led(NOISY, 6, "--on-demand")
        # A provisioned table whose one partition's leader also leads noisy
        # partitions (tables' leaders fall where elections put them).
        for attempt in range(6):
            bursty = f"bursty{attempt}"
            [(_, leader)] = self.create_led(bursty, 1, "--wcu", str(WCU), "--rcu", "400").items()
            targets = [start for (start, _), node in noisy.items() if node == leader]
            if targets:
                break
        self.assertTrue(targets, f"no noisy partition shares a leader with a bursty table: {noisy}")
        print(f"{bursty} and {len(targets)} noisy partitions led by {leader}", file=sys.stderr)

        def burst(prefix):
            time.sleep(1 + BURST_WINDOW_S + 1)  # idle: the burst credit is full
            before = c.node_metric("tessera_admission_burst_units_total", table=bursty)
            answers = c.paced(prefix, 10_000, 55, threads=11, table=bursty)
            spent = c.node_metric("tessera_admission_burst_units_total", table=bursty) - before
            print(f"{prefix}: answers {{{', '.join(f'{k}: {len(v)}' for k, v in answers.items())}}}, "
                  f"burst units spent {spent}", file=sys.stderr)
            return answers, spent

        # The node busy: noisy puts to the partitions its leader leads, far
        # above NODE_WCU, drain the node-wide bucket.
        stop, noisy_answers = threading.Event(), collections.Counter()

        def noise(t):
            i = 0
            while not stop.is_set():
                key = targets[i % len(targets)] + b"\x01n%d-%d" % (t, i)
                noisy_answers[c.put(key, NOISY_VALUE, table=NOISY)[0]] += 1
                i += 1
        threads = [threading.Thread(target=noise, args=(t,), daemon=True) for t in range(8)]
        throttled_before = c.node_metric("tessera_admission_throttled_total", table=NOISY)
        for t in threads:
            t.start()
        try:
            answers, spent = burst("busy")
        finally:
            stop.set()
            for t in threads:
                t.join()
        noisy_throttled = c.node_metric("tessera_admission_throttled_total", table=NOISY) - throttled_before
        print(f"noisy: {dict(noisy_answers)}, throttled on the nodes {noisy_throttled}", file=sys.stderr)
        self.assertGreater(noisy_throttled, 0, "the node-wide bucket was never drained")
        self.assertEqual(spent, 0)
        self.assertGreater(len(answers.get(429, [])), 0, answers.keys())
        self.assertEqual(set(answers) - {200, 429}, set(), {k: v[:2] for k, v in answers.items()})

        # The node idle again: the same burst is absorbed from burst credit.
        answers, spent = burst("idle")
        self.assertEqual(set(answers), {200}, {k: v[:2] for k, v in answers.items() if k != 200})
        self.assertGreater(spent, 0)

    def test_2_bad_input(self):
        c = self.c
        c.cli("kv", "table", "create", "badin", "--rcu", "10", "--wcu", "20")
        self.wait_described("capacity provisioned rcu=10 wcu=20", "badin")
        before = self.describe("badin")
        cases = [
            ("create", "t2", "--wcu", "0", "--rcu", "5"),
            ("create", "t2", "--rcu=-5", "--wcu", "5"),
            ("create", "t2", "--rcu", "5000000", "--wcu", "5"),
            ("create", "t2", "--rcu", "5"),
            ("create", "t2", "--on-demand", "--rcu", "5"),
            ("create", "bad/name", "--rcu", "5", "--wcu", "5"),
            ("create", "t2", "--partitions", "0"),
            ("update", "badin", "--wcu", "0"),
            ("update", "badin", "--rcu=-1"),
            ("update", "badin", "--wcu", "99999999999"),
            ("update", "badin"),
            ("update", "badin", "--on-demand", "--wcu", "3"),
        ]
        for case in cases:
            p = c.cli("kv", "table", *case, check=False)
            self.assertEqual(p.returncode, 2, f"{case}: {p.stdout}{p.stderr}")
            self.assertIn("tessera kv table: InvalidArgument: ", p.stderr, case)
        for case in [("describe", "nosuch"), ("update", "nosuch", "--wcu", "5")]:
            p = c.cli("kv", "table", *case, check=False)
            self.assertEqual(p.returncode, 3, f"{case}: {p.stdout}{p.stderr}")
            self.assertIn("no table 'nosuch'", p.stderr)
        p = c.cli("kv", "table", "create", "badin", "--rcu", "11", "--wcu", "20", check=False)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("exists with capacity provisioned rcu=10 wcu=20", p.stderr)
        p = c.cli("kv", "table", "describe", "t2", check=False)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)  # nothing was created
        self.assertEqual(self.describe("badin"), before)  # nothing changed
        # A good update of one of the two keeps the other; on-demand and back.
        out = c.cli("kv", "table", "update", "badin", "--rcu", "30").stdout
        self.assertIn("capacity provisioned rcu=30 wcu=20", out)
        self.wait_described("capacity provisioned rcu=30 wcu=20", "badin")
        out = c.cli("kv", "table", "update", "badin", "--on-demand").stdout
        self.assertIn("capacity on-demand", out)
        self.wait_described("capacity on-demand", "badin")


if __name__ == "__main__":
    unittest.main(verbosity=2)
