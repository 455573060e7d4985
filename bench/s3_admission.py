#!/usr/bin/env python3
"""S3 bucket capacities through GAC (docs/admission.md, "S3 buckets"): the
cost of admission on the request path, and timelines of admitted and
throttled requests per second.

Starts its own cluster (3 storage nodes in 3 AZs, 3 meta replicas, 2
routers, 1 GAC instance, free loopback ports, a fresh temp dir) and drives
it with s3bench (libcurl; built from the anchors like bench/s3_vs_rgw.sh):

  cost      HEADs at concurrency C on a bucket with a capacity far above
            the load (charged, never refused: admission on) and on a
            bucket without one (not charged: admission off), interleaved,
            ROUNDS rounds of DUR s each (the order alternates per round);
            prints each round, the medians and their ratio.
  timelines admitted / throttled requests per second (the routers' GAC
            metrics of the bucket, sampled every 0.5 s) for
            skew      80% of the clients on router-1, 20% on router-2, the
                      bucket at 100 WCU: the shares follow the demand;
            burst     idle, then a burst of four times the capacity;
            on-demand an on-demand bucket (initial peak 50 WCU): load far
                      above it, capacity doubling with the peak;
            gac-restart the GAC instance killed and restarted under load.
            Written as TSV and plotted with gnuplot (PNG) into OUT.

  bench/s3_admission.py [--tessera build/release/src/cli/tessera] [--out DIR]
      [--rounds 5] [--dur 5] [--conc 16] [--cases cost,skew,burst,on-demand,gac-restart]

The machine may be shared: the ratio of interleaved rounds is the figure,
not the absolute rates.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# The metric parser the integration tests use (one Prometheus text reader).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from kv_harness import series_sum  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
INTERVAL_MS = 500
ON_DEMAND_INITIAL_WCU = 50


def log(*a):
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}]", *a, file=sys.stderr, flush=True)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Cluster:
    def __init__(self, tessera, root):
        self.tessera, self.root = tessera, root
        self.layout = os.path.join(root, "layout.textproto")
        self.dir = os.path.join(root, "cluster")
        ports = iter(free_ports(3 * 2 + 3 * 2 + 2 * 4 + 2))
        lines = ['name: "s3-admission-bench"', 'azs: ["az1", "az2", "az3"]']
        for az in ("az1", "az2", "az3"):
            lines.append(f'nodes {{ name: "{az}-n1" az: "{az}" host: "127.0.0.1" '
                         f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        for az in ("az1", "az2", "az3"):
            lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                         f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        self.s3_ports, self.http_ports = [], []
        for i, az in enumerate(("az1", "az2")):
            kv, http, s3, tls = (next(ports) for _ in range(4))
            self.s3_ports.append(s3)
            self.http_ports.append(http)
            lines.append(f'routers {{ name: "router-{i + 1}" az: "{az}" host: "127.0.0.1" '
                         f"kv_port: {kv} http_port: {http} s3_port: {s3} s3_tls_port: {tls} }}")
        lines.append(f'gac {{ name: "gac-az1" az: "az1" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        lines.append(f"gac_settings {{ interval_ms: {INTERVAL_MS} "
                     f"on_demand_initial_wcu: {ON_DEMAND_INITIAL_WCU} }}")
        with open(self.layout, "w") as f:
            f.write("\n".join(lines) + "\n")

    def cli(self, *args, check=True):
        cmd = [self.tessera, *args, "--layout", self.layout, "--dir", self.dir]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: rc {p.returncode}\n{p.stderr}")
        return p

    def up(self):
        self.cli("cluster", "up", "--detach")
        with open(os.path.join(self.dir, "credentials")) as f:
            line = next(l for l in f if l.strip() and not l.startswith("#"))
        self.ak, self.sk = line.split()[:2]

    def down(self):
        self.cli("cluster", "down", check=False)

    def metric(self, router, name, **labels):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_ports[router]}/metrics",
                                        timeout=5) as r:
                return series_sum(r.read().decode(), name, labels)
        except OSError:
            return 0.0


class S3Bench:
    def __init__(self, binary, cluster):
        self.binary, self.c = binary, cluster

    def run(self, router, bucket, op, conc, dur=None, num=200, extra=()):
        cmd = [self.binary, "-e", f"http://127.0.0.1:{self.c.s3_ports[router]}", "-b", bucket,
               "-a", self.c.ak, "-s", self.c.sk, "-o", op, "-c", str(conc), "-n", str(num),
               "-z", "0", *extra]
        if dur is not None:
            cmd += ["-d", str(dur)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=(dur or 60) + 60)
        m = re.search(r"ops/s=([0-9.]+)", p.stdout)
        return float(m.group(1)) if m else 0.0, p.stdout

    def start(self, router, bucket, op, conc, dur):
        th = threading.Thread(target=self.run, args=(router, bucket, op, conc, dur), daemon=True)
        th.start()
        return th


def build_s3bench():
    anchors = os.environ.get("ANCHORS", os.path.join(os.path.dirname(REPO), "shared", "anchors"))
    src = os.path.join(anchors, "s3bench", "s3bench.c")
    out = os.environ.get("S3BENCH", os.path.join(tempfile.gettempdir(), "s3bench-tessera"))
    if not os.path.exists(out) or (os.path.exists(src) and os.path.getmtime(out) < os.path.getmtime(src)):
        subprocess.run(["gcc", "-O2", "-Wall", "-o", out, src, "-lcurl", "-lm"], check=True)
    return out


def cost(c, bench, a, out):
    """Admission on (a bucket charged far below its capacity) and off (no
    capacity), interleaved."""
    c.cli("s3", "bucket", "set-capacity", "adm-on", "--rcu", "1000000", "--wcu", "1000000")
    time.sleep(3 * INTERVAL_MS / 1000)
    for bucket in ("adm-on", "adm-off"):
        bench.run(0, bucket, "put", 8, num=200, extra=("-N", "200"))
    rates = {"adm-on": [], "adm-off": []}
    errors = {"adm-on": 0, "adm-off": 0}
    rows = []
    for r in range(a.rounds):
        order = ("adm-on", "adm-off") if r % 2 == 0 else ("adm-off", "adm-on")
        for bucket in order:
            rate, text = bench.run(0, bucket, "head", a.conc, dur=a.dur)
            rates[bucket].append(rate)
            m = re.search(r"errors=(\d+)", text)
            errors[bucket] += int(m.group(1)) if m else 1
        rows.append(f"round {r + 1}: on {rates['adm-on'][-1]:.0f}/s, off {rates['adm-off'][-1]:.0f}/s")
        log(rows[-1])
    on, off = statistics.median(rates["adm-on"]), statistics.median(rates["adm-off"])
    ratios = [x / y for x, y in zip(rates["adm-on"], rates["adm-off"]) if y > 0]
    summary = (f"HEAD at concurrency {a.conc}, {a.rounds} interleaved rounds of {a.dur} s: median "
               f"on {on:.0f}/s, off {off:.0f}/s, on/off {on / off:.3f} "
               f"(per-round ratios {' '.join(f'{x:.3f}' for x in ratios)}, median "
               f"{statistics.median(ratios):.3f}); errors on {errors['adm-on']}, off {errors['adm-off']}")
    log(summary)
    with open(os.path.join(out, "cost.txt"), "w") as f:
        f.write("\n".join(rows + [summary]) + "\n")
    return summary


class Timeline:
    """Samples the routers' admitted/throttled counters of one bucket."""

    def __init__(self, c, bucket, kind="write"):
        self.c, self.table, self.kind = c, "s3:" + bucket, kind
        self.rows, self.stop_flag = [], threading.Event()
        self.events = []

    def sample(self):
        labels = {"table": self.table, "kind": self.kind}
        adm = sum(self.c.metric(r, "tessera_gac_router_admitted_total", **labels) for r in (0, 1))
        thr = sum(self.c.metric(r, "tessera_gac_router_throttled_total", **labels) for r in (0, 1))
        granted = sum(self.c.metric(r, "tessera_gac_router_granted_units_per_s", **labels) for r in (0, 1))
        return adm, thr, granted

    def run(self):
        t0 = time.monotonic()
        prev = self.sample()
        tp = t0
        while not self.stop_flag.is_set():
            time.sleep(0.5)
            now = time.monotonic()
            cur = self.sample()
            dt = now - tp
            self.rows.append((now - t0, (cur[0] - prev[0]) / dt, (cur[1] - prev[1]) / dt, cur[2]))
            prev, tp = cur, now

    def __enter__(self):
        self.t0 = time.monotonic()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()
        return self

    def mark(self, label):
        self.events.append((time.monotonic() - self.t0, label))

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.th.join()

    def write(self, out, name, title):
        tsv = os.path.join(out, f"s3-admission-{name}.tsv")
        with open(tsv, "w") as f:
            f.write("# t_s\tadmitted_per_s\tthrottled_per_s\tgranted_units_per_s\n")
            for t, label in self.events:
                f.write(f"# event {t:.2f} {label}\n")
            for row in self.rows:
                f.write("\t".join(f"{v:.2f}" for v in row) + "\n")
        arrows = "".join(f'set arrow from {t:.1f}, graph 0 to {t:.1f}, graph 1 nohead dt 2\n'
                         f'set label "{label}" at {t:.1f}, graph 0.92 offset 0.5,0\n'
                         for t, label in self.events)
        # Throttled requests come back at once, so clients without backoff
        # send many: they get the right-hand axis.
        script = (f'set terminal pngcairo size 640,320 font ",9"\n'
                  f'set output "{os.path.join(out, f"s3-admission-{name}.png")}"\n'
                  f'set title "{title}"\nset xlabel "s"\nset ylabel "admitted/s, granted units/s"\n'
                  f'set y2label "throttled/s"\nset ytics nomirror\nset y2tics\nset yrange [0:*]\n'
                  f'set y2range [0:*]\nset key outside bottom center horizontal\nset grid\n{arrows}'
                  f'plot "{tsv}" using 1:2 with lines lw 2 title "admitted/s", '
                  f'"" using 1:4 with lines dt 3 lw 2 title "granted units/s (both routers)", '
                  f'"" using 1:3 axes x1y2 with lines lw 1 title "throttled/s (right)"\n')
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


