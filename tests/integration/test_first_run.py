#!/usr/bin/env python3
"""A new user's first run: commands from any directory, the recorded layout,
the foreground supervisor, `kv get` on a terminal, the install step.

Goal: prove that
  1. `cluster up --layout L --dir D` records a copy of L and its settings in
     D; from another working directory and without --layout, `kv put/get`,
     `cluster status`, `cluster plan` and `s3 buckets` find the cluster; an
     edit of L after `up` changes nothing; --layout naming the same layout
     elsewhere is accepted, a different one refused with a message naming
     the recorded copy and the way out; `up --partitions` other than the
     recorded value is refused; `up` names `s3 client-config`;
  2. `kv get` ends its output with a newline on a terminal, not with --raw,
     and prints the exact bytes into a pipe;
  3. `cluster down --dir D` without --layout stops the processes only L has
     (nodes the default layout lacks) and frees their ports;
  4. a foreground `cluster up` exits with one line once `cluster down` from
     another terminal stopped its processes; it still reports a killed
     process, and Ctrl-C still stops the cluster;
  5. `cmake --install` (what `make install` runs), with DESTDIR and a
     prefix, installs bin/tessera and the layouts, and the installed binary
     finds its default layout from any directory.
The tests run in this order on one cluster (the fourth stops it).
"""

import os
import pty
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import tty
import unittest

import s3_harness as h
from free_ports import _bindable, free_ports

CLUSTER = None
EXTRA_NODES = ("az1-n3", "az2-n3", "az3-n3")  # in L, not in cluster/local.textproto


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("first-run")
    unittest.addModuleCleanup(CLUSTER.down)
    ports = iter(free_ports(2 * len(EXTRA_NODES)))
    CLUSTER.extra_ports = {}
    with open(CLUSTER.layout, "a") as f:
        for name in EXTRA_NODES:
            peer, http = next(ports), next(ports)
            CLUSTER.extra_ports[name] = (peer, http)
            f.write(f'nodes {{ name: "{name}" az: "{name[:3]}" host: "127.0.0.1" '
                    f"peer_port: {peer} http_port: {http} }}\n")


