"""The autoadmin on a live three-AZ cluster (docs/autoadmin.md): real
processes, kill -9, SIGSTOP, two autoadmin instances.

1. Permanent loss under load: a KV write loop and an S3 PUT loop run; a node
   is killed (SIGKILL) and its data directory deleted. Every group it held
   first tolerates one more failure through a log replica; every partition is
   back to three voters in three AZs, none on the lost node, within 60 s;
   every acknowledged KV write and S3 object reads back; the lost node's
   blob slots move to its AZ's other node, and within 60 s more every blob
   has its three copies there (`tessera s3 check` clean).
2. Short outage: a node paused for less than dead_after is not replaced.
3. Come-back: a node paused past dead_after is replaced; when it resumes,
   its stale replicas are dropped and no group keeps four voters, and its
   blob copies (of slots that moved off it) are handed off: none stray.
   Being empty, it then receives replicas again (spreading within its AZ).
4. Autoadmin failover: the active instance is killed in the middle of a
   replacement; the standby takes the lease (a higher epoch) and completes
   it.
5. Drain: every replica and blob slot leaves a drained node; stopping it
   then fails no client request; unknown or non-storage nodes are refused.
6. Two voters of every group lost at once: the KV API answers 503 (no
   quorum; a write that reached a replica may answer 504, outcome unknown)
   and the autoadmin changes no partition while they are gone; once they
   return, writes succeed again with nothing lost.
7. Two failures in sequence (a node in az1, replaced, then one in az2),
   under KV and S3 load: every acknowledged write reads back, each
   replacement stays in its AZ, and every blob has its three copies.
8. Gray failure: leaders are spread within one per node; a node whose
   synced writes are delayed by 100 ms (`tessera cluster slow-disk`) turns
   gray, leads nothing within a bound, and, still slow, has its replicas
   replaced in its AZ; with its disk fast again it is healthy and empty.
9. Add a node: `tessera cluster add-node` refuses a clashing name, an
   unknown AZ and a port in use (exit 2, nothing recorded); then a new
   node joins az2 under KV and S3 load, every process learns it, and the
   autoadmin spreads partition replicas and blob slots onto it until every
   running node of az2 holds within max(1, 10 %) of the AZ's mean replica
   count of each other, and every partition's leader leads at most max(1,
   10 % of the mean) more groups than its other voters; no KV or S3
   request fails, every
   acknowledged write reads back and `tessera s3 check` is clean.
9b. Peers' timeouts: a node cut off from every other storage node while
   the autoadmin still reaches it turns gray through its peers' timeouts
   and has its replicas replaced in its AZ; healed, it is healthy and
   holds no stale replica.
Stale epochs and idempotent steps: src/node/node_process_test.cc and
src/meta/partition_admin_test.cc.
"""
import http.client
import json
import os
import re
import shutil
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import s3_harness as h  # noqa: E402

DEAD_AFTER_S = 4
LEASE_S = 2
DEGRADED_FOR_S = 3
GRAY_REPLACE_AFTER_S = 6
AUTOADMIN = (f"dead_after_ms: {DEAD_AFTER_S * 1000} poll_interval_ms: 500 lease_ms: {LEASE_S * 1000} "
             f"gray_sync_p99_ms: 80 degraded_for_ms: {DEGRADED_FOR_S * 1000} "
             f"gray_replace_after_ms: {GRAY_REPLACE_AFTER_S * 1000} balance_leaders: true "
             # The tests' load is incidental: counts decide the balance here
             # (src/autoadmin/balance_planner_test.cc covers bytes and load).
             f"balance_load_floor: 10000000")
REPLACE_WITHIN_S = 60
AZ_OF = {f"{az}-n{n}": az for az in ("az1", "az2", "az3") for n in (1, 2)}
ADDED = "az2-n3"  # the node test 9 adds
AZ_OF[ADDED] = "az2"
# Blobs are repaired once a second old (the sweeper's age bound), orphans
# only after the production grace (1 h): s3 check then sees what the GC and
# the repairer did, not what the orphan sweeper cleaned up.
NODE_SETTINGS = "gc_interval_ms: 300 blob_sweep_interval_ms: 500 blob_min_age_s: 1"

