#!/usr/bin/env python3
"""Side-by-side tables (markdown) from the raw logs of the peer benchmarks.

  compare.py s3 RGW_LOG TESSERA_LOG [SINK_LOG]
                                        logs written by bench/s3_vs_rgw.sh
  compare.py kv RAW_LINES               lines written by bench/kv_vs_etcd.sh

A missing or empty log (peer skipped) leaves its column as "-" and its
ratios unset; the targets are the ones of issues 4 and 3, as ratios of
figures measured in the same run.
"""
import json
import os
import re
import statistics
import sys


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt(x, digits=0):
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def verdict(r, target, at_least=True):
    if r is None:
        return "n/a"
    ok = r >= target if at_least else r <= target
    return "**met**" if ok else "**not met**"


# ---------------------------------------------------------------- S3

def parse_s3(path):
    """Returns {(op, conc): {...}} and {'up': MiB/s, 'down': MiB/s, ...}."""
    runs, big = {}, {}
    if not path or not os.path.exists(path):
        return runs, big
    cmd, cur = "", None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("$ "):
            cmd, cur = line, None
        elif line.startswith("op="):
            f = fields(line)
            m = re.search(r" -p (\S+)", cmd)
            prefix = m.group(1) if m else ""
            op = f["op"]
            if op == "put" and prefix == "list-":
                op = "populate"
            elif prefix == "big-":
                op = "big" + op  # the large object with s3bench
            cur = {"ops_s": num(f.get("ops/s")), "errors": int(f.get("errors", "0")),
                   "mb_s": num(f.get("MB/s"))}
            runs[(op, int(f["conc"]))] = cur
        elif line.startswith("latency_ms") and cur is not None:
            f = fields(line)
            cur.update(p50=num(f.get("p50")), p99=num(f.get("p99")))
        elif line.startswith("RESULT big upload"):
            big["up"] = num(line.split()[-2])
        elif line.startswith("RESULT big download"):
            big["down"] = num(line.split()[-2])
        elif line.startswith("RESULT transfer upload"):
            big["xfer_up"] = num(line.split()[3])
        elif line.startswith("RESULT transfer download_discarded"):
            big["xfer_down_discarded"] = num(line.split()[3])
        elif line.startswith("RESULT transfer download"):
            big["xfer_down"] = num(line.split()[3])
        elif line.startswith("RESULT cli upload"):
            big["cli_up"] = num(line.split()[3])
        elif line.startswith("RESULT cli download"):
            big["cli_down"] = num(line.split()[3])
        elif line.startswith("RESULT cli roundtrip"):
            big["cli_roundtrip"] = line.split("roundtrip", 1)[1].strip()
        elif line.startswith("RESULT transfer roundtrip"):
            big["xfer_roundtrip"] = line.split("roundtrip", 1)[1].strip()
        elif line.startswith("RESULT big roundtrip"):
            big["roundtrip"] = line.split("roundtrip", 1)[1].strip()
    return runs, big


def cell_s3(r):
    if not r:
        return "-"
    s = f"{fmt(r.get('ops_s'))} ({fmt(r.get('p50'), 2)} / {fmt(r.get('p99'), 2)})"
    if r.get("errors"):
        s += f" **{r['errors']} errors**"
    return s


