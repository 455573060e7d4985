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
     gets a clear error and a non-zero exit, and changes nothing.
Request counts decide, never timings: each write costs 10 write units.

Python 3 standard library only; free loopback ports, a fresh temp dir,
`tessera cluster down` at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import concurrent.futures
import json
import sys
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from free_ports import free_ports
from kv_harness import TESSERA_BIN, KvCluster, series_sum

AZS = ("az1", "az2", "az3")
HTTP_TIMEOUT_S = 15
TABLE = "orders"
WCU = 200
# key + value stay within 10 KiB: 10 write units per put.
VALUE = b"v" * (10 * 1024 - 64)
UNITS_PER_PUT = 10
BURST_WINDOW_S = 2


def write_layout(path):
    """3 AZs x 1 storage node, one meta replica per AZ, one router; short
    burst window and capacity refresh. Returns the router's HTTP port."""
    ports = iter(free_ports(3 * 2 + 3 * 2 + 4))
    lines = ['name: "admission"', 'azs: ["az1", "az2", "az3"]']
    for az in AZS:
        lines.append(f'nodes {{ name: "{az}-n1" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    for az in AZS:
        lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    kv, http, s3, s3_tls = next(ports), next(ports), next(ports), next(ports)
    lines.append(f'routers {{ name: "router-1" az: "az1" host: "127.0.0.1" kv_port: {kv} '
                 f"http_port: {http} s3_port: {s3} s3_tls_port: {s3_tls} }}")
    lines.append(f"node_settings {{ admission_burst_window_s: {BURST_WINDOW_S} "
                 "admission_capacity_refresh_ms: 200 }")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return http, [int(l.split("http_port: ")[1].split()[0]) for l in lines if l.startswith("nodes")]


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

    def paced(self, prefix, rate_per_s, count, threads=8):
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
            status, _, body = self.put(key)
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