CLUSTER = None


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("autoadmin", node_settings=NODE_SETTINGS, autoadmin_settings=AUTOADMIN)
    CLUSTER.up()


def tearDownModule():
    if CLUSTER is not None:
        CLUSTER.down()


def tolerant(parts, groups, avoid):
    """True when each of `groups` has three voters that answer, none on
    `avoid` and none a learner: it tolerates one more failure again (a log
    replica counts: it votes)."""
    by_group = {p["group"]: p for p in parts}
    for g in groups:
        p = by_group.get(g)
        if p is None or len(p["replicas"]) != 3 or p["changing"]:
            return False
        if any(r["learner"] or not r["reachable"] or r["name"] in avoid for r in p["replicas"]):
            return False
    return True


def three_voters_in_three_azs(parts, avoid=()):
    """True when every partition has exactly three reachable voters in three
    AZs, none on `avoid`, and no change is in progress."""
    if not parts:
        return False
    for p in parts:
        names = [r["name"] for r in p["replicas"]]
        if len(names) != 3 or any(r["learner"] or r["log"] or not r["reachable"]
                                  for r in p["replicas"]):
            return False
        if p["changing"] or set(names) & set(avoid):
            return False
        if len({AZ_OF[n] for n in names}) != 3:
            return False
    return True


def within_ten_percent(counts):
    """True when the counts (at least two) differ by at most max(1, 10 % of
    their mean)."""
    values = list(counts.values())
    if len(values) < 2:
        return True
    mean = sum(values) / len(values)
    return max(values) - min(values) <= max(1, int(0.1 * mean))


def balanced(parts, running, az):
    """Replicas per running node of `az` within_ten_percent, and every
    partition's leader leading at most max(1, 10 % of the mean) more groups
    than each of the partition's other voters (a transfer can only go to
    one of them), every partition at three voters in three AZs: a
    description of the counts when so, else None."""
    if not three_voters_in_three_azs(parts):
        return None
    replicas = {n: 0 for n in running if AZ_OF.get(n) == az}
    leaders = {n: 0 for n in running if n in AZ_OF}
    for p in parts:
        for r in p["replicas"]:
            if r["name"] in replicas:
                replicas[r["name"]] += 1
            if r["leader"] and r["name"] in leaders:
                leaders[r["name"]] += 1
    slack = max(1, int(0.1 * sum(leaders.values()) / max(1, len(leaders))))
    for p in parts:
        names = [r["name"] for r in p["replicas"] if r["name"] in leaders]
        led = [r["name"] for r in p["replicas"] if r["leader"] and r["name"] in leaders]
        if led and any(leaders[led[0]] > leaders[n] + slack for n in names):
            return None
    if within_ten_percent(replicas):
        return f"replicas in {az} {sorted(replicas.items())}, leaders {sorted(leaders.items())}"
    return None


class Load:
    """A loop of writes on a thread, from `with` entry to exit: write(i)
    returns (key, value) when the write was acknowledged, None otherwise."""

    def __init__(self):
        self.acked, self.failed = {}, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        i = 0
        while not self.stop.is_set():
            done = self.write(i)
            if done:
                self.acked[done[0]] = done[1]
            else:
                self.failed += 1
            i += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(60)


class KvLoad(Load):
    """PREFIX<i> = value-<i> through the router's HTTP KV API."""

    def __init__(self, cluster, token, prefix):
        super().__init__()
        self.cluster, self.token, self.prefix = cluster, token, prefix

    def request(self, method, key, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.cluster.router_http_port, timeout=10)
        try:
            conn.request(method, "/kv/kv/" + urllib.parse.quote(key, safe=""), body=body,
                         headers={"Authorization": "Bearer " + self.token})
            resp = conn.getresponse()
            return resp.status, resp.read()
        except OSError:
            return None, b""
        finally:
            conn.close()

    def write(self, i):
        key, value = f"{self.prefix}{i:06d}", f"value-{i}".encode()
        status, _ = self.request("PUT", key, value)
        return (key, value) if status is not None and 200 <= status < 300 else None