def skew(c, bench, a, out):
    c.cli("s3", "bucket", "set-capacity", "skew", "--rcu", "1000", "--wcu", "100")
    time.sleep(3 * INTERVAL_MS / 1000)
    with Timeline(c, "skew") as tl:
        ths = [bench.start(0, "skew", "put", 8, 14), bench.start(1, "skew", "put", 2, 14)]
        for th in ths:
            th.join()
    tl.write(out, "skew", "skew: 8 clients on router-1, 2 on router-2, bucket at 100 WCU")


def burst(c, bench, a, out):
    c.cli("s3", "bucket", "set-capacity", "burst", "--rcu", "1000", "--wcu", "100")
    with Timeline(c, "burst") as tl:
        bench.run(0, "burst", "put", 1, dur=3)  # a light load: about its rate
        tl.mark("idle")
        time.sleep(4)
        tl.mark("burst")
        ths = [bench.start(0, "burst", "put", 8, 6), bench.start(1, "burst", "put", 8, 6)]
        for th in ths:
            th.join()
        time.sleep(1)
    tl.write(out, "burst", "burst after idle: bucket at 100 WCU over two routers")


def on_demand(c, bench, a, out):
    c.cli("s3", "bucket", "set-capacity", "ondemand", "--on-demand")
    time.sleep(3 * INTERVAL_MS / 1000)
    with Timeline(c, "ondemand") as tl:
        bench.run(0, "ondemand", "put", 1, dur=4)
        tl.mark("step")
        ths = [bench.start(0, "ondemand", "put", 8, 10), bench.start(1, "ondemand", "put", 8, 10)]
        for th in ths:
            th.join()
    tl.write(out, "on-demand", f"on-demand bucket (initial peak {ON_DEMAND_INITIAL_WCU} WCU): a step")


