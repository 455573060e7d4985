#!/usr/bin/env python3
"""`tessera experiment`: a failure-injection experiment from the catalogue
run end to end on a real cluster, and bad experiment files refused.

Goal: prove that
  1. `experiment run experiments/az-partition.textproto` (the AZ of the
     hot keys' leader cut off for 15 s under KV register load) starts its own cluster, passes every
     checker (exit 0, one-line PASS verdict), writes history.jsonl (invoke
     and completion lines, unknown outcomes as info), faults.jsonl (the
     partition's start and end, the heal) and verdict.json, stops the
     cluster it started, writes report.html, and `experiment report DIR`
     prints the same verdict and draws the report again;
  2. the same file and seed print the same schedule;
  3. an invalid experiment file exits 2 with a message naming the file and
     the field, before any cluster starts; `experiment list` shows the
     catalogue.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from experiment_harness import CATALOGUE, REPO, read_jsonl, run  # noqa: E402


class ExperimentTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="tessera-experiment-test-")
        self.addCleanup(shutil.rmtree, self.root, True)

    def test_az_partition_experiment_passes_and_writes_its_results(self):
        out = os.path.join(self.root, "result")
        p = run("experiment", "run", os.path.join(CATALOGUE, "az-partition.textproto"),
                "--out", out, "--seed", "7", "--duration", "35", timeout=400)
        report = f"rc {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        self.assertEqual(p.returncode, 0, report)
        print(p.stdout)  # the measured figures, for the log of the test run
        last = p.stdout.strip().splitlines()[-1]
        self.assertTrue(last.startswith("PASS az-partition seed 7"), report)
        self.assertIn("fault partition-az kv-leader [8 s, 23 s)", p.stdout)
        self.assertRegex(p.stdout, r"\[\s*\d+/35 s\]\s+\d+ ops/s .*fault: partition-az az[123]")

        history = read_jsonl(os.path.join(out, "history.jsonl"))
        types = {r["type"] for r in history}
        self.assertIn("invoke", types)
        self.assertIn("ok", types)
        self.assertTrue(types <= {"invoke", "ok", "fail", "info"}, types)
        ops = {r["op"] for r in history}
        self.assertEqual(ops, {"read", "write", "cas"}, ops)
        self.assertEqual({r.get("consistency") for r in history if r["op"] == "read"},
                         {"strong", "eventual"})
        invokes = sum(1 for r in history if r["type"] == "invoke")
        self.assertEqual(invokes * 2, len(history))
        self.assertGreater(invokes, 1000)

        faults = read_jsonl(os.path.join(out, "faults.jsonl"))
        self.assertEqual([f["event"] for f in faults], ["start", "end", "heal"], faults)
        self.assertEqual(faults[0]["kind"], "partition-az")
        az = faults[0]["targets"][0]  # the AZ of the hot keys' leader
        self.assertIn(az, ("az1", "az2", "az3"))
        self.assertEqual(faults[1]["targets"], [az])
        self.assertFalse(any(f.get("error") for f in faults), faults)

        with open(os.path.join(out, "verdict.json")) as f:
            verdict = json.load(f)
        self.assertTrue(verdict["passed"], verdict)
        self.assertEqual([c["name"] for c in verdict["checkers"]], ["linearizable", "availability"])
        self.assertTrue(all(c["passed"] for c in verdict["checkers"]), verdict)
        labels = [w["label"] for w in verdict["windows"]]
        self.assertTrue(labels[0].startswith("partition-az " + az), labels)
        self.assertEqual(labels[-1], "outside faults")

        # The cluster it started is stopped: no pid file names a live process.
        pids = os.path.join(out, "cluster", "pids")
        for name in os.listdir(pids) if os.path.isdir(pids) else []:
            with open(os.path.join(pids, name)) as f:
                pid = int(f.read().strip() or 0)
            self.assertFalse(pid and os.path.exists(f"/proc/{pid}"), f"{name} still runs")

        # The run wrote report.html (test_experiment_report.py renders one);
        # `report` prints the same verdict and draws the page again.
        page = os.path.join(out, "report.html")
        self.assertIn("report: " + page, p.stdout)
        with open(page) as f:
            self.assertIn(last.split(";")[0], f.read())
        r = run("experiment", "report", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(last, r.stdout.strip().splitlines())
        self.assertIn("report: " + page, r.stdout)

    def test_same_seed_same_schedule(self):
        def schedule(seed):
            # A schedule is printed before anything starts; a bad --out stops the run there.
            bad_out = os.path.join(self.root, "file")
            open(bad_out, "w").close()
            p = run("experiment", "run", os.path.join(CATALOGUE, "slow-disk.textproto"),
                    "--seed", str(seed), "--out", bad_out)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            return [l for l in p.stdout.splitlines() if l.strip().startswith("fault ")]
        self.assertEqual(schedule(11), schedule(11))
        self.assertEqual(len(schedule(11)), 2)

    def test_invalid_experiment_file_exits_2_with_a_message(self):
        bad = os.path.join(self.root, "bad.textproto")
        with open(bad, "w") as f:
            f.write(f'name: "bad" layout: "{REPO}/cluster/local.textproto" duration_s: 10\n'
                    'workloads { kv_register { clients: 2 rate_per_s: 10 keys: 2 } }\n'
                    'checkers { linearizable {} }\n'
                    'nemesis { fixed { steps { kind: FAULT_KILL target { process: "az7-n1" } '
                    'at_s: 1 duration_s: 2 } } }\n')
        p = run("experiment", "run", bad, "--out", os.path.join(self.root, "never"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(bad, p.stderr)
        self.assertIn("nemesis.fixed.steps[0].target.process 'az7-n1'", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.root, "never")))

        with open(bad, "w") as f:
            f.write("name: \"bad\"\nduration_s: soon\n")
        p = run("experiment", "run", bad)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("line 2", p.stderr)

        p = run("experiment", "run", os.path.join(self.root, "absent.textproto"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("no such file", p.stderr)

        p = run("experiment", "run", os.path.join(CATALOGUE, "az-partition.textproto"),
                "--seed", "abc")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--seed", p.stderr)

        p = run("experiment", "report", self.root)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("verdict.json", p.stderr)

    def test_list_shows_the_catalogue(self):
        p = run("experiment", "list", "--catalogue", CATALOGUE)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for name in ("az-partition", "leader-kill", "slow-disk"):
            self.assertIn(name, p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
