#!/usr/bin/env python3
"""Load-based splits and splits killed at each step
(docs/partition-splits.md, "Splits by load" and "Crash safety"), on real
processes: 3 storage nodes in 3 AZs, 3 metadata replicas, 1 router, 1
autoadmin with a low `autoadmin_settings.split_load` and a short
`split_after_s`.

Goal:
  1. Load on one key range of a table splits it within split_after (plus
     the leaders' 5 s window), and each half then serves between a quarter
     and three quarters of the load (the leaders' load in `tessera cluster
     status --json`); every acknowledged put reads back once.
  2. One hot key, and sequentially increasing keys, cause no split; the
     reasons (one_hot_key, sequential) are shown by `tessera autoadmin
     status` and counted in tessera_autoadmin_load_split_decisions_total.
  3. Kill at each split step: the autoadmin is restarted with
     --testing-exit-at-split-step STEP (it kills itself with SIGKILL
     there), a split is requested under writes, the parent's leader node
     is killed -9 and restarted too, then a normal autoadmin is started:
     the split completes, meta's map is contiguous (no gap, no overlap,
     distinct groups) and every acknowledged key is scanned exactly once.

Python 3 standard library only; free loopback ports, a fresh temp dir,
`tessera cluster down` at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import random
import subprocess
import sys
import threading
import time
import unittest

from kv_harness import (TESSERA_BIN, AutoadminKvCluster, assert_reads_back, series_sum, three_az_layout,
                        write_layout_file)

SPLIT_LOAD = 30
# Longer than the leaders' 5 s window, so that a half is measured over a
# full window of its own before it could split again.
SPLIT_AFTER_S = 8


def write_layout(path):
    layout = three_az_layout("loadsplits", autoadmin=True)
    layout.lines.append(f"autoadmin_settings {{ split_load: {SPLIT_LOAD} split_after_s: {SPLIT_AFTER_S} "
                        "poll_interval_ms: 300 lease_ms: 2000 dead_after_ms: 30000 }")
    write_layout_file(path, layout.lines)
    return layout.router_http[0], layout.autoadmin_http


class Cluster(AutoadminKvCluster):
    def __init__(self):
        super().__init__("tessera-loadsplit-", write_layout)

    def create_table(self, name):
        self.cli("kv", "table", "create", name)
        deadline = time.monotonic() + 20
        while self.put(name, "\x00probe", b"x")[0] != 200:
            self.assertion(time.monotonic() < deadline, f"table {name} never writable")
            time.sleep(0.2)

    @staticmethod
    def assertion(ok, what):
        if not ok:
            raise AssertionError(what)


class Load(threading.Thread):
    """Puts keys from `keys()` (called under a shared lock) until stopped;
    keeps the last acknowledged value of each key (one thread per key set,
    so no two threads race on one key)."""

    def __init__(self, cluster, table, keys):
        super().__init__(daemon=True)
        self.c, self.table, self.keys = cluster, table, keys
        self.acked, self.failed, self.count = {}, 0, 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            key = self.keys()
            value = f"{key}@{self.count}".encode()
            status, _ = self.c.put(self.table, key, value)
            self.count += 1
            if status == 200:
                self.acked[key.encode()] = value
            else:
                self.failed += 1


def run_loads(loads, seconds_or_until):
    for l in loads:
        l.start()
    try:
        return seconds_or_until()
    finally:
        for l in loads:
            l.stop.set()
        for l in loads:
            l.join(30)


class KvLoadSplitTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not TESSERA_BIN:
            raise unittest.SkipTest("TESSERA_BIN is not set (run through ctest)")
        cls.c = Cluster()
        cls.c.up()
        cls.own = []  # autoadmin processes this test started itself

    @classmethod
    def tearDownClass(cls):
        for p in cls.own:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        cls.c.down()

    def check_map_and_readback(self, table, acked):
        parts = self.c.partitions(table)
        self.assertEqual(parts[0]["start"], "", parts)
        self.assertEqual(parts[-1]["end"], "", parts)
        for left, right in zip(parts, parts[1:]):
            self.assertEqual(left["end"], right["start"], parts)  # no gap, no overlap
        self.assertEqual(len({p["group"] for p in parts}), len(parts), parts)
        assert_reads_back(self, self.c.scan_all(table), acked)
        return parts

    def test_1_load_on_a_range_splits_it_in_halves(self):
        self.c.create_table("ranged")
        loads = []
        for t in range(4):
            rng = random.Random(t)
            loads.append(Load(self.c, "ranged", lambda t=t, rng=rng: f"r{rng.randrange(100) * 4 + t:03d}"))
        started = time.monotonic()

        def until_split_then_measure():
            deadline = time.monotonic() + 45
            parts = self.c.partitions("ranged")
            while len(parts) < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
                parts = self.c.partitions("ranged")
            split_after = time.monotonic() - started
            if len(parts) < 2:
                return parts, None, split_after
            first = parts
            # A full window of the child's leader (5 s), well before a half
            # could split again (split_after).
            time.sleep(6.5)
            return first, self.c.partitions("ranged"), split_after

        first, later, took = run_loads(loads, until_split_then_measure)
        status = self.c.autoadmin("/status")
        self.assertGreaterEqual(len(first), 2, status)
        # The leader's 5 s window, split_after, and the split's own steps.
        self.assertLess(took, 5 + SPLIT_AFTER_S + 25, status)
        self.assertIn("load ", status)
        split_key = first[0]["end"]
        left = sum(p["load"] for p in later if p["end"] != "" and p["end"] <= split_key)
        right = sum(p["load"] for p in later if p["end"] == "" or p["end"] > split_key)
        total = left + right
        print(f"load split after {took:.1f} s; halves serve {left} and {right} req/s", file=sys.stderr)
        self.assertGreater(total, 0, later)
        self.assertGreaterEqual(left / total, 0.25, later)
        self.assertGreaterEqual(right / total, 0.25, later)
        acked = {}
        for l in loads:
            acked.update(l.acked)
        acked[b"\x00probe"] = b"x"
        self.check_map_and_readback("ranged", acked)

    def test_2_hot_key_and_sequential_keys_do_not_split(self):
        self.c.create_table("hot")
        self.c.create_table("seq")
        counter = [0]
        lock = threading.Lock()

        def next_seq():
            with lock:
                counter[0] += 1
                return f"s{counter[0]:07d}"

        loads = [Load(self.c, "hot", lambda: "h") for _ in range(3)]
        loads += [Load(self.c, "seq", next_seq) for _ in range(3)]

        def refused_both():
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline:
                s = self.c.autoadmin("/status")
                if "one_hot_key" in s and "sequential" in s:
                    time.sleep(SPLIT_AFTER_S + 1)  # longer than split_after: still no split
                    return s
                time.sleep(0.5)
            return self.c.autoadmin("/status")

        status = run_loads(loads, refused_both)
        self.assertIn("one_hot_key", status)
        self.assertIn("sequential", status)
        self.assertEqual(len(self.c.partitions("hot")), 1, status)
        self.assertEqual(len(self.c.partitions("seq")), 1, status)
        metrics = self.c.autoadmin("/metrics")
        self.assertGreaterEqual(series_sum(metrics, "tessera_autoadmin_load_split_decisions_total",
                                           {"reason": "one_hot_key"}), 1)
        self.assertGreaterEqual(series_sum(metrics, "tessera_autoadmin_load_split_decisions_total",
                                           {"reason": "sequential"}), 1)
        cli = self.c.cli("autoadmin", "status", check=False).stdout
        self.assertIn("one_hot_key", cli)

    def crash_at(self, step, table):
        self.c.create_table(table)
        writer = Load(self.c, table, None)
        n = [0]

        def slow_keys():
            time.sleep(0.05)
            n[0] += 1
            return f"c{(n[0] * 37) % 200:03d}"

        writer.keys = slow_keys
        writer.start()
        try:
            time.sleep(1)
            self.c.cli("cluster", "kill", "autoadmin-az1")
            faulty = subprocess.Popen(
                [TESSERA_BIN, "autoadmin", "--layout", self.c.layout, "--name", "autoadmin-az1",
                 "--dir", self.c.dir, "--testing-exit-at-split-step", step],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.own.append(faulty)
            self.c.cli("kv", "partition", "split", table, "--key", "c100", "--no-wait")
            try:
                rc = faulty.wait(40)
            except subprocess.TimeoutExpired:
                faulty.kill()
                self.fail(f"the autoadmin did not reach {step}\n" + self.c.cli("autoadmin", "status", check=False).stdout)
            self.assertEqual(rc, -9, f"exit at {step}")
            # A parent replica dies too: its leader, killed -9 and restarted.
            leader = self.c.partitions(table)[0]["leader"] or "az2-n1"
            self.c.cli("cluster", "kill", leader)
            time.sleep(0.5)
            self.c.cli("cluster", "restart", leader)
            self.c.cli("cluster", "restart", "autoadmin-az1")
            deadline = time.monotonic() + 40
            parts = self.c.partitions(table)
            while len(parts) < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
                parts = self.c.partitions(table)
            time.sleep(1)
        finally:
            writer.stop.set()
            writer.join(30)
        self.assertEqual(len(parts), 2, self.c.cli("autoadmin", "status", check=False).stdout)
        parts = self.check_map_and_readback(table, {**writer.acked, b"\x00probe": b"x"})
        self.assertGreater(len(writer.acked), 10)

    def test_3a_killed_after_reserve(self):
        self.crash_at("reserve", "crasha")

    def test_3b_killed_after_order(self):
        self.crash_at("order", "crashb")

    def test_3c_killed_after_one_child_created(self):
        self.crash_at("create_one", "crashc")

    def test_3d_killed_before_commit(self):
        self.crash_at("before_commit", "crashd")


if __name__ == "__main__":
    unittest.main(verbosity=2)
