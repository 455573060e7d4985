#!/usr/bin/env python3
"""`tessera cluster up`: a process that cannot start, and the kv table's
split points (issue 3).

Goal: prove that
  1. a cluster whose quorums would hide a dead process is not reported as
     up: with the router's KV port taken by another program, the router
     exits at once; `cluster up` must exit non-zero, name the router, show
     the end of its log (the bind failure), and leave nothing running;
  2. `cluster up --kv-split KEY ...` creates the kv table split exactly at
     those keys, and keys on either side of a split point are served.
"""

import os
import socket
import unittest

import s3_harness as h


class ClusterUpTest(unittest.TestCase):
    def test_a_process_that_cannot_start_fails_cluster_up_clearly(self):
        cluster = h.S3Cluster("cli-up")
        self.addCleanup(cluster.down)
        with open(cluster.layout) as f:
            kv_port = int(f.read().split("kv_port: ")[1].split()[0])
        squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(squatter.close)
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", kv_port))
        squatter.listen(1)

        p = cluster.cli("cluster", "up", "--detach", timeout=180, check=False)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("router-1 is not running", p.stderr)
        self.assertIn("router-1 exited during start-up", p.stderr)
        self.assertIn(os.path.join(cluster.dir, "logs"), p.stderr)
        self.assertRegex(p.stderr, r"(?i)address already in use")
        # Every other process was stopped again.
        status = cluster.cli("cluster", "status", check=False)
        self.assertNotIn(" up ", status.stdout)

    def test_kv_table_split_at_given_keys(self):
        cluster = h.S3Cluster("cli-split")
        self.addCleanup(cluster.down)
        cluster.cli("cluster", "up", "--detach", "--kv-split", "g", "--kv-split", "p", timeout=180)
        kv = sorted((p["start"], p["end"]) for p in cluster.partitions() if p["table"] == "kv")
        self.assertEqual(kv, [(b"", b"g"), (b"g", b"p"), (b"p", b"")])
        for key in ("f~", "g", "o~", "p"):
            cluster.cli("kv", "put", "kv", key, "v-" + key)
            self.assertIn("v-" + key, cluster.cli("kv", "get", "kv", key).stdout)


if __name__ == "__main__":
    h.require_binary()
    unittest.main(verbosity=2)