def s3(rgw_log, tessera_log, sink_log=None):
    rgw, rgw_big = parse_s3(rgw_log)
    tes, tes_big = parse_s3(tessera_log)
    _, sink_big = parse_s3(sink_log)
    print("| 4 KiB op | conc | RGW ops/s (p50 / p99 ms) | Tessera ops/s (p50 / p99 ms) "
          "| Tessera / RGW | target |")
    print("|---|---|---|---|---|---|")
    targets = {("put", 32): (5, True, "ops/s"), ("get", 32): (2, True, "ops/s"),
               ("list", 1): (0.5, False, "p50")}
    for op in ("put", "get", "head", "list"):
        for c in (1, 32):
            a, b = rgw.get((op, c)), tes.get((op, c))
            tgt = targets.get((op, c))
            if op == "list":
                r = ratio(b and b.get("p50"), a and a.get("p50"))
                rs = f"p50 {fmt(r, 2)}×; ops/s {fmt(ratio(b and b['ops_s'], a and a['ops_s']), 2)}×"
            else:
                r = ratio(b and b["ops_s"], a and a["ops_s"])
                rs = f"{fmt(r, 2)}×"
            t = "-"
            if tgt:
                t = f"{tgt[2]} {'≥' if tgt[1] else '≤'} {tgt[0]}×: {verdict(r, tgt[0], tgt[1])}"
            print(f"| {op.upper()} | {c} | {cell_s3(a)} | {cell_s3(b)} | {rs} | {t} |")
    for d, name in (("up", "PUT (aws s3 cp up, baseline.sh)"),
                    ("down", "GET (aws s3 cp down, baseline.sh)"),
                    ("cli_up", "PUT (aws s3 cp, timed alone)"),
                    ("cli_down", "GET (aws s3 cp, timed alone, 3×)"),
                    ("xfer_up", "PUT (s3transfer, aws CLI defaults)"),
                    ("xfer_down", "GET (s3transfer, aws CLI defaults)"),
                    ("xfer_down_discarded", "GET (s3transfer, body discarded)")):
        a, b = rgw_big.get(d), tes_big.get(d)
        r = ratio(b, a)
        print(f"| {os.environ.get('BIG_MB', '256')} MiB {name} | - | {fmt(a, 1)} MiB/s "
              f"| {fmt(b, 1)} MiB/s | {fmt(r, 2)}× | ≥ 1.5×: {verdict(r, 1.5)} |")
    for op, name in (("bigput", "PUT (s3bench, 1 stream)"), ("bigget", "GET (s3bench, 1 stream)")):
        # s3bench prints decimal MB/s.
        a, b = (r.get((op, 1), {}).get("mb_s") for r in (rgw, tes))
        a, b = (x * 1e6 / 1048576 if x is not None else None for x in (a, b))
        r = ratio(b, a)
        print(f"| {os.environ.get('BIG_MB', '256')} MiB {name} | 1 | {fmt(a, 1)} MiB/s "
              f"| {fmt(b, 1)} MiB/s | {fmt(r, 2)}× | ≥ 1.5×: {verdict(r, 1.5)} |")
    if sink_big:
        # The same aws CLI against tessera_s3_sink (stores nothing, answers
        # zeros): the most any server can get from this client here.
        print("\nClient ceiling (aws CLI against bench/s3_sink, a server that stores nothing): "
              + ", ".join(f"{d} {fmt(sink_big.get(d), 1)} MiB/s = {fmt(ratio(sink_big.get(d), rgw_big.get(d)), 2)}× RGW"
                          for d in ("up", "down"))
              + "; aws CLI timed alone: "
              + ", ".join(f"{d[4:]} {fmt(sink_big.get(d), 1)} MiB/s = {fmt(ratio(sink_big.get(d), rgw_big.get(d)), 2)}× RGW"
                          for d in ("cli_up", "cli_down"))
              + "; s3transfer: "
              + ", ".join(f"{d[5:]} {fmt(sink_big.get(d), 1)} MiB/s = {fmt(ratio(sink_big.get(d), rgw_big.get(d)), 2)}× RGW"
                          for d in ("xfer_up", "xfer_down"))
              + f"; s3transfer, body discarded: down {fmt(sink_big.get('xfer_down_discarded'), 1)} MiB/s = "
              f"{fmt(ratio(sink_big.get('xfer_down_discarded'), rgw_big.get('xfer_down_discarded')), 2)}× RGW")
    for name, big in (("RGW", rgw_big), ("Tessera", tes_big)):
        if big.get("roundtrip"):
            print(f"\n{name} large object round trip: {big['roundtrip']}")
        if big.get("cli_roundtrip"):
            print(f"\n{name} large object round trip (aws s3 cp, timed alone): {big['cli_roundtrip']}")
        if big.get("xfer_roundtrip"):
            print(f"\n{name} large object round trip (s3transfer): {big['xfer_roundtrip']}")
    for name, runs in (("RGW", rgw), ("Tessera", tes)):
        bad = [f"{op} c={c}: {r['errors']}" for (op, c), r in sorted(runs.items()) if r["errors"]]
        if bad:
            print(f"\n{name} failed requests: " + ", ".join(bad))


# ---------------------------------------------------------------- KV

