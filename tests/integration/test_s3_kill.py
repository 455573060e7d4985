#!/usr/bin/env python3
"""S3 multipart uploads and versioned overwrites under kill -9 (issue 5).

Goal: prove that when the storage node leading the bucket's `_s3` partition
is killed (SIGKILL, `tessera cluster kill`)
  1. in the middle of a 100 MiB boto3 multipart upload (8 MiB parts, 4 in
     flight), the upload completes with the client's retries (re-run like a
     user would, at most 3 runs, only if a run fails) and reads back
     byte-identical with S3's multipart ETag;
  2. in the middle of a loop of versioned overwrites and deletes (4 writers,
     each owning 3 keys, objects from 100 B to 2 MiB), every operation
     completes with retries, every acknowledged version reads back
     byte-identical by its version id (SHA-256 kept for each), each key's
     acknowledged versions are listed in acknowledgement order, versions
     nobody acknowledged are at most the failed attempts, and GET, HEAD
     and LIST agree: a listing shows exactly the keys whose latest version
     is not a delete marker, with the latest acknowledged bytes, and each
     HEAD/GET matches the listing's ETag and size;
both while the node is down and again after it restarted and caught up.
Blob GC and the repairer run every few hundred ms meanwhile; the orphan
sweeper's grace is production's (1 h), so only the GC removes files. Then
`tessera s3 check` must pass within 90 s: every referenced blob at 3 copies,
no pending GC record, and no unreferenced blob file beyond 3 copies of each
blob the router could not resolve (kept for an op of unknown outcome, or a
failed delete; S3Cluster.wait_s3_check).
One cluster for the whole file. Timing is printed, never asserted.
"""

import hashlib
import os
import random
import re
import sys
import threading
import time
import unittest

import s3_harness as h
from test_kv_cluster import not_running
from test_s3_multipart_clients import generate, parse_versions_page

CLUSTER = None
MiB = 1 << 20
PART_BYTES = 8 * MiB
UPLOAD_RUNS_MAX = 3
OP_ATTEMPTS_MAX = 3
WRITERS = 4
KEYS_PER_WRITER = 3
SIZES = (100, 4 << 10, 64 << 10, 300 << 10, 2 << 20)
S3_CHECK_TIMEOUT_S = 90
# Blob GC and the sweeper (repairs) run every few hundred ms during the
# kills and must never take a blob an acknowledged version references; the
# orphan grace stays production's, so a copy the GC leaves behind shows.
NODE_SETTINGS = "gc_interval_ms: 300 blob_sweep_interval_ms: 500 blob_min_age_s: 1"
BOTO_ATTEMPTS = 8


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-kill", node_settings=NODE_SETTINGS)
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


