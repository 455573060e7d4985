#!/usr/bin/env python3
"""Listing latency against the bucket's partition count (docs/benchmarks.md,
"Listing against partition count"): ListObjectsV2 of the 1,000 keys under
one prefix, with the bucket's `_s3` range over 1, 8 and 64 partitions.

Starts one local cluster (3 storage nodes in 3 AZs, 3 meta replicas, one
router, one autoadmin that splits only on request; free loopback ports, a
fresh temp dir) and three buckets holding the same objects
(tests/integration/test_s3_listing_cost.py's keys: 1,000 under "list/",
two small objects in every other partition), split by hand
(`tessera kv partition split _s3 --key ...`) into 1, 8 and 64 partitions,
the prefix's keys in one partition of their own. Each round lists every
bucket --requests times (signed ListObjectsV2 over plain HTTP to the router,
one connection per request, MaxKeys 1000, prefix "list/", once without and
once with the delimiter "/"), interleaved request by request with the
bucket order rotating, so the machine's load falls on every count alike. Prints
one JSON line per round and bucket, then per listing and partition count
the median over rounds of the p50 and the p99, the ratio of the p50 to the
one-partition p50, and the router's partition reads per listing
(tessera_s3_list_partition_reads_total).

  bench/s3_listing_cost.py [--tessera build/release/src/cli/tessera]
      [--rounds 3] [--requests 100]

The machine may be shared: the ratios of interleaved rounds are the
figure, not the absolute latencies.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

import s3_harness as h  # noqa: E402
import test_s3_listing_cost as lc  # noqa: E402

COUNTS = (1, 8, 64)
LISTINGS = {"list/ 1000": None, "list/ 1000 delimiter /": "/"}
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def log(text):
    print(text, file=sys.stderr, flush=True)


def bucket_of(count):
    return f"listcost-{count}", int.from_bytes(f"LISTC{count:03d}".encode(), "big")


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def list_once(raw, bucket, delimiter):
    """One signed ListObjectsV2 -> (seconds, items returned)."""
    query = [("list-type", "2"), ("max-keys", "1000"), ("prefix", lc.PREFIX)]
    if delimiter:
        query.append(("delimiter", delimiter))
    query.sort()
    started = time.perf_counter()
    r = raw.request("GET", f"/{bucket}", query)
    took = time.perf_counter() - started
    if r.status != 200:
        raise RuntimeError(f"ListObjectsV2 {bucket}: HTTP {r.status}: {r.body[:300]!r}")
    root = ET.fromstring(r.body)
    items = len(root.findall(f"{NS}Contents")) + len(root.findall(f"{NS}CommonPrefixes"))
    return took, items


def prepare(c):
    s3 = c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)
    for count in COUNTS:
        name, bucket_id = bucket_of(count)
        c.create_bucket(name, bucket_id)
        c.put_objects(s3, name, lc.list_keys() + lc.filler_keys())
        started = time.monotonic()
        got = c.split_bucket(bucket_id, lc.split_keys(count))
        log(f"bucket {name}: {got} partitions ({time.monotonic() - started:.1f} s of splits)")
        if got != count:
            raise RuntimeError(f"bucket {name} overlaps {got} partitions, not {count}")
        for delimiter in LISTINGS.values():  # the router learns the partition map
            lc.walk(s3, name, 1000, delimiter)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", default=os.environ.get("TESSERA",
                                                        os.path.join(REPO, "build/release/src/cli/tessera")))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100, help="listings per bucket, listing and round")
    a = ap.parse_args()
    for env in ("AWS_CA_BUNDLE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE"):
        os.environ.pop(env, None)
    h.TESSERA_BIN = os.path.abspath(a.tessera)
    c = lc.ListingCluster("listing-bench")
    try:
        c.up()
        prepare(c)
        raw = h.S3Raw(c)
        log(f"cluster up, buckets split; load average {open('/proc/loadavg').read().split()[0]}")
        reads = {}
        for count in COUNTS:  # the router's partition reads of one listing
            for listing, delimiter in LISTINGS.items():
                before = c.metric()
                list_once(raw, bucket_of(count)[0], delimiter)
                reads[(listing, count)] = c.metric() - before
        p50s = {(l, n): [] for l in LISTINGS for n in COUNTS}
        p99s = {(l, n): [] for l in LISTINGS for n in COUNTS}
        for r in range(a.rounds):
            times = {key: [] for key in p50s}
            # Interleaved request by request, the bucket order rotating, so
            # the machine's load falls on every partition count alike.
            for i in range(a.requests):
                k = (i + r) % len(COUNTS)
                for count in COUNTS[k:] + COUNTS[:k]:
                    for listing, delimiter in LISTINGS.items():
                        took, items = list_once(raw, bucket_of(count)[0], delimiter)
                        if items != len(lc.model(1000, delimiter)[0]):
                            raise RuntimeError(f"{count} partitions, {listing}: {items} items")
                        times[(listing, count)].append(took)
            for (listing, count), t in times.items():
                p50s[(listing, count)].append(percentile(t, 0.5) * 1e3)
                p99s[(listing, count)].append(percentile(t, 0.99) * 1e3)
                print(json.dumps({"round": r + 1, "partitions": count, "listing": listing,
                                  "listings": len(t),
                                  "p50_ms": round(p50s[(listing, count)][-1], 2),
                                  "p99_ms": round(p99s[(listing, count)][-1], 2),
                                  "partition_reads_per_listing": reads[(listing, count)]}),
                      flush=True)
        log(f"{a.rounds} interleaved rounds of {a.requests} listings per bucket and listing "
            f"(load average {open('/proc/loadavg').read().split()[0]}):")
        for listing in LISTINGS:
            base = statistics.median(p50s[(listing, 1)])
            for count in COUNTS:
                key = (listing, count)
                p50 = statistics.median(p50s[key])
                log(f"  {listing:24s} {count:2d} partitions: p50 {p50:6.2f} ms, "
                    f"p99 {statistics.median(p99s[key]):6.2f} ms, p50/p50(1) {p50 / base:.2f}, "
                    f"partition reads per listing {reads[key]:g} "
                    f"(round p50s: {' '.join(f'{x:.2f}' for x in p50s[key])})")
        fanned = {k: v for k, v in reads.items() if v != 1}
        if fanned:
            log(f"a listing read more than one partition: {fanned}")
            sys.exit(1)
    finally:
        c.down()
        shutil.rmtree(c.root, ignore_errors=True)


if __name__ == "__main__":
    main()
