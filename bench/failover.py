#!/usr/bin/env python3
"""Leader failover of a running local cluster, as a client sees it.

One client writes in a loop through the router's HTTP KV API to one
partition; each trial kill -9s the node that leads that partition and
measures the longest gap between successful writes around the kill, then
restarts the node. Prints one JSON line per trial and a summary line.

  bench/failover.py --tessera build/release/src/cli/tessera --dir ~/.tessera/local \
      --layout cluster/local.textproto [--trials 5] [--group 1001] [--key-prefix A]

The key prefix must fall in the chosen group's range (`tessera cluster status`).
"""
import argparse, json, statistics, subprocess, threading, time, urllib.error, urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--layout", default="cluster/local.textproto")
    ap.add_argument("--router", default="127.0.0.1:19351", help="router HTTP host:port")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--group", default="1001")
    ap.add_argument("--key-prefix", default="A")
    a = ap.parse_args()
    common = ["--dir", a.dir, "--layout", a.layout]
    token = subprocess.run([a.tessera, "kv", "token", "--dir", a.dir], capture_output=True,
                           text=True, check=True).stdout.strip()

    def put(key):
        req = urllib.request.Request(f"http://{a.router}/kv/kv/{key}", data=b"v", method="PUT",
                                     headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    def leader():
        out = subprocess.run([a.tessera, "cluster", "status", "--json", *common],
                             capture_output=True, text=True).stdout
        try:
            partitions = json.loads(out).get("partitions", [])
        except ValueError:
            return None
        for p in partitions:
            if int(p["group"]) == a.group:
                return next((r["name"] for r in p["replicas"] if r["leader"]), None)
        return None

    gaps = []
    for trial in range(a.trials):
        victim = leader()
        if victim is None:
            raise SystemExit(f"group {a.group} has no leader (see tessera cluster status)")
        stop, oks = threading.Event(), []

        def loop():
            i = 0
            while not stop.is_set():
                i += 1
                if put(f"{a.key_prefix}-failover-{trial}-{i}") == 200:
                    oks.append(time.monotonic())

        writer = threading.Thread(target=loop)
        writer.start()
        time.sleep(1.0)
        killed_at = time.monotonic()
        subprocess.run([a.tessera, "cluster", "kill", *common, victim], capture_output=True)
        time.sleep(3.0)
        stop.set()
        stopped_at = time.monotonic()
        writer.join()
        before = [t for t in oks if t <= killed_at]
        after = [t for t in oks if t > killed_at]
        if not before:
            raise SystemExit(f"trial {trial}: no write succeeded before the kill "
                             "(wrong endpoint or credentials? try one put by hand)")
        if not after:
            raise SystemExit(f"trial {trial}: writes did not resume within "
                             f"{stopped_at - killed_at:.1f} s of killing {victim}")
        # Longest gap between successful writes from the last one before the
        # kill to the end of the trial (the tail counts: a stall at the end is a gap).
        window = [before[-1], *after, stopped_at]
        gap = max(b - x for x, b in zip(window, window[1:]))
        gaps.append(gap)
        print(json.dumps({"name": "failover_trial", "trial": trial, "killed": victim,
                          "longest_write_gap_ms": round(gap * 1000), "writes_ok": len(oks)}))
        subprocess.run([a.tessera, "cluster", "restart", *common, victim], capture_output=True)
        time.sleep(3.0)
    print(json.dumps({"name": "failover", "trials": a.trials,
                      "median_gap_ms": round(statistics.median(gaps) * 1000),
                      "max_gap_ms": round(max(gaps) * 1000)}))


if __name__ == "__main__":
    main()
