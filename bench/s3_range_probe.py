#!/usr/bin/env python3
"""Ranged GETs of one large object from several threads at once, the way
s3transfer downloads it, but reading into nothing: where a download waits.

  s3_range_probe.py ENDPOINT BUCKET KEY [THREADS=10] [PASSES=3] [RANGE_MIB=8]

Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; the region
is us-east-1. Every pass reads the whole object once in RANGE_MIB ranges
(s3transfer's default part size), THREADS at a time. Prints

  RESULT probe <MiB/s> MiB/s ttfb p50 <ms> p90 <ms> body p50 <ms> p90 <ms>

where ttfb is the time from sending a GET to its response headers and body
the time to read its bytes. Against bench/s3_sink (stores nothing) the
figures are the client's own.
"""
import sys
import threading
import time

import boto3
from botocore.config import Config

MIB = 1 << 20


def quantile(values, q):
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    endpoint, bucket, key = sys.argv[1:4]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    passes = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    range_bytes = (int(sys.argv[6]) if len(sys.argv) > 6 else 8) * MIB
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        config=Config(max_pool_connections=threads))
    size = client.head_object(Bucket=bucket, Key=key)["ContentLength"]
    ranges = [(start, min(start + range_bytes, size) - 1)
              for start in range(0, size, range_bytes)] * passes
    wanted = len(ranges)
    lock = threading.Lock()
    first_byte_ms, body_ms, errors = [], [], []

    def work():
        while True:
            with lock:
                if not ranges:
                    return
                first, last = ranges.pop()
            sent = time.monotonic()
            body = client.get_object(Bucket=bucket, Key=key,
                                     Range=f"bytes={first}-{last}")["Body"]
            headers = time.monotonic()
            got = 0
            while chunk := body.read(256 * 1024):
                got += len(chunk)
            done = time.monotonic()
            with lock:
                if got != last - first + 1:
                    errors.append(f"range {first}-{last}: {got} bytes")
                first_byte_ms.append((headers - sent) * 1e3)
                body_ms.append((done - headers) * 1e3)

    start = time.monotonic()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - start
    if errors or len(body_ms) != wanted:
        sys.exit("; ".join(errors) or f"{len(body_ms)} of {wanted} ranges read (a GET failed)")
    print(f"RESULT probe {size * passes / MIB / elapsed:.0f} MiB/s "
          f"ttfb p50 {quantile(first_byte_ms, .5):.1f} p90 {quantile(first_byte_ms, .9):.1f} ms "
          f"body p50 {quantile(body_ms, .5):.1f} p90 {quantile(body_ms, .9):.1f} ms")


if __name__ == "__main__":
    main()
