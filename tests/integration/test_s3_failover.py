#!/usr/bin/env python3
"""S3 under a storage-node crash: kill -9 while `aws s3 sync` runs.

Goal: prove that when the storage node leading the bucket's `_s3`
partition is killed (SIGKILL, `tessera cluster kill`) in the middle of an
`aws s3 sync` of a few hundred files (inline-sized and blob-sized, up to
7 MiB, single-part), the sync completes (re-run like a user would, at most
3 runs in all, only if a run reports failures), every object then reads
back byte-identical while the node is down, and still does after the node
is restarted and has caught up (reads that land on its copies of blobs it
missed must fall back to another replica). Then `tessera s3 check` must
pass with the orphan sweeper's production grace (S3Cluster.wait_s3_check):
the repairer restores the copies the node missed and no blob file is left
that the GC should have removed.
One cluster for the whole file.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

import s3_harness as h
from test_kv_cluster import not_running

CLUSTER = None
BUCKET = "failover"
FILES = 300
SYNC_RUNS_MAX = 3
S3_CHECK_TIMEOUT_S = 90
# The GC and the repairer every few hundred ms, the orphan grace production's.
NODE_SETTINGS = "gc_interval_ms: 300 blob_sweep_interval_ms: 500 blob_min_age_s: 1"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-failover", node_settings=NODE_SETTINGS)
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def tree(root):
    out = {}
    for d, _, files in os.walk(root):
        for name in files:
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


class KillNodeDuringSyncTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER
        self.tmp = tempfile.mkdtemp(dir=CLUSTER.root)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        # Leave every process running for the next test, whatever happened.
        for name in not_running(self.c.cli("cluster", "status", "--json", check=False).stdout):
            self.c.cli("cluster", "restart", name, check=False)

    def bucket_leader(self):
        return self.c.bucket_leader(self, BUCKET)

    def wait_converged(self, timeout_s=60):
        self.c.wait_converged(self, timeout_s)

    def read_back(self, files, label):
        dst = os.path.join(self.tmp, label)
        self.c.aws("s3", "sync", "--only-show-errors", f"s3://{BUCKET}/tree", dst, timeout=600)
        got = tree(dst)
        self.assertEqual(sorted(got), sorted(files), label)
        bad = [k for k in files if got[k] != files[k]]
        self.assertEqual(bad, [], f"{label}: objects differ")

    def test_kill_leader_node_during_sync(self):
        c = self.c
        s3 = c.boto3_client()
        s3.create_bucket(Bucket=BUCKET)
        rnd = random.Random(FILES)
        files = {}
        for i in range(FILES):
            if i % 100 == 99:
                n = rnd.randrange(3 << 20, 7 << 20)  # a few multi-MiB blobs
            elif i % 3 == 0:
                n = rnd.randrange(20 << 10, 400 << 10)  # blob store
            else:
                # Inline in the metadata record. At least 1 byte: an empty
                # PUT stalls the aws CLI for 60 s over HTTP (see
                # test_s3_clients.py test_empty_put_keeps_the_connection_usable).
                n = rnd.randrange(1, 16 << 10)
            files[f"d{i % 7}/f{i:04d}.bin"] = rnd.randbytes(n)
        src = os.path.join(self.tmp, "src")
        for rel, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "wb") as f:
                f.write(data)

        victim = self.bucket_leader()
        cmd = ["aws", "--endpoint-url", c.http_endpoint, "s3", "sync", "--only-show-errors", src,
               f"s3://{BUCKET}/tree"]
        log = open(os.path.join(self.tmp, "sync-1.log"), "w+b")
        self.addCleanup(log.close)
        sync = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=c.client_env())
        try:
            def uploaded():
                return s3.list_objects_v2(Bucket=BUCKET, MaxKeys=1000).get("KeyCount", 0)
            self.assertTrue(h.wait_until(lambda: uploaded() >= 30 or sync.poll() is not None, 120),
                            "the sync did not start")
            self.assertIsNone(sync.poll(), "the sync finished before the kill: make it longer")
            at_kill = uploaded()
            c.cli("cluster", "kill", victim)
            rc = sync.wait(timeout=600)
        finally:
            if sync.poll() is None:
                sync.kill()
        log.seek(0)
        outputs = [log.read().decode("utf-8", "replace")]
        runs = 1
        while rc != 0 and runs < SYNC_RUNS_MAX:
            runs += 1
            rc, out, err = c.aws(*cmd[3:], check=False, timeout=600)
            outputs.append(out + err)
        print(f"\n[{victim} killed at {at_kill}/{FILES} objects; sync runs: {runs}; "
              f"rc {rc}; first run said: {outputs[0][-300:]!r}]", file=sys.stderr)
        self.assertEqual(rc, 0, f"sync failed {runs} times:\n" + "\n---\n".join(
            o[-2000:] for o in outputs) + "\nrouter log:\n" + c.log_tail())
        self.assertLess(at_kill, FILES)

        # Every object reads back while the node is down ...
        self.read_back(files, "node-down")
        # ... and after it restarted and caught up.
        c.cli("cluster", "restart", victim)
        self.wait_converged()
        self.read_back(files, "node-back")
        # The cluster keeps taking writes after the restart.
        s3.put_object(Bucket=BUCKET, Key="after-restart", Body=b"ok")
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="after-restart")["Body"].read(), b"ok")
        c.wait_s3_check(self, S3_CHECK_TIMEOUT_S)


if __name__ == "__main__":
    unittest.main(verbosity=2)
