#!/usr/bin/env python3
"""`tessera experiment run FILE --netns`: a short AZ-partition experiment
with every AZ in its own network namespace and the cut made in the kernel.

Goal: prove that
  1. the run passes (linearizability and availability checkers): exit 0
     and a PASS verdict;
  2. every process really ran in its AZ's namespace (`ip netns identify`);
  3. the shaping delays inter-AZ traffic only: a TCP connect from one AZ's
     namespace to another AZ takes >= 1 ms, inside one AZ it does not
     (netem, or on a kernel without it the queue shaper; checked when
     netns.log says one of them applied); the queue shaper, when it is the
     one, also drops the 0.2 % of packets asked for (its counters in
     netns.log);
  4. the partition dropped packets in the kernel: the tc drop counters of
     the cut, logged at the heal, are not zero;
  5. nothing is left behind: no namespace, no veth of the run, also after
     a run interrupted with Ctrl-C (SIGINT) while its cluster runs, and a
     stale namespace of a dead run is removed at the next start;
  6. without root the command exits 2 with a message.
Skips (with a message) when not run as root or without `ip`.
"""

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from experiment_harness import REPO, TESSERA_BIN, run  # noqa: E402

IP = shutil.which("ip") or "/usr/sbin/ip"

EXPERIMENT = """
name: "netns-az-partition"
description: "The AZ of the hot keys' leader cut off in the kernel for 6 s."
layout: "%s"
duration_s: 15
recovery_s: 30
workloads {
  kv_register {
    clients: 4 rate_per_s: 100 keys: 4
    strong_read_percent: 40 eventual_read_percent: 10 cas_percent: 20
    timeout_ms: 1000
  }
}
checkers { linearizable {} }
checkers { availability { min_ok_share_outside_faults: 0.8 } }
nemesis {
  fixed { steps { kind: FAULT_PARTITION_AZ target { kv_leader: true } at_s: 4 duration_s: 6 } }
}
netns { delay_ms: 1 jitter_ms: 0.2 loss_percent: 0.2 }
""" % os.path.join(REPO, "cluster", "local.textproto")

# Measures the TCP connect time (one round trip) to HOST:PORT, in ms: the
# median of 15 tries, or -1 when no try connected.
CONNECT_PROBE = """
import socket, statistics, sys, time
times = []
for _ in range(15):
    s = socket.socket()
    s.settimeout(2)
    t0 = time.perf_counter()
    try:
        s.connect((sys.argv[1], int(sys.argv[2])))
        times.append((time.perf_counter() - t0) * 1000)
    except OSError:
        pass
    s.close()
print(statistics.median(times) if times else -1)
"""