def kv(raw):
    # (system, mode, conns) -> {round: fields}; lines without round= (older
    # logs) count as one round each, in file order.
    runs, fo = {}, {"etcd": [], "tessera": []}
    for line in open(raw, errors="replace"):
        line = line.strip()
        if line.startswith("system="):
            f = fields(line)
            rounds = runs.setdefault((f["system"], f["mode"], int(f["conns"])), {})
            rounds[int(f.get("round", len(rounds) + 1))] = f
        elif line.startswith("failover etcd "):
            m = re.search(r"\{.*\}", line)
            if m:
                fo["etcd"].append(json.loads(m.group(0)).get("max_gap_ms"))
        elif line.startswith("failover tessera "):
            m = re.search(r"\{.*\}", line)
            if m:
                d = json.loads(m.group(0))
                if d.get("name") == "failover_trial":
                    fo["tessera"].append(d.get("longest_write_gap_ms"))

    def median_of(rounds, k):
        xs = [x for x in (num(f.get(k)) for f in rounds.values()) if x is not None]
        return statistics.median(xs) if xs else None

    def cell(rounds):
        if not rounds:
            return "-"
        s = (f"{fmt(median_of(rounds, 'rps'))} ({fmt(median_of(rounds, 'p50_ms'), 2)} / "
             f"{fmt(median_of(rounds, 'p99_ms'), 2)})")
        non_2xx = sum(int(f.get("err_status", 0)) for f in rounds.values())
        socket_errors = sum(int(f.get("err_sock", 0)) for f in rounds.values())
        if non_2xx or socket_errors:
            s += f" **{non_2xx} non-2xx, {socket_errors} socket errors**"
        return s

    def round_ratios(mode, c, k):
        """Tessera / etcd of figure k, one per round both systems measured."""
        a, b = runs.get(("etcd", mode, c), {}), runs.get(("tessera", mode, c), {})
        rs = (ratio(num(b[r].get(k)), num(a[r].get(k))) for r in sorted(a.keys() & b.keys()))
        return [x for x in rs if x is not None]

    def ratio_of(mode, c, k):
        rs = round_ratios(mode, c, k)
        return statistics.median(rs) if rs else None

    def ratio_cell(mode, c, k):
        rs = round_ratios(mode, c, k)
        if not rs:
            return "-"
        s = f"{fmt(statistics.median(rs), 2)}×"
        return s if len(rs) == 1 else s + f" ({fmt(min(rs), 2)}–{fmt(max(rs), 2)})"

    def loads(rounds):
        xs = sorted(x for x in (num(f.get("load1")) for f in (rounds or {}).values()) if x is not None)
        if not xs:
            return "-"
        return f"{xs[0]:.2f}" if len(xs) == 1 else f"{xs[0]:.2f}–{xs[-1]:.2f}"

    n_rounds = max((len(v) for v in runs.values()), default=0)
    if n_rounds > 1:
        print(f"{n_rounds} interleaved rounds: figures are each system's medians; "
              "ratios the median of the per-round ratios (range in brackets).\n")
    print("| op | conns | etcd ops/s (p50 / p99 ms) | Tessera ops/s (p50 / p99 ms) "
          "| ops/s ratio | p50 ratio | p99 ratio | load1 etcd / Tessera |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, name in (("put", "write"), ("get", "strong read")):
        for c in (1, 16, 64):
            a, b = runs.get(("etcd", mode, c)), runs.get(("tessera", mode, c))
            print(f"| {name} | {c} | {cell(a)} | {cell(b)} | {ratio_cell(mode, c, 'rps')} "
                  f"| {ratio_cell(mode, c, 'p50_ms')} | {ratio_cell(mode, c, 'p99_ms')} "
                  f"| {loads(a)} / {loads(b)} |")

    print("\nTargets (issue 3), ratios from this run:")
    r, p = ratio_of("put", 64, "rps"), ratio_of("put", 64, "p99_ms")
    print(f"- writes at 64 conns ≥ 3× etcd: {fmt(r, 2)}× {verdict(r, 3)}; "
          f"p99 ≤ etcd's: {fmt(p, 2)}× {verdict(p, 1, False)}")
    r = ratio_of("put", 1, "p50_ms")
    print(f"- 1-conn write p50 ≤ 1/3 of etcd's: {fmt(r, 2)}× {verdict(r, 1 / 3, False)}")
    for c in (64, 16, 1):
        r = ratio_of("get", c, "rps")
        print(f"- strong reads at {c} conns ≥ 5× etcd's linearizable: {fmt(r, 2)}× {verdict(r, 5)}")
    med = {k: (statistics.median([x for x in v if x is not None]) if any(x is not None for x in v)
               else None) for k, v in fo.items()}
    print(f"- leader failover (longest write gap after kill -9), median: Tessera "
          f"{fmt(med['tessera'])} ms over {len(fo['tessera'])} trials {fo['tessera']} "
          f"(target < 1,000 ms: {verdict(med['tessera'], 1000, False) if med['tessera'] is not None else 'n/a'}); "
          f"etcd {fmt(med['etcd'])} ms over {len(fo['etcd'])} trials {fo['etcd']}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "s3":
        s3(*(sys.argv[2:5] + [None] * (5 - len(sys.argv))))
    elif len(sys.argv) == 3 and sys.argv[1] == "kv":
        kv(sys.argv[2])
    else:
        sys.exit(__doc__)
