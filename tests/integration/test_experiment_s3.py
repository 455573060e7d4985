#!/usr/bin/env python3
"""`tessera experiment run experiments/s3-leader-kill.textproto`: the S3 object
workload under the kill of the node leading its objects' metadata
partition, end to end on a real cluster.

Goal: prove that
  1. the experiment starts its own cluster, runs SigV4-signed PUT (single
     and multipart), GET, HEAD, DELETE and ListObjectsV2 through the router's S3 port while the
     leader of the `_s3` partition holding the objects is killed and
     restarted, and passes the s3 checker
     (objects linearizable, every body byte verified, listings complete)
     and the availability checker: exit 0 and a one-line PASS verdict;
  2. history.jsonl records every operation kind with its outcome, GETs
     that found objects above the 16 KiB inline threshold (blob store) and
     below it, listings with keys, and the final reads after healing;
  3. faults.jsonl has the kill's start and end and the heal, and the
     cluster it started is stopped.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from experiment_harness import read_jsonl, run_catalogue  # noqa: E402


class S3ExperimentTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="tessera-experiment-s3-test-")
        self.addCleanup(shutil.rmtree, self.root, True)

    def test_s3_node_kill_experiment_passes(self):
        out = os.path.join(self.root, "result")
        p = run_catalogue("s3-leader-kill", out)
        report = f"rc {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        self.assertEqual(p.returncode, 0, report)
        print(p.stdout)  # the measured figures, for the log of the test run
        last = p.stdout.strip().splitlines()[-1]
        self.assertTrue(last.startswith("PASS s3-leader-kill seed 7"), report)
        self.assertIn("fault kill kv-leader [6 s, 14 s)", p.stdout)
        self.assertRegex(p.stdout, r"fault: kill az[123]-n[12]")

        history = read_jsonl(os.path.join(out, "history.jsonl"))
        done = [r for r in history if r["type"] != "invoke"]
        self.assertEqual(len(done) * 2, len(history))
        self.assertEqual({r["op"] for r in done},
                         {"put", "multipart-put", "get", "head", "delete", "list"})
        ok = [r for r in done if r["type"] == "ok"]
        found = [int(r["bytes"]) for r in ok if r["op"] == "get" and r["found"]]
        self.assertTrue(any(b > 16384 for b in found), "no GET of a blob-store object")
        self.assertTrue(any(b <= 16384 for b in found), "no GET of an inline object")
        self.assertTrue(any(r["listed"] for r in ok if r["op"] == "list"), "no listing with keys")
        self.assertFalse(any(r["anomaly"] for r in ok), "a body did not verify")
        final = [r for r in done if r["after_heal"]]
        self.assertEqual({r["op"] for r in final}, {"get", "list"}, final[:3])

        with open(os.path.join(out, "verdict.json")) as f:
            verdict = json.load(f)
        self.assertTrue(verdict["passed"], verdict)
        self.assertEqual(verdict.get("notes", []), [])  # the bucket's leader was found
        # s3-blobs: `tessera s3 check` after healing, added to every S3 run.
        self.assertEqual([c["name"] for c in verdict["checkers"]], ["s3", "availability", "s3-blobs"])

        faults = read_jsonl(os.path.join(out, "faults.jsonl"))
        self.assertEqual([f["event"] for f in faults], ["start", "end", "heal"], faults)
        self.assertEqual(faults[0]["kind"], "kill")
        self.assertRegex(faults[0]["targets"][0], r"^az[123]-n[12]$")
        self.assertFalse(any(f.get("error") for f in faults), faults)

        pids = os.path.join(out, "cluster", "pids")
        for name in os.listdir(pids) if os.path.isdir(pids) else []:
            with open(os.path.join(pids, name)) as f:
                pid = int(f.read().strip() or 0)
            self.assertFalse(pid and os.path.exists(f"/proc/{pid}"), f"{name} still runs")


if __name__ == "__main__":
    unittest.main(verbosity=2)
