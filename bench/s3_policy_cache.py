#!/usr/bin/env python3
"""The cost of a bucket policy on the request path: signed HEAD and GET
requests per second on a bucket whose policy is about 5 KB, served by two
builds side by side (a candidate and a baseline, e.g. before and after a
change to how routers keep parsed policies), in interleaved rounds.

Starts one cluster per build (bench/s3_admission.py's layout: 3 storage
nodes in 3 AZs, 3 meta replicas, 2 routers, 1 GAC instance; free loopback
ports, fresh temp dirs), gives each the same bucket, objects (0 bytes) and
policy (PutBucketPolicy through boto3), and drives router-1 of each with
s3bench (libcurl; the anchors' s3bench, as bench/s3_admission.py builds
it). Each round runs every op on both clusters, the order alternating per
round; prints each round, the medians and the candidate/baseline ratio of
the medians.

  bench/s3_policy_cache.py --baseline OLD/tessera [--tessera build/release/src/cli/tessera]
      [--rounds 3] [--dur 4] [--conc 8] [--ops head,get]

The machine may be shared: the ratio of interleaved rounds is the figure,
not the absolute rates.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from s3_admission import REPO, Cluster, S3Bench, build_s3bench, log  # noqa: E402

BUCKET = "policy-bench"
OBJECTS = 200


def policy_document(target_bytes=5000):
    """A policy of about `target_bytes`: statements that never apply to the
    bench's owner (other principals, conditions), so every request is
    evaluated against all of them and decided by ownership."""
    statements = []
    i = 0
    while True:
        statements.append({
            "Sid": f"statement{i:03d}",
            "Effect": "Deny" if i % 2 else "Allow",
            "Principal": {"AWS": f"arn:aws:iam::123456789012:user/nobody-{i}"},
            "Action": ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{BUCKET}/area-{i}/*", f"arn:aws:s3:::{BUCKET}"],
            "Condition": {"StringLike": {"aws:UserAgent": [f"agent-{i}-*"]},
                          "IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "192.168.0.0/16"]}},
        })
        doc = json.dumps({"Version": "2012-10-17", "Statement": statements})
        if len(doc) >= target_bytes:
            return doc
        i += 1


def prepare(c, bench, document):
    import boto3
    from botocore.config import Config
    bench.run(0, BUCKET, "put", 1, num=1, extra=("-B", "-N", "1"))
    bench.run(0, BUCKET, "put", 8, num=OBJECTS, extra=("-N", str(OBJECTS)))
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{c.s3_ports[0]}",
                      aws_access_key_id=c.ak, aws_secret_access_key=c.sk, region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    s3.put_bucket_policy(Bucket=BUCKET, Policy=document)
    assert s3.get_bucket_policy(Bucket=BUCKET)["Policy"] == document


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", default=os.environ.get("TESSERA",
                                                        os.path.join(REPO, "build/release/src/cli/tessera")))
    ap.add_argument("--baseline", required=True, help="the tessera binary to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dur", type=float, default=4)
    ap.add_argument("--conc", type=int, default=8)
    ap.add_argument("--ops", default="head,get")
    a = ap.parse_args()
    for env in ("AWS_CA_BUNDLE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE"):
        os.environ.pop(env, None)
    bench_bin = build_s3bench()
    document = policy_document()
    log(f"policy of {len(document)} bytes, {len(json.loads(document)['Statement'])} statements")
    builds = {"candidate": a.tessera, "baseline": a.baseline}
    roots, clusters, benches = [], {}, {}
    try:
        for name, binary in builds.items():
            root = tempfile.mkdtemp(prefix=f"tessera-policy-bench-{name}-")
            roots.append(root)
            c = Cluster(binary, root)
            clusters[name] = c
            c.up()
            benches[name] = S3Bench(bench_bin, c)
            prepare(c, benches[name], document)
        log(f"clusters up; load average {open('/proc/loadavg').read().split()[0]}")
        ops = a.ops.split(",")
        rates = {(op, name): [] for op in ops for name in builds}
        for r in range(a.rounds):
            order = list(builds) if r % 2 == 0 else list(reversed(list(builds)))
            for op in ops:
                for name in order:
                    rate, text = benches[name].run(0, BUCKET, op, a.conc, dur=a.dur, num=OBJECTS)
                    if "errors=0" not in text:
                        log(f"{name} {op}: errors in\n{text}")
                    rates[(op, name)].append(rate)
                log(f"round {r + 1}: " + ", ".join(
                    f"{op} {name} {rates[(op, name)][-1]:.0f}/s" for name in builds))
        for op in ops:
            cand = statistics.median(rates[(op, "candidate")])
            base = statistics.median(rates[(op, "baseline")])
            log(f"{op.upper()} at concurrency {a.conc}, {a.rounds} interleaved rounds of {a.dur} s: "
                f"median candidate {cand:.0f}/s, baseline {base:.0f}/s, ratio {cand / base:.3f} "
                f"(rounds: candidate {' '.join(f'{x:.0f}' for x in rates[(op, 'candidate')])}; "
                f"baseline {' '.join(f'{x:.0f}' for x in rates[(op, 'baseline')])})")
        log(f"load average {open('/proc/loadavg').read().split()[0]}")
    finally:
        for c in clusters.values():
            c.down()
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