def tessera(*args, cwd, timeout=120):
    """`tessera ARGS` run from `cwd`, with no --layout added."""
    return subprocess.run([h.TESSERA_BIN, *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, env=CLUSTER.plain_env())


def pid_files(c):
    pids = os.path.join(c.dir, "pids")
    return sorted(os.listdir(pids)) if os.path.isdir(pids) else []


class FirstRunTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER
        self.elsewhere = tempfile.mkdtemp(dir=self.c.root)  # a working directory without layouts

    def ok(self, *args, cwd=None):
        p = tessera(*args, cwd=cwd or self.elsewhere)
        self.assertEqual(p.returncode, 0, f"{args}: {p.stdout.decode()}{p.stderr.decode()}")
        return p.stdout.decode()

    def test_1_layout_is_recorded_and_found_from_any_directory(self):
        c = self.c
        up = self.ok("cluster", "up", "--detach", "--layout", c.layout, "--dir", c.dir,
                     "--partitions", "3", cwd="/")
        self.assertIn(f"layout: {c.dir}/layout.textproto (a copy of {c.layout})", up)
        self.assertIn("tessera s3 client-config aws|s3cmd|rclone|boto3", up)
        with open(c.layout) as f:
            original = f.read()
        with open(os.path.join(c.dir, "layout.textproto")) as f:
            self.assertEqual(f.read(), original)
        with open(os.path.join(c.dir, "cluster_up.textproto")) as f:
            self.assertIn("partitions: 3", f.read())
        # A later edit of L: one more node, which the running cluster must not see.
        with open(c.layout, "a") as f:
            f.write(f'nodes {{ name: "az1-n9" az: "az1" host: "127.0.0.1" '
                    f"peer_port: {free_ports(2)[0]} http_port: {free_ports(2)[1]} }}\n")
        try:
            self.ok("kv", "put", "--dir", c.dir, "kv", "first", "run")
            self.assertEqual(self.ok("kv", "get", "--dir", c.dir, "kv", "first"), "run")
            status = self.ok("cluster", "status", "--dir", c.dir)
            self.assertIn("az1-n3", status)
            self.assertNotIn("az1-n9", status)
            self.assertIn(f"layout: {c.dir}/layout.textproto (recorded by `cluster up`, a copy "
                          f"of {c.layout})", self.ok("cluster", "plan", "--dir", c.dir))
            self.ok("s3", "buckets", "--dir", c.dir)
            refused = tessera("cluster", "status", "--dir", c.dir, "--layout", c.layout,
                              cwd=self.elsewhere)
            self.assertEqual(refused.returncode, 2)
            message = refused.stderr.decode()
            self.assertIn(f"--layout {c.layout} differs from the layout the cluster in {c.dir} "
                          "was started with", message)
            self.assertIn("az1-n9", message)  # the difference
            self.assertIn("leave --layout out", message)
            self.assertEqual(tessera("kv", "get", "--dir", c.dir, "--layout", c.layout, "kv",
                                     "first", cwd=self.elsewhere).returncode, 2)
        finally:
            with open(c.layout, "w") as f:
                f.write(original)
        # The same layout under another name and spelling is the same layout.
        same = os.path.join(self.elsewhere, "same.textproto")
        with open(same, "w") as f:
            f.write("# the same processes, other text\n" + original.replace(" ", "  "))
        self.ok("cluster", "status", "--dir", c.dir, "--layout", same)
        other = tessera("cluster", "up", "--detach", "--dir", c.dir, "--partitions", "4",
                        cwd=self.elsewhere)
        self.assertEqual(other.returncode, 2)
        self.assertIn("--partitions 4 differs", other.stderr.decode())
        kv = [p for p in c.partitions() if p["table"] == "kv"]
        self.assertEqual(len(kv), 3)

    def on_terminal(self, *args):
        """(rc, output) of `tessera ARGS` with stdout on a raw-mode terminal."""
        master, slave = pty.openpty()
        tty.setraw(slave)
        p = subprocess.Popen([h.TESSERA_BIN, *args], cwd=self.elsewhere, stdout=slave,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             env=self.c.plain_env())
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        p.wait(timeout=60)
        return p.returncode, out

    def test_2_kv_get_ends_with_a_newline_on_a_terminal(self):
        c = self.c
        self.ok("kv", "put", "--dir", c.dir, "kv", "line", "value")
        self.assertEqual(self.on_terminal("kv", "get", "--dir", c.dir, "kv", "line"),
                         (0, b"value\n"))
        self.assertEqual(self.on_terminal("kv", "get", "--raw", "--dir", c.dir, "kv", "line"),
                         (0, b"value"))
        piped = tessera("kv", "get", "--dir", c.dir, "kv", "line", cwd=self.elsewhere)
        self.assertEqual(piped.stdout, b"value")
        self.ok("kv", "put", "--dir", c.dir, "kv", "nl", "ends\n")
        self.assertEqual(self.on_terminal("kv", "get", "--dir", c.dir, "kv", "nl"),
                         (0, b"ends\n"))

    def test_3_down_without_layout_stops_processes_only_the_layout_has(self):
        c = self.c
        extra_pids = {}
        for name in EXTRA_NODES:
            with open(os.path.join(c.dir, "pids", name + ".pid")) as f:
                extra_pids[name] = int(f.read())
        self.ok("cluster", "down", "--dir", c.dir)
        self.assertEqual(pid_files(c), [])
        for name, pid in extra_pids.items():
            self.assertTrue(h.wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 10),
                            f"{name} (pid {pid}) still runs")
            for port in c.extra_ports[name]:
                self.assertTrue(_bindable(port), f"{name}'s port {port} is still taken")

    def start_foreground(self):
        """`cluster up --dir D` in the foreground (no --layout); returns the
        process and a queue of its output lines once it is supervising."""
        p = subprocess.Popen([h.TESSERA_BIN, "cluster", "up", "--dir", self.c.dir],
                             cwd=self.elsewhere, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=self.c.plain_env())
        self.addCleanup(lambda: p.poll() is None and p.kill())
        lines = queue.Queue()

        def pump():
            for line in p.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        seen = []
        deadline = time.monotonic() + 180
        while not any(l.startswith("running in the foreground") for l in seen):
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            self.assertIsNotNone(line, "".join(seen))
            seen.append(line)
        return p, lines

    @staticmethod
    def rest(p, lines, timeout_s):
        p.wait(timeout=timeout_s)
        out = []
        while (line := lines.get(timeout=10)) is not None:
            out.append(line)
        return out

    def test_4_foreground_up_exits_after_cluster_down_and_on_ctrl_c(self):
        c = self.c
        p, lines = self.start_foreground()
        self.ok("cluster", "down", "--dir", c.dir)
        rest = self.rest(p, lines, 20)
        self.assertEqual(p.returncode, 0, rest)
        self.assertEqual([l for l in rest if l.strip()],
                         ["every process was stopped by `tessera cluster down`; exiting\n"])
        # A process killed (not stopped by `cluster down`) is still reported,
        # and Ctrl-C stays as it was: the foreground stops every process.
        p, lines = self.start_foreground()
        self.assertEqual(self.ok("kv", "get", "--dir", c.dir, "kv", "first"), "run")
        self.ok("cluster", "kill", "--dir", c.dir, "az3-n3")
        line = lines.get(timeout=20)
        self.assertTrue(line.startswith("az3-n3 exited (see "), line)
        p.send_signal(signal.SIGINT)
        rest = self.rest(p, lines, 60)
        self.assertEqual(p.returncode, 0, rest)
        self.assertIn("stopping\n", rest)
        self.assertIn("stopped router-1\n", rest)
        self.assertEqual(pid_files(c), [])

    def test_5_install_with_destdir_and_prefix(self):
        build = os.environ.get("TESSERA_BUILD_DIR")
        if not build:
            self.skipTest("TESSERA_BUILD_DIR is not set (ctest sets it)")
        stage = os.path.join(self.c.root, "stage")
        env = dict(self.c.plain_env(), DESTDIR=stage)
        p = subprocess.run(["cmake", "--install", build, "--prefix", "/opt/tessera-it", "--strip"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout)
        root = os.path.join(stage, "opt/tessera-it")
        binary = os.path.join(root, "bin/tessera")
        self.assertTrue(os.access(binary, os.X_OK), p.stdout)
        for layout in ("local", "large"):
            self.assertTrue(os.path.isfile(os.path.join(root, f"share/tessera/cluster/{layout}.textproto")))
        plan = subprocess.run([binary, "cluster", "plan", "--dir", os.path.join(self.c.root, "fresh")],
                              cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=self.c.plain_env(), timeout=60)
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertIn(f"layout: {root}/share/tessera/cluster/local.textproto\n", plan.stdout)
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
