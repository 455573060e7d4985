#!/usr/bin/env python3
"""Partition splits carried out end to end by the autoadmin
(docs/partition-splits.md), on real processes: 3 storage nodes in 3 AZs,
3 metadata replicas, 1 router, 1 autoadmin with a small
`autoadmin_settings.split_bytes`.

Goal:
  1. Size: table kv starts as one partition; keys are written through the
     router's HTTP API while its state grows past split_bytes. The
     autoadmin splits it: meta's map shows two (or more) partitions, the
     halves of the first split at the parent's epoch + 1, every put was
     answered 200 (routers re-resolve on WrongPartition), and a full scan
     returns every acknowledged key exactly once, in order, with its value.
  2. By hand: `tessera kv partition split byhand --key b050` while keys are
     written prints both halves ([.., b050) and [b050, ..), both at epoch
     + 1); `tessera kv partitions byhand` shows them; the same checks.
  3. Bad input gets exit 2 and changes nothing: an unknown table, a key
     that is a partition's start, --key with --auto.

Python 3 standard library only; free loopback ports, a fresh temp dir,
`tessera cluster down` at the end. Binary: $TESSERA_BIN (set by ctest).
"""

import base64
import hashlib
import re
import threading
import time
import unittest

from kv_harness import TESSERA_BIN, KvCluster, assert_reads_back, three_az_layout, write_layout_file

SPLIT_BYTES = 64 * 1024
VALUE_BYTES = 300
# How long the size split may take once the writes end: generous, as on a
# loaded machine the leaders' estimates and the autoadmin's rounds lag.
SPLIT_WITHIN_S = 90


def write_layout(path):
    layout = three_az_layout("splits", autoadmin=True)
    layout.lines.append(f"autoadmin_settings {{ split_bytes: {SPLIT_BYTES} poll_interval_ms: 300 "
                        "lease_ms: 2000 dead_after_ms: 30000 }")
    write_layout_file(path, layout.lines)
    return layout.router_http[0]


def value_of(key):
    """VALUE_BYTES of base64 text drawn from the key's hash: incompressible,
    so the leader's on-disk estimate of the state stays above split_bytes
    after a flush compresses it (a repeated pattern would shrink below it)."""
    seed = b"".join(hashlib.sha256(f"{key}/{i}".encode()).digest() for i in range(VALUE_BYTES // 32 + 1))
    return base64.b64encode(seed)[:VALUE_BYTES]


PARTITION_LINE = re.compile(r'^group (\d+) epoch (\d+) \["(.*)", "(.*)"\) replicas ([\d,]+)$')


class Cluster(KvCluster):
    def __init__(self):
        super().__init__("tessera-split-", write_layout)
        self.http_port = self.ports

    def partitions(self, table):
        """[(group, epoch, start, end)] from `tessera kv partitions`."""
        out = []
        for line in self.cli("kv", "partitions", table).stdout.splitlines():
            m = PARTITION_LINE.match(line)
            assert m, line
            out.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
        return out


class Writer(threading.Thread):
    """Puts `prefix%03d` keys in order (a small pause between them); keeps
    the acknowledged ones and every other answer."""

    def __init__(self, cluster, table, prefix, count, pause_s):
        super().__init__(daemon=True)
        self.c, self.table, self.prefix, self.count, self.pause_s = cluster, table, prefix, count, pause_s
        self.acked, self.failed = {}, []

    def run(self):
        for i in range(self.count):
            key = f"{self.prefix}{i:03d}"
            value = value_of(key)
            status, body = self.c.put(self.table, key, value)
            if status == 200:
                self.acked[key.encode()] = value
            else:
                self.failed.append((key, status, body[:200]))
            time.sleep(self.pause_s)


class KvSplitTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not TESSERA_BIN:
            raise unittest.SkipTest("TESSERA_BIN is not set (run through ctest)")
        cls.c = Cluster()
        cls.c.up()

    @classmethod
    def tearDownClass(cls):
        cls.c.down()

    def check_readback(self, table, acked):
        assert_reads_back(self, self.c.scan_all(table), acked)

    def test_1_size_triggered_split_under_writes(self):
        before = self.c.partitions("kv")
        self.assertEqual(len(before), 1, before)
        epoch = before[0][1]
        # 600 * ~310 bytes: well above split_bytes even by a coarse estimate.
        writer = Writer(self.c, "kv", "k", 600, 0.01)
        writer.start()
        writer.join(120)
        deadline = time.monotonic() + SPLIT_WITHIN_S
        parts = self.c.partitions("kv")
        while len(parts) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            parts = self.c.partitions("kv")
        self.assertGreaterEqual(len(parts), 2, self.c.cli("autoadmin", "status", check=False).stdout)
        self.assertEqual(writer.failed, [])
        parts = self.c.partitions("kv")
        self.assertTrue(all(p[1] > epoch for p in parts), parts)  # every half at a later epoch
        for left, right in zip(parts, parts[1:]):
            self.assertEqual(left[3], right[2], parts)  # adjacent halves, nothing lost
        self.assertEqual(len({p[0] for p in parts}), len(parts), parts)
        self.check_readback("kv", writer.acked)
        self.assertEqual(len(writer.acked), 600)

    def test_2_split_by_hand_under_writes(self):
        self.c.cli("kv", "table", "create", "byhand")
        # The router learns a new table on its first miss: wait until it writes.
        deadline = time.monotonic() + 20
        while self.c.put("byhand", "a-probe", b"x")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        writer = Writer(self.c, "byhand", "b", 100, 0.02)
        writer.start()
        time.sleep(0.5)
        before = self.c.partitions("byhand")
        self.assertEqual(len(before), 1, before)
        out = self.c.cli("kv", "partition", "split", "byhand", "--key", "b050", "--timeout", "60").stdout
        writer.join(120)
        halves = [PARTITION_LINE.match(l) for l in out.splitlines()]
        self.assertEqual(len(halves), 2, out)
        self.assertEqual(halves[0].group(4), "b050", out)
        self.assertEqual(halves[1].group(3), "b050", out)
        after = self.c.partitions("byhand")
        self.assertEqual([(p[2], p[3]) for p in after], [(before[0][2], "b050"), ("b050", before[0][3])])
        self.assertEqual([p[1] for p in after], [before[0][1] + 1] * 2)
        self.assertEqual(writer.failed, [])
        self.check_readback("byhand", {**writer.acked, b"a-probe": b"x"})
        self.assertEqual(len(writer.acked), 100)

    def test_3_bad_input(self):
        self.c.cli("kv", "table", "create", "bad")
        cases = [
            ("kv", "partition", "split", "nosuch", "--key", "x"),
            ("kv", "partition", "split", "bad", "--key", ""),
            ("kv", "partition", "split", "bad", "--key", "x", "--auto"),
            ("kv", "partition", "split", "bad"),
        ]
        for args in cases:
            p = self.c.cli(*args, check=False)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertTrue(p.stderr.strip(), args)
        # The start of a partition is not a split key: byhand's child starts at b050.
        if len(self.c.partitions("byhand")) == 2:
            p = self.c.cli("kv", "partition", "split", "byhand", "--key", "b050", check=False)
            self.assertEqual(p.returncode, 2, (p.stdout, p.stderr))
        self.assertEqual(len(self.c.partitions("bad")), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
