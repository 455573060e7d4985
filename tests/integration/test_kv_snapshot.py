#!/usr/bin/env python3
"""Streamed snapshot catch-up of a KV partition on real processes.

Goal: prove, on a local cluster (`tessera cluster up`, 1 `kv` partition) with
small snapshot chunks (4 KiB) and aggressive log compaction, that
  1. a replica's node killed (`tessera cluster kill`) while the partition's
     state grows to many chunks and its log is compacted past what the node
     holds catches up after a restart by a streamed snapshot: its applied
     index reaches the leader's and its state digest (`tessera cluster
     digest NODE`: applied index + CRC of the whole applied state) equals
     the leader's;
  2. the node killed (SIGKILL) in the middle of installing such a snapshot
     (an install pauses after its durable marker: node_settings
     fault_snapshot_install_delay_ms) finishes the install when restarted
     (installs_total{outcome="resumed"}) and again equals the leader.
Counters and content are asserted, never timing. Standard library only.
Binary: $TESSERA_BIN (set by ctest). Keep the temp dir: TESSERA_IT_KEEP=1.
"""

import os
import re
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_kv_cluster as kv  # noqa: E402

CHUNK_BYTES = 4096
NODE_SETTINGS = (f"snapshot_chunk_bytes: {CHUNK_BYTES} compaction_trigger_slots: 60 "
                 "compaction_keep_slots: 10 fault_snapshot_install_delay_ms: 1500")
KEYS = 240
VALUE_BYTES = 1024
WRITERS = 4


class SnapshotCluster(kv.Cluster):
    def __init__(self):
        super().__init__(partitions=1)
        with open(self.layout, "a") as f:
            f.write(f"node_settings {{ {NODE_SETTINGS} }}\n")
        with open(self.layout) as f:
            text = f.read()
        self.node_http = {m.group(1): int(m.group(2)) for m in re.finditer(
            r'nodes \{ name: "([^"]+)".*?http_port: (\d+)', text)}

    def node_get(self, node, path):
        url = f"http://127.0.0.1:{self.node_http[node]}{path}"
        try:
            with urllib.request.urlopen(url, timeout=kv.HTTP_TIMEOUT_S) as resp:
                return resp.read().decode()
        except OSError:
            return None

    def node_counter(self, node, name, labels=""):
        """The value of one series (`labels`: its exact {...} text) or 0."""
        text = self.node_get(node, "/metrics") or ""
        pattern = rf"^{re.escape(name)}{re.escape(labels)}\s+(\S+)$"
        m = re.search(pattern, text, re.M)
        return float(m.group(1)) if m else 0.0

    def digest(self, node, group):
        p = self.cli("cluster", "digest", node, check=False)
        m = re.search(rf"^{re.escape(node)} group={group} (.*)$", p.stdout, re.M)
        return m.group(1) if m else None

    def log_count(self, node, event):
        try:
            with open(os.path.join(self.dir, "logs", node + ".log"), errors="replace") as f:
                return f.read().count(event)
        except OSError:
            return 0


class StreamedSnapshotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not kv.TESSERA_BIN or not os.access(kv.TESSERA_BIN, os.X_OK):
            raise unittest.SkipTest("TESSERA_BIN is not an executable tessera binary")
        cls.c = SnapshotCluster()
        cls.addClassCleanup(cls.c.down)
        cls.c.up()
        cls.c.wait_converged(60)

    def write_keys(self, tag):
        """KEYS keys of VALUE_BYTES through the router, WRITERS in parallel."""
        errors = []

        def writer(w):
            for i in range(w, KEYS, WRITERS):
                value = (f"{tag}-{i}-".encode() * VALUE_BYTES)[:VALUE_BYTES]
                for _ in range(20):
                    status, _, _ = self.c.put(f"snap-{i:05d}", value)
                    if status == 200:
                        break
                    time.sleep(0.1)
                else:
                    errors.append(i)
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [], "writes failed")

    def partition(self):
        parts = self.c.status()
        self.assertEqual(len(parts), 1, parts)
        return parts[0]

    def leader_and_follower(self):
        p = self.partition()
        leader = [r["name"] for r in p["replicas"] if r["leader"]]
        self.assertEqual(len(leader), 1, p)
        follower = next(r["name"] for r in p["replicas"] if not r["leader"])
        return p["group"], leader[0], follower

    def assert_same_state(self, group, leader, lagging):
        def equal():
            a, b = self.c.digest(leader, group), self.c.digest(lagging, group)
            return a is not None and a == b
        self.assertTrue(kv.wait_until(equal, 30, 0.3),
                        f"{lagging}: {self.c.digest(lagging, group)} vs leader {leader}: "
                        f"{self.c.digest(leader, group)}")
        pairs = int(re.search(r"pairs=(\d+)", self.c.digest(leader, group)).group(1))
        self.assertGreaterEqual(pairs, KEYS)

    def lag_then_restart(self, tag):
        """Kills a follower, writes past its log, restarts it; returns names."""
        group, leader, lagging = self.leader_and_follower()
        self.c.cli("cluster", "kill", lagging)
        self.write_keys(tag)
        state_bytes = int(re.search(r"bytes=(\d+)", self.c.digest(leader, group)).group(1))
        self.assertGreater(state_bytes, 20 * CHUNK_BYTES)
        return group, leader, lagging

    def test_1_lagging_node_catches_up_by_streamed_snapshot(self):
        group, leader, lagging = self.lag_then_restart("a")
        installed = self.c.node_counter(lagging, "tessera_snapshot_installs_total",
                                        '{outcome="installed"}')
        self.c.cli("cluster", "restart", lagging)
        self.c.wait_converged(60)
        self.assertTrue(kv.wait_until(lambda: self.c.node_counter(
            lagging, "tessera_snapshot_installs_total", '{outcome="installed"}') > installed, 30))
        self.assertGreaterEqual(
            self.c.node_counter(lagging, "tessera_snapshot_chunks_received_total"), 20)
        self.assertGreaterEqual(self.c.node_counter(
            leader, "tessera_snapshot_transfers_total", '{outcome="completed"}'), 1)
        self.assert_same_state(group, leader, lagging)

    def test_2_kill_during_install_is_finished_at_restart(self):
        group, leader, lagging = self.lag_then_restart("b")
        started = self.c.log_count(lagging, "node.snapshot_install_started")
        self.c.cli("cluster", "restart", lagging)
        self.assertTrue(kv.wait_until(
            lambda: self.c.log_count(lagging, "node.snapshot_install_started") > started, 30, 0.05),
            "no install started on the restarted node")
        time.sleep(0.2)  # inside the install's pause after its durable marker
        self.c.cli("cluster", "kill", lagging)
        self.c.cli("cluster", "restart", lagging)
        self.c.wait_converged(60)
        self.assertTrue(kv.wait_until(lambda: self.c.node_counter(
            lagging, "tessera_snapshot_installs_total", '{outcome="resumed"}') >= 1, 30))
        self.assert_same_state(group, leader, lagging)


if __name__ == "__main__":
    unittest.main(verbosity=2)
