#!/usr/bin/env python3
"""Client p99 while a loaded partition's replica moves, against steady state
(docs/autoadmin.md, "Bandwidth"; docs/benchmarks.md, "Replica moves").

Each round starts a fresh local cluster (3 storage nodes in 3 AZs, 3 meta
replicas, a router, an autoadmin with max_concurrent 1, so moves run one at
a time), with node_settings.snapshot_stream_bytes_per_s set to the round's
rate, creates the table `bench` as one partition and loads --mib MiB of
64 KiB values into it. It then adds a storage node to az1 (`tessera
cluster add-node az1-n2 --az az1`) and waits until the autoadmin's balance
has settled. A probe client then reads and writes small keys of the table
every 10 ms (both go to the partition's leader). After --steady-s seconds
the round drains whichever az1 node holds the partition (`tessera cluster
drain --no-wait`): its replica moves, add before evict, to the other az1
node (a learner catching up by streamed snapshot, promoted, the old voter
removed). The move ends when the partition's replicas no longer name the
drained node. Rounds alternate between the sizes of --mib-list and the
rates of --rates-mib (interleaved on the same machine). One JSON line per
round, and a summary (medians) per size and rate:

  move_s         drain request -> the partition no longer on the drained node
  p99_steady_ms  the probe's p99 (reads and writes) before the drain
  p99_during_ms  its p99 during the move (at least --steady-s seconds)
  p99_ratio      during / steady (target <= 2)
  max_during_ms  the slowest acknowledged request during the move
  failed         probe requests that were not acknowledged (any time)

  bench/move_p99.py --tessera build/release/src/cli/tessera \\
      [--rounds 3] [--mib-list 64,256] [--rates-mib 32]
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
sys.path.insert(0, os.path.dirname(__file__))

from split_duration import TABLE, TableKv, load, VALUE_BYTES, window_figures  # noqa: E402


class ProbeKv(TableKv):
    def get(self, key):
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            self.conn.request("GET", f"/kv/{TABLE}/{key}", headers={"Authorization": "Bearer " + self.token})
            r = self.conn.getresponse()
            r.read()
            return r.status == 200
        except (OSError, http.client.HTTPException):
            self.conn = None
            return False


def layout_writer(rate_mib):
    def write_layout(path):
        from kv_harness import three_az_layout, write_layout_file
        layout = three_az_layout("move-bench", autoadmin=True)
        layout.lines.append("autoadmin_settings { split_bytes: 1099511627776 poll_interval_ms: 300 "
                            "max_concurrent: 1 }")
        layout.lines.append(f"node_settings {{ snapshot_stream_bytes_per_s: {rate_mib << 20} }}")
        write_layout_file(path, layout.lines)
        return layout.router_http[0]
    return write_layout


def replicas_of_bench(cluster):
    """{node name: is leader} of the table's one partition, {} when unknown."""
    p = cluster.cli("cluster", "status", "--json", check=False)
    try:
        for part in json.loads(p.stdout).get("partitions", []):
            if part["table"] == TABLE:
                return {r["name"]: bool(r.get("leader")) for r in part["replicas"]}
    except ValueError:
        pass
    return {}


def settled(cluster):
    p = cluster.cli("cluster", "status", "--json", check=False)
    try:
        parts = json.loads(p.stdout).get("partitions", [])
    except ValueError:
        return False
    return bool(parts) and all(len(x["replicas"]) == 3 and not x.get("changing") for x in parts)


def wait(what, predicate, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise SystemExit(f"timed out waiting for {what}")


def one_round(KvCluster, args, mib, rate_mib):
    cluster = KvCluster("tessera-move-bench-", layout_writer(rate_mib))
    try:
        cluster.up()
        port = cluster.ports
        cluster.cli("kv", "table", "create", TABLE)
        probe_kv = ProbeKv(port, cluster.token)
        wait("the new table", lambda: probe_kv.put("a-probe", b"x"), 30)
        count = max(2, mib * (1 << 20) // VALUE_BYTES)
        load(port, cluster.token, count)
        cluster.cli("cluster", "add-node", "az1-n2", "--az", "az1", timeout=180)
        time.sleep(3)
        wait("the balance to settle", lambda: settled(cluster), args.timeout_s)
        time.sleep(3)
        wait("the balance to settle", lambda: settled(cluster), args.timeout_s)

        samples, stop = [], threading.Event()

        def probe():
            kv, i = ProbeKv(port, cluster.token), 0
            while not stop.is_set():
                key = f"k{(i * 7919) % count:08d}-p"
                t = time.monotonic()
                ok = kv.put(key, b"p") if i % 2 == 0 else kv.get(f"k{(i * 7919) % count:08d}")
                samples.append((t, time.monotonic() - t, ok))
                i += 1
                time.sleep(max(0.0, 0.01 - (time.monotonic() - t)))

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(args.steady_s)
        source = next((n for n in replicas_of_bench(cluster) if n.startswith("az1-")), None)
        if source is None:
            raise SystemExit("no az1 replica of the partition")
        asked = time.monotonic()
        cluster.cli("cluster", "drain", source, "--no-wait")
        wait("the move", lambda: source not in replicas_of_bench(cluster) and
             len(replicas_of_bench(cluster)) == 3, args.timeout_s)
        moved = time.monotonic()
        time.sleep(max(1.0, asked + args.steady_s - time.monotonic()))
        stop.set()
        prober.join()
        row = {
            "mib": mib, "rate_mib_per_s": rate_mib, "source": source,
            "move_s": round(moved - asked, 2),
            **window_figures(samples, asked, max(moved, asked + args.steady_s)),
            "probe_requests": len(samples),
        }
        print(json.dumps(row), flush=True)
        return row
    finally:
        cluster.down()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib-list", default="64,256")
    ap.add_argument("--rates-mib", default="32", help="snapshot_stream_bytes_per_s in MiB/s; 0: unpaced")
    ap.add_argument("--steady-s", type=float, default=10)
    ap.add_argument("--timeout-s", type=int, default=300)
    args = ap.parse_args()
    sizes = [int(s) for s in args.mib_list.split(",") if s]
    rates = [int(r) for r in args.rates_mib.split(",") if r]
    if not sizes or any(s <= 0 for s in sizes) or args.rounds <= 0 or not rates or min(rates) < 0:
        ap.error("--rounds and every --mib-list size must be positive, every rate >= 0")
    os.environ["TESSERA_BIN"] = os.path.abspath(args.tessera)
    import kv_harness  # reads TESSERA_BIN

    rows = [one_round(kv_harness.KvCluster, args, mib, rate)
            for _ in range(args.rounds) for mib in sizes for rate in rates]
    for mib in sizes:
        for rate in rates:
            mine = [r for r in rows if r["mib"] == mib and r["rate_mib_per_s"] == rate]
            summary = {k: statistics.median(r[k] for r in mine if r[k] is not None)
                       for k in ("move_s", "p99_steady_ms", "p99_during_ms", "p99_ratio",
                                 "max_during_ms")}
            print(json.dumps({"mib": mib, "rate_mib_per_s": rate, "median_of": len(mine),
                              **summary, "failed": sum(r["failed"] for r in mine)}))


if __name__ == "__main__":
    main()
