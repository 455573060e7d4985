#!/usr/bin/env python3
"""How long a partition split takes, and what the partition's clients see
meanwhile (docs/partition-splits.md; docs/benchmarks.md, "Partition
splits").

Each round starts a fresh local cluster (3 storage nodes in 3 AZs, 3 meta
replicas, a router, an autoadmin whose split_bytes is far above the load,
so only the requested split happens), creates the table `bench` as one
partition, loads --mib MiB of 64 KiB values ("k00000000"...) into it, then
runs a probe client that writes one small key every 20 ms, alternating
between keys below and above the middle of the loaded range, so it keeps
writing into both halves of the split. After --steady-s seconds it asks for
a split at the middle key (`tessera kv partition split bench --key K`) and
waits for the command, then for the first acknowledged probe write above K
(the child serving). Rounds alternate between the sizes of --mib-list, so
the sizes are interleaved on the same machine. One JSON line per round and
a summary (medians) per size:

  split_s        the request -> meta's map shows both halves (the command
                 returned): key chosen, reserved, ordered in the parent's
                 log, the child started on every replica, committed
  serving_s      the request -> the first probe write acknowledged by the
                 child
  p99_steady_ms  the probe's write p99 before the request
  p99_during_ms  its write p99 from the request to the child serving, or
                 for --steady-s seconds after the request if that is longer
                 (as many writes as the steady figure)
  max_during_ms  the slowest acknowledged write of that window
  p99_ratio      during / steady
  failed         probe writes that were not acknowledged (any time)

  bench/split_duration.py --tessera build/release/src/cli/tessera \
      [--rounds 3] [--mib-list 16,256]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))

from autoadmin_recovery import Kv, p99  # noqa: E402  (the same HTTP KV client and figure)

VALUE_BYTES = 64 << 10
TABLE = "bench"


def window_figures(samples, asked, end):
    """The probe's figures around an operation asked at `asked` that ended
    at `end`: p99 of the acknowledged requests before it and from it to
    `end`, their ratio, the slowest during it, and every failed request.
    `samples` are (time, duration, ok)."""
    steady = [d for t, d, ok in samples if t < asked and ok]
    during = [d for t, d, ok in samples if asked <= t <= end and ok]
    return {
        "p99_steady_ms": round(p99(steady) * 1000, 2),
        "p99_during_ms": round(p99(during) * 1000, 2),
        "p99_ratio": round(p99(during) / p99(steady), 2) if steady and during else None,
        "max_during_ms": round(max(during, default=0) * 1000, 2),
        "failed": sum(1 for _, _, ok in samples if not ok),
    }


def write_layout(path):
    from kv_harness import three_az_layout, write_layout_file
    layout = three_az_layout("split-bench", autoadmin=True)
    # Far above any load here: the only split is the one the round asks for.
    layout.lines.append("autoadmin_settings { split_bytes: 1099511627776 poll_interval_ms: 300 }")
    write_layout_file(path, layout.lines)
    return layout.router_http[0]


class TableKv(Kv):
    """Kv (autoadmin_recovery.py) on the table `bench` instead of `kv`."""

    def put(self, key, value):
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            self.conn.request("PUT", f"/kv/{TABLE}/{key}", value,
                              {"Authorization": "Bearer " + self.token,
                               "Content-Type": "application/octet-stream"})
            r = self.conn.getresponse()
            r.read()
            return 200 <= r.status < 300
        except (OSError, http.client.HTTPException):
            self.conn = None
            return False


def load(port, token, count, threads=8):
    value = os.urandom(VALUE_BYTES)
    failed = []

    def worker(first):
        kv = TableKv(port, token)
        for i in range(first, count, threads):
            if not any(kv.put(f"k{i:08d}", value) for _ in range(5)):
                failed.append(i)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if failed:
        raise SystemExit(f"{len(failed)} values could not be loaded")


def split(cluster, key, timeout_s):
    """`tessera kv partition split bench --key KEY`: returns once meta's map
    shows both halves."""
    cmd = [os.environ["TESSERA_BIN"], "kv", "partition", "split", "--layout", cluster.layout,
           "--dir", cluster.dir, TABLE, "--key", key, "--timeout", str(timeout_s)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout_s + 30,
                       text=True, errors="replace")
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} -> rc {p.returncode}\n{p.stdout}\n{p.stderr}")


def one_round(KvCluster, args, mib):
    cluster = KvCluster("tessera-split-bench-", write_layout)
    try:
        cluster.up()
        port = cluster.ports
        cluster.cli("kv", "table", "create", TABLE)
        probe_kv = TableKv(port, cluster.token)
        deadline = time.monotonic() + 30
        while not probe_kv.put("a-probe", b"x"):  # the router learns the table on a miss
            if time.monotonic() > deadline:
                raise SystemExit("the new table does not take writes")
            time.sleep(0.2)
        count = max(2, mib * (1 << 20) // VALUE_BYTES)
        started = time.monotonic()
        load(port, cluster.token, count)
        load_s = time.monotonic() - started
        split_key = f"k{count // 2:08d}"

        samples, stop = [], threading.Event()
        child_ok = []

        def probe():
            kv, i = TableKv(port, cluster.token), 0
            while not stop.is_set():
                # Even: the parent's half; odd: the child's half.
                key = (f"k{count // 4:08d}-p{i:08d}" if i % 2 == 0
                       else f"k{3 * count // 4:08d}-p{i:08d}")
                t = time.monotonic()
                ok = kv.put(key, b"p")
                done = time.monotonic()
                samples.append((t, done - t, ok))
                if ok and i % 2 == 1:
                    child_ok.append(done)
                i += 1
                time.sleep(max(0.0, 0.02 - (time.monotonic() - t)))

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(args.steady_s)
        asked = time.monotonic()
        split(cluster, split_key, args.timeout_s)
        split_done = time.monotonic()
        while time.monotonic() - split_done < 30:
            if any(t > split_done for t in child_ok):
                break
            time.sleep(0.02)
        # As long after the request as the steady window before it, so the
        # two p99 figures come from as many writes.
        time.sleep(max(2.0, asked + args.steady_s - time.monotonic()))
        stop.set()
        prober.join()
        serving = next((t for t in child_ok if t > split_done), None)
        if serving is None:
            raise SystemExit("the child did not acknowledge a write within 30 s of the split")
        row = {
            "mib": mib, "keys": count, "load_s": round(load_s, 1),
            "split_s": round(split_done - asked, 2),
            "serving_s": round(serving - asked, 2),
            **window_figures(samples, asked, max(serving, asked + args.steady_s)),
            "probe_writes": len(samples),
        }
        print(json.dumps(row), flush=True)
        return row
    finally:
        cluster.down()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib-list", default="16,256")
    ap.add_argument("--steady-s", type=float, default=10)
    ap.add_argument("--timeout-s", type=int, default=300)
    args = ap.parse_args()
    sizes = [int(s) for s in args.mib_list.split(",") if s]
    if not sizes or any(s <= 0 for s in sizes) or args.rounds <= 0:
        ap.error("--rounds and every --mib-list size must be positive")
    os.environ["TESSERA_BIN"] = os.path.abspath(args.tessera)
    import kv_harness  # reads TESSERA_BIN

    rows = [one_round(kv_harness.KvCluster, args, mib) for _ in range(args.rounds) for mib in sizes]
    for mib in sizes:
        mine = [r for r in rows if r["mib"] == mib]
        summary = {k: statistics.median(r[k] for r in mine if r[k] is not None)
                   for k in ("split_s", "serving_s", "p99_steady_ms", "p99_during_ms", "p99_ratio",
                             "max_during_ms")}
        print(json.dumps({"mib": mib, "median_of": len(mine), **summary,
                          "failed": sum(r["failed"] for r in mine)}))


if __name__ == "__main__":
    main()
