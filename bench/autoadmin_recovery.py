#!/usr/bin/env python3
"""How long a partition stays one failure from losing its quorum after a
node is lost for good, and what its clients see meanwhile.

Each round starts a fresh local cluster (6 nodes in 3 AZs, 3 meta replicas,
a router, two autoadmin instances with the default dead_after of 10 s),
loads --mib MiB of 64 KiB values into the kv partition holding keys "A...",
then runs a probe client that writes one small key of that partition every
20 ms. After --steady-s seconds it kills -9 a follower of that partition and
deletes its data directory, and waits until the partition is back to three
full voters in three AZs. Rounds alternate between the autoadmin's default
(log replicas first) and `log_replicas: false` (--log-replicas both), so the
two are interleaved on the same machine. Prints one JSON line per round and
a summary per mode:

  tolerant_s       kill -> every group the node held has three voters that
                   answer again, a log replica counting (it votes): the
                   group tolerates one more failure
  recovered_s      kill -> three healthy full voters in three AZs again,
                   the partition and every other group the node held
  after_dead_s     the same, less dead_after: the autoadmin's own time
  s_per_gib        after_dead_s per GiB of the loaded partition
  p99_steady_ms    the probe's write p99 before the kill
  p99_during_ms    its write p99 from dead_after to recovery
  p99_ratio        during / steady
  p99_neighbour_ms the probe's write p99 while, before the kill, a plain
                   process writes --mib MiB to the same disk (8 MiB writes,
                   each fsynced): what the new replica's writes cost the
                   probe on a machine where every node shares one disk
                   and two cores (the control for p99_during_ms)

  bench/autoadmin_recovery.py --tessera build/release/src/cli/tessera \
      [--rounds 3] [--mib 256] [--log-replicas both|on|off]
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))

VALUE_BYTES = 64 << 10
DEAD_AFTER_S = 10  # the default of AutoadminSettings.dead_after_ms
AZ_OF = {f"{az}-n{n}": az for az in ("az1", "az2", "az3") for n in (1, 2)}


def p99(values):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


class Kv:
    def __init__(self, port, token):
        self.port, self.token = port, token
        self.conn = None

    def put(self, key, value):
        for _ in range(5):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.conn.request("PUT", "/kv/kv/" + key, value,
                                  {"Authorization": "Bearer " + self.token,
                                   "Content-Type": "application/octet-stream"})
                r = self.conn.getresponse()
                r.read()
                if 200 <= r.status < 300:
                    return True
            except (OSError, http.client.HTTPException):
                self.conn = None
        return False


def load(port, token, mib, threads=8, filler=0):
    """--mib MiB of 64 KiB values, then `filler` small overwrites of one key
    of the same partition: past the compaction trigger, the group's log is
    compacted and holds far less than its state."""
    count = mib * (1 << 20) // VALUE_BYTES
    value = os.urandom(VALUE_BYTES)
    failed = []

    def worker(first):
        kv = Kv(port, token)
        for i in range(first, count, threads):
            if not kv.put(f"A{i:08d}", value):
                failed.append(i)
        for i in range(first, filler, threads):
            if not kv.put(f"A-filler-{first}", b"f%d" % i):
                failed.append(-i)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if failed:
        raise SystemExit(f"{len(failed)} values could not be loaded")


def write_neighbour(path, mib):
    """`mib` MiB to `path` in fsynced 8 MiB writes, then removed."""
    chunk = os.urandom(8 << 20)
    with open(path, "wb") as f:
        for _ in range(max(1, mib // 8)):
            f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
    os.remove(path)


def healthy(part, avoid):
    names = [r["name"] for r in part["replicas"]]
    return (len(names) == 3 and not part["changing"] and avoid not in names
            and all(r["reachable"] and not r["learner"] and not r["log"] for r in part["replicas"])
            and len({AZ_OF[n] for n in names}) == 3)


def tolerant(part, avoid):
    """Survives one more failure: at least three voters, the lost node not
    among them, all answering (a log replica counts; a learner being added
    next to them, e.g. the full replacement of the log replica, changes
    nothing)."""
    voters = [r for r in part["replicas"] if not r["learner"]]
    return (len(voters) >= 3 and avoid not in {r["name"] for r in voters}
            and all(r["reachable"] for r in voters))


def one_round(h, args, log_replicas):
    cluster = h.S3Cluster("aa-bench",
                          autoadmin_settings="" if log_replicas else "log_replicas: false")
    try:
        cluster.up()
        token = cluster.cli("kv", "token").stdout.strip()
        started = time.monotonic()
        load(cluster.router_http_port, token, args.mib, filler=args.filler)
        load_s = time.monotonic() - started
        parts = cluster.partitions()
        target = next(p for p in parts if p["table"] == "kv" and p["start"] <= b"A"
                      and (not p["end"] or b"A" < p["end"]))
        victim = next(r["name"] for r in target["replicas"] if not r["leader"])
        held = [p["group"] for p in parts if victim in {r["name"] for r in p["replicas"]}]

        samples, stop = [], threading.Event()

        def probe():
            kv, i = Kv(cluster.router_http_port, token), 0
            while not stop.is_set():
                t = time.monotonic()
                ok = kv.put(f"A-probe-{i:08d}", b"p")
                samples.append((t, time.monotonic() - t, ok))
                i += 1
                time.sleep(max(0.0, 0.02 - (time.monotonic() - t)))

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(args.steady_s)
        neighbour = (time.monotonic(), None)
        write_neighbour(os.path.join(cluster.dir, "neighbour.bin"), args.mib)
        neighbour = (neighbour[0], time.monotonic())
        time.sleep(2)
        cluster.cli("cluster", "kill", victim)
        shutil.rmtree(os.path.join(cluster.dir, "data", victim))
        killed = time.monotonic()
        recovered = tolerated = None
        log_groups = set()
        while time.monotonic() - killed < args.timeout_s:
            now = [p for p in cluster.partitions() if p["group"] in held]
            log_groups.update(p["group"] for p in now if any(r["log"] for r in p["replicas"]))
            if tolerated is None and now and all(tolerant(p, victim) for p in now):
                tolerated = time.monotonic()
            if now and all(healthy(p, victim) for p in now):
                recovered = time.monotonic()
                break
            time.sleep(0.1)
        stop.set()
        prober.join()
        if recovered is None:
            raise SystemExit(f"not recovered within {args.timeout_s}s:\n"
                             + cluster.cli("cluster", "status", check=False).stdout)
        steady = [d for t, d, ok in samples if t < neighbour[0] and ok]
        beside = [d for t, d, ok in samples if neighbour[0] <= t <= neighbour[1] and ok]
        during = [d for t, d, ok in samples if killed + DEAD_AFTER_S <= t <= recovered and ok]
        failed = sum(1 for t, d, ok in samples if t >= killed and not ok)
        after_dead = recovered - killed - DEAD_AFTER_S
        row = {
            "log_replicas": log_replicas, "filler": args.filler, "groups_with_log_replica": len(log_groups),
            "mib": args.mib, "load_s": round(load_s, 1), "victim": victim, "groups": len(held),
            "tolerant_s": round(tolerated - killed, 2),
            "tolerant_after_dead_s": round(tolerated - killed - DEAD_AFTER_S, 2),
            "recovered_s": round(recovered - killed, 2), "after_dead_s": round(after_dead, 2),
            "s_per_gib": round(after_dead * 1024 / args.mib, 1),
            "p99_steady_ms": round(p99(steady) * 1000, 2),
            "p99_during_ms": round(p99(during) * 1000, 2),
            "p99_ratio": round(p99(during) / p99(steady), 2) if steady and during else None,
            "p99_neighbour_ms": round(p99(beside) * 1000, 2),
            "neighbour_s": round(neighbour[1] - neighbour[0], 1),
            "probe_failures_after_kill": failed,
        }
        print(json.dumps(row), flush=True)
        return row
    finally:
        cluster.down()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--steady-s", type=float, default=10)
    ap.add_argument("--timeout-s", type=float, default=180)
    ap.add_argument("--filler", type=int, default=0,
                    help="small writes after the load (25000: past the 20,000-slot compaction "
                         "trigger, so the log holds far less than the state)")
    ap.add_argument("--log-replicas", choices=("both", "on", "off"), default="both",
                    help="both: rounds alternate, log replicas on first")
    args = ap.parse_args()
    os.environ["TESSERA_BIN"] = os.path.abspath(args.tessera)
    import s3_harness as h  # reads TESSERA_BIN
    modes = {"both": [True, False], "on": [True], "off": [False]}[args.log_replicas]
    rows = [one_round(h, args, mode) for _ in range(args.rounds) for mode in modes]
    for mode in modes:
        mine = [r for r in rows if r["log_replicas"] == mode]
        summary = {k: statistics.median(r[k] for r in mine if r[k] is not None)
                   for k in ("tolerant_s", "tolerant_after_dead_s", "recovered_s", "after_dead_s",
                             "s_per_gib", "p99_steady_ms", "p99_during_ms", "p99_ratio",
                             "p99_neighbour_ms")}
        print(json.dumps({"log_replicas": mode, "median_of": len(mine), **summary}))


if __name__ == "__main__":
    main()