def gac_restart(c, bench, a, out):
    c.cli("s3", "bucket", "set-capacity", "restart", "--rcu", "1000", "--wcu", "100")
    time.sleep(3 * INTERVAL_MS / 1000)
    with Timeline(c, "restart") as tl:
        ths = [bench.start(0, "restart", "put", 4, 14), bench.start(1, "restart", "put", 4, 14)]
        time.sleep(4)
        tl.mark("kill")
        c.cli("cluster", "kill", "gac-az1")
        time.sleep(3)
        tl.mark("restart")
        c.cli("cluster", "restart", "gac-az1")
        for th in ths:
            th.join()
    tl.write(out, "gac-restart", "GAC instance killed and restarted under load, bucket at 100 WCU")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", default=os.environ.get("TESSERA",
                                                        os.path.join(REPO, "build/release/src/cli/tessera")))
    ap.add_argument("--out", default=os.path.join(
        tempfile.gettempdir(), f"tessera-bench.s3-admission.{time.strftime('%Y%m%d-%H%M%S')}"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dur", type=float, default=5)
    ap.add_argument("--conc", type=int, default=16)
    ap.add_argument("--cases", default="cost,skew,burst,on-demand,gac-restart")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    bench_bin = build_s3bench()
    root = tempfile.mkdtemp(prefix="tessera-s3-admission-")
    c = Cluster(a.tessera, root)
    bench = S3Bench(bench_bin, c)
    cases = {"cost": cost, "skew": skew, "burst": burst, "on-demand": on_demand, "gac-restart": gac_restart}
    try:
        log(f"cluster up in {root}; load average {open('/proc/loadavg').read().split()[0]}")
        c.up()
        for bucket in ("adm-on", "adm-off", "skew", "burst", "ondemand", "restart"):
            bench.run(0, bucket, "put", 1, num=1, extra=("-B", "-N", "1"))
        for name in a.cases.split(","):
            log(f"case {name}")
            cases[name](c, bench, a, a.out)
        log(f"results in {a.out}; load average {open('/proc/loadavg').read().split()[0]}")
    finally:
        c.down()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