def namespaces():
    out = subprocess.run([IP, "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def run_leftovers(pid):
    """Namespaces and root interfaces of the run of process PID."""
    left = [ns for ns in namespaces() if ns.startswith("tessera-%d-" % pid)]
    if os.path.exists("/sys/class/net/tsn%d" % pid):
        left.append("tsn%d" % pid)
    return left


def remove_leftovers(pid):
    for name in run_leftovers(pid):
        if name.startswith("tsn"):
            subprocess.run([IP, "link", "del", name])
        else:
            subprocess.run([IP, "netns", "del", name])


def layout_processes(path):
    """name -> (az, host, first port) of the mapped layout a run wrote."""
    processes = {}
    with open(path) as f:
        text = f.read()
    for m in re.finditer(r'name: "([^"]+)"\s+az: "([^"]+)"\s+host: "([^"]+)"\s+\w+: (\d+)', text):
        processes[m.group(1)] = (m.group(2), m.group(3), int(m.group(4)))
    return processes


def wait_until(predicate, timeout_s, what):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists(IP),
                     "needs root and iproute2's ip: --netns creates network namespaces")
class NetnsExperimentTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="tessera-experiment-netns-test-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.file = os.path.join(self.root, "netns-az-partition.textproto")
        with open(self.file, "w") as f:
            f.write(EXPERIMENT)

    def start(self, out):
        p = subprocess.Popen([TESSERA_BIN, "experiment", "run", self.file, "--out", out,
                              "--seed", "7", "--netns"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace")

        def stop():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
            remove_leftovers(p.pid)
        self.addCleanup(stop)
        return p

    def assert_running(self, p, why=""):
        if p.poll() is not None:  # communicate() waits: only once it ended
            self.fail("the run ended early %s: %s" % (why, "".join(p.communicate())))

    def wait_for_cluster(self, p, out):
        """Waits until every process of the run has a pid file."""
        layout = os.path.join(out, "layout.textproto")
        wait_until(lambda: os.path.exists(layout) or p.poll() is not None, 30, "the layout")
        self.assert_running(p)
        # The run writes the layout before it launches any process.
        names = layout_processes(layout)
        wait_until(lambda: len(layout_processes(layout)) == len(names) > 0, 5, "the whole layout")
        pids = os.path.join(out, "cluster", "pids")
        missing = lambda: [n for n in names if not os.path.exists(os.path.join(pids, n + ".pid"))]
        wait_until(lambda: not missing() or p.poll() is not None, 30, "every process launched")
        self.assert_running(p, "%s not launched" % missing())
        return names

    def test_partition_in_the_kernel_with_delay_between_azs(self):
        # A stale namespace of a run whose process is gone: removed at start.
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = "tessera-%d-az1" % dead.pid
        subprocess.run([IP, "netns", "add", stale], check=True)
        self.addCleanup(subprocess.run, [IP, "netns", "del", stale], stderr=subprocess.DEVNULL)

        out = os.path.join(self.root, "result")
        p = self.start(out)
        processes = self.wait_for_cluster(p, out)
        self.assertNotIn(stale, namespaces())

        # 2. Each process in its AZ's namespace.
        for name, (az, _, _) in processes.items():
            with open(os.path.join(out, "cluster", "pids", name + ".pid")) as f:
                pid = f.read().strip()
            ns = subprocess.run([IP, "netns", "identify", pid], stdout=subprocess.PIPE,
                                text=True).stdout.strip()
            self.assertEqual(ns, "tessera-%d-%s" % (p.pid, az), name)

        # 3. The round trip between AZs (az1 -> az2's node) and inside az1.
        with open(os.path.join(out, "netns.log")) as f:
            shaping = f.read()
        shaping_applied = "applied=yes" in shaping
        queue_shaper = "by=queue applied=yes" in shaping
        def connect_ms(from_az, to_process):
            _, host, port = processes[to_process]
            probe = [IP, "netns", "exec", "tessera-%d-%s" % (p.pid, from_az), sys.executable,
                     "-c", CONNECT_PROBE, host, str(port)]
            result = subprocess.run(probe, stdout=subprocess.PIPE, text=True)
            self.assertEqual(result.returncode, 0, "the probe in %s failed" % from_az)
            return float(result.stdout)

        wait_until(lambda: connect_ms("az1", "az1-n2") >= 0, 30, "az1-n2 listening")
        inside = connect_ms("az1", "az1-n2")
        # The cut may already isolate one AZ: the pairs that connect count.
        between = [connect_ms(a, b) for a, b in
                   [("az1", "az2-n1"), ("az2", "az3-n1"), ("az3", "az1-n1")]]
        print("connect round trip: inside az1 %.3f ms, between AZs %s ms" % (inside, between))
        self.assertGreaterEqual(inside, 0)
        self.assertTrue(any(t >= 0 for t in between), between)
        if shaping_applied:
            self.assertTrue(all(t >= 1.0 for t in between if t >= 0), between)
            self.assertLess(inside, 1.0)
        else:
            print("SKIPPED the delay check: neither netem nor the queue shaper applied (netns.log)")

        stdout, stderr = p.communicate(timeout=120)
        report = "rc %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, stdout, stderr)
        print(stdout)
        # 1. The verdict.
        self.assertEqual(p.returncode, 0, report)
        self.assertTrue(stdout.strip().splitlines()[-1].startswith(
            "PASS netns-az-partition seed 7"), report)
        # 4. Packets dropped in the kernel while the AZ was cut off.
        with open(os.path.join(out, "netns.log")) as f:
            log = f.read()
        dropped = [int(n) for n in re.findall(r"netns cleared from=\S+ dropped=(\d+)", log)]
        self.assertTrue(dropped and sum(dropped) > 0, log)
        # 3. The queue shaper's counters, logged at teardown.
        if queue_shaper:
            m = re.search(r"netns shaper delayed=(\d+) lost=(\d+) overflow=(\d+)", log)
            self.assertIsNotNone(m, log)
            delayed, lost = int(m.group(1)), int(m.group(2))
            print("queue shaper: %d packets delayed, %d lost" % (delayed, lost))
            self.assertGreater(delayed, 1000, log)
            self.assertGreater(lost, 0, log)
            self.assertLess(lost, delayed / 100, log)
        # 5. Nothing left.
        self.assertIn("netns teardown ok", log)
        self.assertEqual(run_leftovers(p.pid), [])

    def test_interrupted_run_leaves_nothing(self):
        out = os.path.join(self.root, "interrupted")
        p = self.start(out)
        self.wait_for_cluster(p, out)
        self.assertTrue(run_leftovers(p.pid))
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=90)
        self.assertEqual(run_leftovers(p.pid), [])
        with open(os.path.join(out, "netns.log")) as f:
            self.assertIn("netns teardown ok", f.read())

    def test_without_root_exits_2(self):
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            self.skipTest("setpriv (util-linux) is not installed")
        os.chmod(self.root, 0o755)
        os.chmod(self.file, 0o644)
        p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                            TESSERA_BIN, "experiment", "run", self.file, "--netns"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30,
                           cwd="/")
        if "Permission denied" in p.stderr and "needs root" not in p.stderr:
            self.skipTest("the tessera binary or the file is not readable by nobody: " + p.stderr)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--netns needs root", p.stderr)


if __name__ == "__main__":
    unittest.main()