class S3Load(Load):
    """S3 PUTs with boto3, inline and blob-backed objects in turn."""

    def __init__(self, cluster, bucket):
        super().__init__()
        self.s3 = cluster.boto3_client()
        self.bucket = bucket

    def write(self, i):
        size = 1000 if i % 2 == 0 else 200_000  # inline, then one blob
        body = (f"object-{i}-".encode() * (size // 8 + 1))[:size]
        key = f"obj/{i:06d}"
        try:
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        except Exception:  # noqa: BLE001 - any failure: not acknowledged
            return None
        return key, body


class Autoadmin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = CLUSTER
        cls.token = cls.c.cli("kv", "token").stdout.strip()

    def parts(self):
        return self.c.partitions()

    def status(self):
        return self.c.cli("autoadmin", "status", check=False).stdout

    def wait_replaced(self, avoid, timeout_s=REPLACE_WITHIN_S):
        start = time.monotonic()
        parts = h.wait_until(lambda: (lambda p: p if three_voters_in_three_azs(p, avoid) else None)(
            self.parts()), timeout_s, 0.5)
        if not parts:
            self.fail(f"not back to three voters in three AZs within {timeout_s}s:\n"
                      + self.c.cli("cluster", "status", check=False).stdout + "\n" + self.status())
        return time.monotonic() - start, parts

    def hosted_by(self, name):
        return [p["group"] for p in self.parts() if name in {r["name"] for r in p["replicas"]}]

    def test_1_permanent_loss_under_load(self):
        c = self.c
        s3 = c.boto3_client()
        s3.create_bucket(Bucket="loss")
        self.assertTrue(three_voters_in_three_azs(self.parts()), self.parts())
        victim = "az2-n1"
        held = self.hosted_by(victim)
        self.assertTrue(held, "the victim hosts no partition")
        with KvLoad(c, self.token, "loss-") as kv, S3Load(c, "loss") as objects:
            time.sleep(3)
            c.cli("cluster", "kill", victim)
            shutil.rmtree(os.path.join(c.dir, "data", victim))
            killed = time.monotonic()
            # Log replicas first (docs/autoadmin.md, "Log replicas"): every
            # group the node held tolerates one more failure again before
            # its full replacement has caught up.
            log_seen, statuses = set(), []

            def tolerant_again():
                statuses.append(self.status())
                parts = self.parts()
                log_seen.update(p["group"] for p in parts if any(r["log"] for r in p["replicas"]))
                return tolerant(parts, held, {victim})
            self.assertTrue(h.wait_until(tolerant_again, REPLACE_WITHIN_S, 0.2), self.parts())
            tolerant_s = time.monotonic() - killed
            elapsed, parts = self.wait_replaced({victim})
            statuses.append(self.status())
            time.sleep(2)
        self.assertTrue(log_seen, "no group ever had a log replica")
        print(f"\n[{victim} lost: the {len(held)} groups it held tolerate one more failure "
              f"{tolerant_s:.1f}s after the kill ({len(log_seen)} through a log replica); "
              f"every partition back to three full voters in three AZs "
              f"{time.monotonic() - killed - 2:.1f}s after the kill (dead_after {DEAD_AFTER_S}s); "
              f"KV acked {len(kv.acked)} failed {kv.failed}; S3 acked {len(objects.acked)} "
              f"failed {objects.failed}]", file=sys.stderr)
        # The replacement stayed in the lost node's AZ.
        for p in parts:
            self.assertIn("az2-n2", [r["name"] for r in p["replicas"]], p)
        self.assertGreater(len(kv.acked), 50)
        self.assertGreater(len(objects.acked), 10)
        for key, value in kv.acked.items():
            status, body = kv.request("GET", key)
            self.assertEqual((status, body), (200, value), key)
        for key, body in objects.acked.items():
            got = s3.get_object(Bucket="loss", Key=key)["Body"].read()
            self.assertEqual(got, body, key)
        # Every action seen while waiting: the status keeps the last 100.
        out = "\n".join(statuses + [self.status()])
        self.assertRegex(out, r"active, epoch \d+")
        self.assertRegex(out, r"promote group=\d+ replica=\d+ -> ok")
        self.assertRegex(out, r"remove group=\d+ replica=3 -> ok")
        self.assertRegex(out, r"add_replica group=\d+ replica=\d+ -> ok \(log replica for dead voter 3\)")
        self.assertRegex(out, r"remove group=\d+ replica=\d+ -> ok \(voter \d+ is surplus \(a log replica\)\)")
        self.assertRegex(out, r"move_blob_slots .* -> ok \(\d+ blob slots off dead or draining nodes\)")
        checked = time.monotonic()
        report = c.wait_s3_check(self, REPLACE_WITHIN_S)
        self.assertEqual(report["unlisted_nodes"], [victim])
        repaired = c.metric("tessera_blob_repaired_total")
        print(f"[blobs: every copy back {time.monotonic() - checked:.1f}s after the partitions; "
              f"{report['referenced_blobs']} referenced, {repaired:.0f} copies repaired]", file=sys.stderr)
        self.assertGreater(repaired, 0)

    def test_2_short_outage_is_not_replaced(self):
        c = self.c
        before = {p["group"]: sorted(r["name"] for r in p["replicas"]) for p in self.parts()}
        c.cli("cluster", "stop", "az3-n1")
        time.sleep(DEAD_AFTER_S / 2)
        c.cli("cluster", "resume", "az3-n1")
        time.sleep(DEAD_AFTER_S)
        after = {p["group"]: sorted(r["name"] for r in p["replicas"]) for p in self.parts()}
        self.assertEqual(before, after)
        c.wait_converged(self)

    def test_3_come_back_after_replacement(self):
        c = self.c
        victim = "az1-n1"
        groups = self.hosted_by(victim)
        self.assertTrue(groups)
        with KvLoad(c, self.token, "back-") as kv:
            c.cli("cluster", "stop", victim)
            self.wait_replaced({victim})
            c.cli("cluster", "resume", victim)

            def stale_dropped():
                return three_voters_in_three_azs(self.parts()) and self.stale_on(victim) == 0
            self.assertTrue(h.wait_until(stale_dropped, 60, 0.5),
                            c.cli("cluster", "status", check=False).stdout + self.status())
        # Empty, it gets about half of its AZ's replicas back.
        self.wait_spread("az1-n1", "az1-n2")
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)
        self.assertRegex(self.status(), r"drop_stale group=\d+ replica=1 -> ok")
        # Its blob slots moved too: what it held is copied where missing and
        # then deleted there.
        c.wait_s3_check(self, REPLACE_WITHIN_S)
        self.assertGreater(c.metric("tessera_blob_handed_off_total", victim), 0)

    def active_instance(self):
        m = re.search(r"^autoadmin (\S+) \(\d+\): active, epoch (\d+)", self.status(), re.M)
        return (m.group(1), int(m.group(2))) if m else None

    def test_4_autoadmin_failover_mid_replacement(self):
        c = self.c
        active = h.wait_until(self.active_instance, 10, 0.3)
        self.assertIsNotNone(active, self.status())
        name, epoch = active
        victim = "az3-n1"
        self.assertTrue(self.hosted_by(victim))
        c.cli("cluster", "kill", victim)
        # Wait until a replacement is under way, then kill the active instance.
        self.assertTrue(h.wait_until(lambda: any(
            p["changing"] or any(r["learner"] for r in p["replicas"]) or len(p["replicas"]) > 3
            for p in self.parts()), 30, 0.2), self.status())
        c.cli("cluster", "kill", name)
        killed = time.monotonic()
        successor = h.wait_until(lambda: (lambda a: a if a and a[0] != name else None)(
            self.active_instance()), 20, 0.2)
        took = time.monotonic() - killed
        self.assertIsNotNone(successor, self.status())
        self.assertGreater(successor[1], epoch, "a new tenure has a higher epoch")
        elapsed, parts = self.wait_replaced({victim, "az2-n1"})
        print(f"\n[{name} killed mid-replacement: {successor[0]} active at epoch {successor[1]} "
              f"{took:.1f}s later (lease {LEASE_S}s); replacement done {elapsed:.1f}s after]",
              file=sys.stderr)
        for p in parts:
            self.assertIn("az3-n2", [r["name"] for r in p["replicas"]], p)

    def test_5_drain(self):
        """After test 3 (az1-n1 back, az1's replicas spread over az1-n1 and az1-n2)."""
        c = self.c
        for bad in ("nosuch-node", "meta-az1"):
            p = c.cli("cluster", "drain", bad, check=False)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("is not a storage node of the layout", p.stderr)
        # Draining az1-n2 moves its replicas to az1-n1.
        victim = "az1-n2"
        self.assertTrue(self.hosted_by(victim))
        with KvLoad(c, self.token, "drain-") as kv:
            started = time.monotonic()
            p = c.cli("cluster", "drain", victim, "--timeout", "120", timeout=180)
            took = time.monotonic() - started
            self.assertIn(f"{victim}: drained", p.stdout)
            self.assertFalse(self.hosted_by(victim))
            # /health is refreshed every second.
            self.assertTrue(h.wait_until(lambda: self.node_hosts(victim) == 0, 5, 0.2))
            # Nothing left on it: stopping it costs the clients nothing.
            c.cli("cluster", "stop", victim)
            failed_before, acked_before = kv.failed, len(kv.acked)
            time.sleep(3)
            failed_after, acked_after = kv.failed, len(kv.acked)
        c.cli("cluster", "resume", victim)
        print(f"\n[{victim} drained in {took:.1f}s; KV acked {len(kv.acked)} failed {kv.failed}; "
              f"while it was stopped: {acked_after - acked_before} acked, "
              f"{failed_after - failed_before} failed]", file=sys.stderr)
        self.assertGreater(acked_after, acked_before)
        self.assertEqual(failed_after, failed_before)
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)
        self.assertTrue(h.wait_until(
            lambda: re.search(rf"{victim} \(2, az1\): healthy, draining", self.status()), 10, 0.3),
            self.status())
        # Its blob slots left with it: az1-n1 holds every az1 copy, and
        # the drained node hands off what it still has.
        c.wait_s3_check(self, REPLACE_WITHIN_S)
        self.assertGreater(c.metric("tessera_blob_handed_off_total", victim), 0)
        out = c.cli("cluster", "drain", victim, "--undo").stdout
        self.assertIn("no longer drained", out)
        self.assertTrue(h.wait_until(
            lambda: not re.search(rf"{victim} \(2, az1\): .*draining", self.status()), 10, 0.3),
            self.status())

    def descriptors(self):
        """group -> (epoch-free) replica names of every partition."""
        return {p["group"]: sorted(r["name"] for r in p["replicas"]) for p in self.parts()}

    def test_6_two_voters_lost_at_once(self):
        """After test 5: az2-n2 and az3-n2 are voters of every group (their
        AZs' other nodes are gone); az1-n2, no longer drained, gets replicas
        back."""
        c = self.c
        self.wait_spread("az1-n1", "az1-n2")
        before = self.descriptors()
        self.assertTrue(all({"az2-n2", "az3-n2"} <= set(v) for v in before.values()), before)
        kv = KvLoad(c, self.token, "quorum-")
        self.assertEqual(kv.request("PUT", "quorum-before", b"v")[0], 200)
        c.cli("cluster", "stop", "az2-n2", "az3-n2")
        try:
            # No quorum: once the leader's lease has run out (until then a
            # lease read is still linearizable and may answer 200), a read
            # answers 503; a write is never acknowledged (503, or 504 when
            # it reached a replica and its outcome is unknown until the
            # voters return).
            self.assertTrue(h.wait_until(
                lambda: kv.request("GET", "quorum-before")[0] == 503, 10, 0.3),
                "reads still answered with two voters of three stopped")
            self.assertIn(kv.request("PUT", "quorum-lost", b"v")[0], (503, 504))
            # Well past dead_after: both are dead, and still nothing moves.
            time.sleep(2 * DEAD_AFTER_S)
            self.assertRegex(self.status(), r"az2-n2 \(\d+, az2\): dead")
            self.assertEqual(self.descriptors(), before)
            self.assertEqual(kv.request("GET", "quorum-before")[0], 503)
        finally:
            c.cli("cluster", "resume", "az2-n2", "az3-n2")
        ok = h.wait_until(lambda: kv.request("PUT", "quorum-after", b"after")[0] == 200, 30, 0.5)
        self.assertTrue(ok, "writes did not come back once the voters returned")
        self.assertEqual(kv.request("GET", "quorum-before"), (200, b"v"))
        self.assertEqual(kv.request("GET", "quorum-after"), (200, b"after"))
        self.wait_replaced(set())

    def test_7_two_failures_in_sequence(self):
        """After test 6: az2-n1 and az3-n1 (lost in tests 1 and 4) come back
        empty; then az1's voter is lost, then az2's."""
        c = self.c
        c.cli("cluster", "restart", "az2-n1", "az3-n1")
        self.assertTrue(h.wait_until(lambda: self.stale_on("az2-n1") == 0 and
                                     self.stale_on("az3-n1") == 0, 30, 0.5))
        s3 = c.boto3_client()
        s3.create_bucket(Bucket="twice")
        times = []
        with KvLoad(c, self.token, "twice-") as kv, S3Load(c, "twice") as objects:
            time.sleep(2)
            for victim, spare in (("az1-n1", "az1-n2"), ("az2-n2", "az2-n1")):
                acked = len(kv.acked)
                c.cli("cluster", "kill", victim)
                elapsed, parts = self.wait_replaced({victim})
                times.append(elapsed)
                for p in parts:
                    self.assertIn(spare, [r["name"] for r in p["replicas"]], p)
                self.assertGreater(len(kv.acked), acked, f"no write acknowledged after {victim} died")
            time.sleep(1)
        print(f"\n[two failures: az1-n1 replaced in {times[0]:.1f}s, then az2-n2 in {times[1]:.1f}s; "
              f"KV acked {len(kv.acked)} failed {kv.failed}; S3 acked {len(objects.acked)} "
              f"failed {objects.failed}]", file=sys.stderr)
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)
        for key, body in objects.acked.items():
            self.assertEqual(s3.get_object(Bucket="twice", Key=key)["Body"].read(), body, key)
        report = c.wait_s3_check(self, REPLACE_WITHIN_S)
        self.assertEqual(sorted(report["unlisted_nodes"]), ["az1-n1", "az2-n2"])

    def leaders(self):
        """node name -> groups it leads, for every node hosting a replica."""
        counts = {}
        for p in self.parts():
            for r in p["replicas"]:
                counts.setdefault(r["name"], 0)
                if r["leader"]:
                    counts[r["name"]] += 1
        return counts

    def test_8_gray_disk(self):
        """After test 7: az1-n2 and az2-n1 hold every group's az1 and az2
        voters; az3's are spread over az3-n1 and az3-n2. The victim is the
        az3 voter of the partition the write loop writes to, so that its
        disk sees synced writes."""
        c = self.c
        self.wait_spread("az3-n1", "az3-n2")
        key = b"gray-000000"
        part = next(p for p in self.parts() if p["table"] == "kv" and p["start"] <= key and
                    (not p["end"] or key < p["end"]))
        victim = next(r["name"] for r in part["replicas"] if AZ_OF[r["name"]] == "az3")
        spare = "az3-n1" if victim == "az3-n2" else "az3-n2"

        def leaders_spread():
            """Within one per node among each group's voters (the planner's
            rule), and the victim leads something."""
            parts, counts = self.parts(), self.leaders()
            for p in parts:
                lead = [r["name"] for r in p["replicas"] if r["leader"]]
                if len(lead) != 1 or any(counts[lead[0]] > counts[r["name"]] + 1
                                         for r in p["replicas"]):
                    return None
            return counts if counts.get(victim, 0) >= 1 else None
        counts = h.wait_until(leaders_spread, 30, 0.5)
        self.assertTrue(counts, f"leaders not spread within one per node: {self.leaders()}")
        with KvLoad(c, self.token, "gray-") as kv:
            time.sleep(1)
            c.cli("cluster", "slow-disk", victim, "--ms", "100")
            slowed = time.monotonic()
            moved = h.wait_until(lambda: self.leaders().get(victim, 1) == 0, 30, 0.3)
            led_nothing = time.monotonic() - slowed
            self.assertTrue(moved, f"{victim} still leads: {self.leaders()}\n{self.status()}")
            self.assertRegex(self.status(), rf"{victim} \(\d+, az3\): gray for \d+ ms "
                                            rf"\(synced write p99 \d+ ms")
            elapsed, parts = self.wait_replaced({victim}, GRAY_REPLACE_AFTER_S + REPLACE_WITHIN_S)
            replaced = time.monotonic() - slowed
            for p in parts:
                self.assertIn(spare, [r["name"] for r in p["replicas"]], p)
            c.cli("cluster", "slow-disk", victim, "--ms", "0")
            healed = h.wait_until(lambda: not re.search(
                rf"{victim} \(\d+, az3\): gray", self.status()), 30, 0.5)
            self.assertTrue(healed, self.status())
            self.assertEqual(self.stale_on(victim), 0)
        print(f"\n[{victim} slow disk (100 ms): leads nothing {led_nothing:.1f}s after, replaced "
              f"{replaced:.1f}s after (degraded_for {DEGRADED_FOR_S}s, gray_replace_after "
              f"{GRAY_REPLACE_AFTER_S}s); leaders before {counts}; KV acked {len(kv.acked)} "
              f"failed {kv.failed}]", file=sys.stderr)
        self.assertRegex(self.status(), r"transfer_leader group=\d+ replica=\d+ -> ok")
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)

    def http_port_of(self, name):
        """Node `name`'s HTTP port, from the layout or the added nodes."""
        return self.c.node_http_ports()[name]

    def test_9_add_node(self):
        c = self.c
        added_file = os.path.join(c.dir, "added_nodes.textproto")
        for args, why in ((["az1-n1", "--az", "az1"], "duplicate name az1-n1"),
                          ([ADDED, "--az", "az9"], "unknown AZ 'az9'"),
                          ([ADDED, "--az", "az2", "--peer-port", str(c.s3_port)],
                           f"port {c.s3_port} used twice")):
            p = c.cli("cluster", "add-node", *args, check=False)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(why, p.stderr)
            self.assertFalse(os.path.exists(added_file))
        s3 = c.boto3_client()
        s3.create_bucket(Bucket="grow")
        with KvLoad(c, self.token, "grow-") as kv, S3Load(c, "grow") as objects:
            time.sleep(2)
            started = time.monotonic()
            out = c.cli("cluster", "add-node", ADDED, "--az", "az2").stdout
            joined = time.monotonic() - started
            self.assertRegex(out, rf"added {ADDED} \(storage node 7, az2, ")
            # Adding it again with the same spec changes nothing.
            again = c.cli("cluster", "add-node", ADDED, "--az", "az2").stdout
            self.assertIn("already running", again)

            def spread():
                groups = self.node_groups(ADDED)
                return three_voters_in_three_azs(self.parts()) and groups is not None and \
                    len(groups) >= 2 and self.stale_on(ADDED) == 0
            self.assertTrue(h.wait_until(spread, REPLACE_WITHIN_S, 0.5),
                            c.cli("cluster", "status", check=False).stdout + self.status())
            spread_after = time.monotonic() - started
            balance = h.wait_until(lambda: balanced(self.parts(), set(c.running_nodes()), "az2"),
                                   REPLACE_WITHIN_S, 0.5)
            self.assertTrue(balance, c.cli("cluster", "status", check=False).stdout + self.status())
            balanced_after = time.monotonic() - started
            time.sleep(1)
        print(f"\n[{ADDED} added in {joined:.1f}s, hosts {len(self.node_groups(ADDED))} groups "
              f"{spread_after:.1f}s after, balanced {balanced_after:.1f}s after ({balance}); "
              f"KV acked {len(kv.acked)} failed {kv.failed}; S3 acked "
              f"{len(objects.acked)} failed {objects.failed}]", file=sys.stderr)
        self.assertEqual(kv.failed, 0)
        self.assertEqual(objects.failed, 0)
        self.assertIn(ADDED, c.cli("cluster", "status").stdout)
        self.assertRegex(self.status(), r"move_blob_slots .* -> ok \(\d+ blob slots spread")
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)
        for key, body in objects.acked.items():
            self.assertEqual(s3.get_object(Bucket="grow", Key=key)["Body"].read(), body, key)
        c.wait_s3_check(self, REPLACE_WITHIN_S)
        # The blob slots spread onto it 64 a round, after the partitions:
        # once they are spread, every blob still has its three copies where
        # the map in force says, the new node's slots included.
        time.sleep(10)
        c.wait_s3_check(self, REPLACE_WITHIN_S)
        print(f"[blob copies written to {ADDED}: "
              f"{c.metric('tessera_blob_puts_total', ADDED):.0f}]", file=sys.stderr)

    def test_9b_peers_time_out(self):
        """A node cut off from every other storage node (both ways), which
        the autoadmin still reaches: its peers' pings to it time out, so it
        turns gray (peer_timeout_percent) and its replicas are replaced in
        its AZ, before any lag bound (lag_for 60 s) would notice."""
        c = self.c
        # After test 7, az1-n1 and az2-n2 are down; az3's two nodes run.
        self.wait_spread("az3-n1", "az3-n2")
        victim = max(("az3-n1", "az3-n2"), key=lambda n: len(self.hosted_by(n)))
        spare = "az3-n2" if victim == "az3-n1" else "az3-n1"
        running = set(c.running_nodes())
        others = [n for n in AZ_OF if n != victim and n in running]
        with KvLoad(c, self.token, "peers-") as kv:
            time.sleep(1)
            for other in others:
                c.cli("cluster", "partition", victim, other)
            cut = time.monotonic()
            gray = h.wait_until(lambda: re.search(
                rf"{victim} \(\d+, az3\): gray for \d+ ms \(\d+ of \d+ peers saw >= 50 % of "
                rf"their calls to it time out", self.status()), 30, 0.3)
            self.assertTrue(gray, self.status())
            gray_s = time.monotonic() - cut
            elapsed, parts = self.wait_replaced({victim}, GRAY_REPLACE_AFTER_S + REPLACE_WITHIN_S)
            replaced_s = time.monotonic() - cut
            for p in parts:
                self.assertIn(spare, [r["name"] for r in p["replicas"]], p)
            c.cli("cluster", "heal", check=False)  # az1-n1 and az2-n2 are down (test 7)
            healed = h.wait_until(lambda: not re.search(
                rf"{victim} \(\d+, az3\): gray", self.status()) and self.stale_on(victim) == 0,
                DEGRADED_FOR_S * 10, 0.5)
            self.assertTrue(healed, self.status())
        print(f"\n[{victim} cut off from its peers: gray {gray_s:.1f}s after (degraded_for "
              f"{DEGRADED_FOR_S}s), replaced {replaced_s:.1f}s after (gray_replace_after "
              f"{GRAY_REPLACE_AFTER_S}s); KV acked {len(kv.acked)} failed {kv.failed}]",
              file=sys.stderr)
        for key, value in kv.acked.items():
            self.assertEqual(kv.request("GET", key), (200, value), key)

    def stale_on(self, name):
        """How many groups node `name` hosts that no partition names it in
        (stale replicas), -1 when it does not answer."""
        hosted = self.node_groups(name)
        if hosted is None:
            return -1
        named = {p["group"] for p in self.parts() if name in {r["name"] for r in p["replicas"]}}
        return len(hosted - named)

    def wait_spread(self, a, b, timeout_s=REPLACE_WITHIN_S):
        """Every partition settled at three voters in three AZs, and nodes
        `a` and `b` (one AZ) hosting within one group of each other."""
        def spread():
            ga, gb = self.node_groups(a), self.node_groups(b)
            return three_voters_in_three_azs(self.parts()) and ga is not None and \
                gb is not None and abs(len(ga) - len(gb)) <= 1
        if not h.wait_until(spread, timeout_s, 0.5):
            self.fail(f"replicas not spread over {a} and {b}:\n" +
                      self.c.cli("cluster", "status", check=False).stdout + self.status())

    def node_groups(self, name):
        """The groups node `name` hosts (its /health), None when it does not answer."""
        port = self.http_port_of(name)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/health")
            return {g["group"] for g in json.loads(conn.getresponse().read())["groups"]}
        except (OSError, ValueError, KeyError):
            return None
        finally:
            conn.close()

    def node_hosts(self, name):
        """How many groups node `name` hosts (its /health), -1 when it does not answer."""
        groups = self.node_groups(name)
        return -1 if groups is None else len(groups)


if __name__ == "__main__":
    unittest.main()