class KillTestCase(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.addCleanup(self.restart_stopped)

    def restart_stopped(self):
        """Leaves every process running for the next test, whatever happened."""
        for name in not_running(self.c.cli("cluster", "status", "--json", check=False).stdout):
            self.c.cli("cluster", "restart", name, check=False)

    def client(self):
        # Retries enough to ride out a leader election; short read timeout so
        # a request stuck on the dead node is retried instead of waited on.
        return self.c.boto3_client(retries=BOTO_ATTEMPTS, read_timeout=15, connect_timeout=5)

    def bucket_leader(self, bucket):
        return self.c.bucket_leader(self, bucket)

    def wait_converged(self, timeout_s=60):
        self.c.wait_converged(self, timeout_s)

    def get_sha256(self, s3, bucket, key, **kw):
        r = s3.get_object(Bucket=bucket, Key=key, **kw)
        sha, n = hashlib.sha256(), 0
        for block in r["Body"].iter_chunks(MiB):
            sha.update(block)
            n += len(block)
        return r, sha.hexdigest(), n


class KillNodeTest(KillTestCase):
    # --- 1. multipart upload ---------------------------------------------------
    def test_kill_during_multipart_upload(self):
        from boto3.s3.transfer import TransferConfig
        c, bucket, key = self.c, "kill-multipart", "big/hundred.bin"
        s3 = self.client()
        s3.create_bucket(Bucket=bucket)
        src = os.path.join(self.tmp, "hundred.bin")
        size = 100 * MiB
        digest = generate(src, size, "kill-multipart", part_bytes=PART_BYTES)
        victim = self.bucket_leader(bucket)
        cfg = TransferConfig(multipart_threshold=PART_BYTES, multipart_chunksize=PART_BYTES,
                             max_concurrency=4)
        sent, killed_at, lock = [0], [None], threading.Lock()

        def progress(n):
            with lock:
                sent[0] += n
                if killed_at[0] is None and sent[0] >= 30 * MiB:
                    killed_at[0] = sent[0]
                    c.cli("cluster", "kill", victim)

        errors = []
        for run in range(1, UPLOAD_RUNS_MAX + 1):
            try:
                s3.upload_file(src, bucket, key, Config=cfg,
                               Callback=progress if run == 1 else None)
                break
            except Exception as e:  # noqa: BLE001 - a failed run is retried like a user would
                errors.append(f"run {run}: {e!r}")
        print(f"\n[{victim} killed at {killed_at[0]} bytes sent; upload runs: {run}; "
              f"failures: {errors}]", file=sys.stderr)
        self.assertIsNotNone(killed_at[0], "the upload finished before the kill")
        self.assertEqual(len(errors), run - 1)
        self.assertLess(len(errors), UPLOAD_RUNS_MAX,
                        f"the upload failed {len(errors)} times: {errors}\nrouter log:\n"
                        f"{c.log_tail()}")

        def check(label):
            with self.subTest(state=label):
                head = s3.head_object(Bucket=bucket, Key=key)
                self.assertEqual((head["ContentLength"], head["ETag"]), (size, digest.etag()))
                r, sha, n = self.get_sha256(s3, bucket, key)
                self.assertEqual((n, r["ETag"], sha), (size, digest.etag(),
                                                      digest.sha.hexdigest()), label)
                listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
                self.assertEqual([(o["Key"], o["ETag"], o["Size"]) for o in listed],
                                 [(key, digest.etag(), size)])
        check("node down")
        c.cli("cluster", "restart", victim)
        self.wait_converged()
        check("node back")
        s3.delete_object(Bucket=bucket, Key=key)

    # --- 2. versioned overwrite loop -------------------------------------------------
    def test_kill_during_versioned_overwrites(self):
        c, bucket = self.c, "kill-versions"
        s3 = self.client()
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        victim = self.bucket_leader(bucket)
        stop = threading.Event()
        lock = threading.Lock()
        # acked[key]: acknowledged operations in order: (kind, version id, sha256, size, etag)
        acked = {}
        # Requests sent again (botocore's own retries, and every attempt of
        # ours that failed counts as all of botocore's): each may have stored
        # a version nobody acknowledged.
        failed_attempts, lost_ops, counts = [], [], {"before": 0, "after": 0, "resent": 0}
        wrong = []  # acknowledged with a wrong ETag or without a version id
        killed = threading.Event()

        def writer(w):
            import botocore.exceptions
            retryable = (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError)
            client = self.client()
            rnd = random.Random(f"writer-{w}")
            keys = [f"w{w}/k{i}" for i in range(KEYS_PER_WRITER)]
            while not stop.is_set():
                key = rnd.choice(keys)
                deleting = rnd.random() < 0.15
                data = b"" if deleting else rnd.randbytes(rnd.choice(SIZES))
                for attempt in range(1, OP_ATTEMPTS_MAX + 1):
                    try:
                        if deleting:
                            r = client.delete_object(Bucket=bucket, Key=key)
                            op = ("DeleteMarker", r.get("VersionId"), None, None, None)
                            good = r.get("DeleteMarker") is True and op[1]
                        else:
                            r = client.put_object(Bucket=bucket, Key=key, Body=data)
                            etag = f'"{hashlib.md5(data).hexdigest()}"'
                            op = ("Version", r.get("VersionId"),
                                  hashlib.sha256(data).hexdigest(), len(data), etag)
                            good = r["ETag"] == etag and op[1]
                        with lock:
                            if not good:  # a wrong answer is a failure, not retried
                                wrong.append((key, op, r.get("ETag")))
                                return
                            counts["resent"] += r["ResponseMetadata"].get("RetryAttempts", 0)
                            acked.setdefault(key, []).append(op)
                            counts["after" if killed.is_set() else "before"] += 1
                        break
                    except retryable as e:
                        with lock:
                            failed_attempts.append((key, attempt, repr(e)[:300]))
                            counts["resent"] += BOTO_ATTEMPTS
                    except Exception as e:  # noqa: BLE001 - anything else fails the test
                        with lock:
                            wrong.append((key, "exception", repr(e)[:300]))
                        return
                else:
                    with lock:
                        lost_ops.append(key)
                    return  # the key's state is unknown from here: stop this writer

        threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(WRITERS)]
        for t in threads:
            t.start()
        try:
            self.assertTrue(h.wait_until(lambda: counts["before"] >= 60, 120),
                            f"the writers did not get going: {counts} {failed_attempts[:3]}")
            c.cli("cluster", "kill", victim)
            killed.set()
            kill_time = time.monotonic()
            h.wait_until(lambda: counts["after"] >= 150 or time.monotonic() - kill_time > 30
                         or not any(t.is_alive() for t in threads), 40)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=120)
        print(f"\n[{victim} killed after {counts['before']} acknowledged ops; "
              f"{counts['after']} after; requests resent {counts['resent']}; "
              f"failed attempts {len(failed_attempts)}: "
              f"{failed_attempts[:3]}]", file=sys.stderr)
        self.assertEqual(wrong, [], "acknowledged with a wrong answer")
        self.assertEqual(lost_ops, [], f"operations failed {OP_ATTEMPTS_MAX} times: "
                         f"{failed_attempts[-5:]}\nrouter log:\n{c.log_tail()}")
        self.assertGreaterEqual(counts["after"], 20, "writes did not resume after the kill")
        self.check_versions(s3, bucket, acked, counts["resent"], "node down")
        c.cli("cluster", "restart", victim)
        self.wait_converged()
        self.check_versions(s3, bucket, acked, counts["resent"], "node back")

    def check_versions(self, s3, bucket, acked, resent, label):
        listed = {}  # key -> [(kind, version id, is latest, etag, size)] newest first
        for page in s3.get_paginator("list_object_versions").paginate(
                Bucket=bucket, PaginationConfig={"PageSize": 100}):
            # boto3 splits versions and markers; LastModified cannot order
            # them within a millisecond, so order comes from acked below.
            for v in page.get("Versions", []):
                listed.setdefault(v["Key"], []).append(
                    ("Version", v["VersionId"], v["IsLatest"], v["ETag"], v["Size"]))
            for m in page.get("DeleteMarkers", []):
                listed.setdefault(m["Key"], []).append(
                    ("DeleteMarker", m["VersionId"], m["IsLatest"], None, None))
        order = self.listing_order(bucket)
        extras = 0
        live = {}
        for key, ops in sorted(acked.items()):
            with self.subTest(state=label, key=key):
                by_id = {e[1]: e for e in listed.get(key, [])}
                acked_ids = [op[1] for op in ops]
                missing = [v for v in acked_ids if v not in by_id]
                self.assertEqual(missing, [], f"acknowledged versions not listed ({label})")
                extras += len(by_id) - len(acked_ids)
                # Acknowledged versions are listed newest first in ack order.
                listed_order = [v for v in order[key] if v in set(acked_ids)]
                self.assertEqual(listed_order, acked_ids[::-1], label)
                latest = [e for e in listed[key] if e[2]]
                self.assertEqual(len(latest), 1, listed[key])
                self.assertEqual(latest[0][1], order[key][0])
                last = ops[-1]
                self.assertEqual(latest[0][0], last[0], f"latest of {key} ({label})")
                if last[0] == "Version":
                    self.assertEqual((latest[0][3], latest[0][4]), (last[4], last[3]))
                    live[key] = last
                # Every acknowledged version reads back byte-identical.
                for kind, vid, sha, size, etag in ops:
                    if kind != "Version":
                        continue
                    self.assertEqual((by_id[vid][3], by_id[vid][4]), (etag, size), vid)
                    r, got_sha, n = self.get_sha256(s3, bucket, key, VersionId=vid)
                    self.assertEqual((r["VersionId"], r["ETag"], n, got_sha),
                                     (vid, etag, size, sha), f"{key} {vid} ({label})")
        self.assertLessEqual(extras, resent,
                             f"{extras} versions nobody acknowledged, {resent} requests resent "
                             f"({label})")
        # GET, HEAD and LIST agree on the latest state.
        contents = [o for p in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                    for o in p.get("Contents", [])]
        self.assertEqual([o["Key"] for o in contents], sorted(live), label)
        for o in contents:
            with self.subTest(state=label, key=o["Key"], op="head/get"):
                head = s3.head_object(Bucket=bucket, Key=o["Key"])
                self.assertEqual((head["ETag"], head["ContentLength"]), (o["ETag"], o["Size"]))
                r, sha, n = self.get_sha256(s3, bucket, o["Key"])
                self.assertEqual((r["ETag"], n, sha), (o["ETag"], o["Size"], live[o["Key"]][2]))
        for key in sorted(set(acked) - set(live)):
            with self.subTest(state=label, key=key, op="deleted"):
                self.assertEqual(h.S3Raw(self.c).head_status(bucket, key), 404)

    def listing_order(self, bucket):
        """key -> version ids in the listing's document order (newest first)."""
        raw, out = h.S3Raw(self.c), {}
        query = [("versions", ""), ("max-keys", "1000")]
        for _ in range(1000):
            resp = raw.request("GET", f"/{bucket}", query=query)
            self.assertEqual(resp.status, 200, resp)
            fields, entries = parse_versions_page(resp.body)
            for _, key, vid, _, _, _ in entries:
                out.setdefault(key, []).append(vid)
            if fields["IsTruncated"] != "true":
                return out
            query = [("versions", ""), ("max-keys", "1000"),
                     ("key-marker", fields["NextKeyMarker"]),
                     ("version-id-marker", fields["NextVersionIdMarker"])]
        self.fail("the version listing does not end")

    # --- 3. on-disk check, after both kills ----------------------------------------
    def test_z_s3_check_after_kills(self):
        self.wait_converged()
        self.c.wait_s3_check(self, S3_CHECK_TIMEOUT_S)


if __name__ == "__main__":
    unittest.main(verbosity=2)
