#!/usr/bin/env python3
"""A bucket that grows over many `_s3` partitions (splits of the `_s3` table).

Goal: with a small autoadmin split_bytes, 2,000 small objects written into
one bucket with boto3 from four threads make the autoadmin split the
bucket's `_s3` partition several times (the key chosen between objects),
and:
  1. during the writes, every ListObjectsV2 walk (small MaxKeys pages)
     returns keys strictly in order, none twice, and every key acknowledged
     before the walk began;
  2. after the splits (the bucket on at least 3 partitions), ListObjectsV2
     and ListObjectVersions (prefix, delimiter, MaxKeys pagination) return
     every key exactly once, in order; GET, HEAD and LIST agree on size and
     ETag for keys around every split point and a sample of the rest;
  3. a multipart upload begun before the splits completes after them and
     reads back whole;
  4. blob-backed objects overwritten again and again during the splits, and
     overwritten and deleted after them, free their old blobs: `tessera s3
     check` ends clean (GC records whose owners a split moved are checked
     at the owner's group: tessera_s3_gc_checked_at_owner_total, printed);
  5. a storage node killed during the writes and splits and restarted
     loses nothing: the checks above run after it;
  6. `tessera s3 usage` counts every object once (the parent keeps its
     counts of the moved objects, the child counts what it changed since:
     the sum is exact).
Timing is printed, never asserted. One cluster (3 nodes, one per AZ).
"""

import concurrent.futures
import hashlib
import json
import random
import re
import sys
import threading
import time
import unittest

import s3_harness as h
from free_ports import free_ports
from test_kv_cluster import parse_status

CLUSTER = None
BUCKET = "grows"
OBJECTS = 2000
WRITERS = 4
SPLIT_BYTES = 96 * 1024
SPLITS_WITHIN_S = 60
KiB = 1 << 10
# GC rounds far enough apart that GC records are often pending when a split
# moves their owners (the owner rule then checks them at the child).
NODE_SETTINGS = ("gc_interval_ms: 1500 blob_sweep_interval_ms: 1000 blob_min_age_s: 1")
BIG_KEYS = ["p0/big", "p1/big", "p2/big", "p3/big", "p4/big", "q/big"]


def setUpModule():
    global CLUSTER
    h.require_binary()
    # Three storage nodes (one per AZ), three meta replicas, one router and
    # one autoadmin that splits partitions above SPLIT_BYTES.
    CLUSTER = h.S3Cluster("s3-split", router_settings="s3_min_part_bytes: 1024",
                          node_settings=NODE_SETTINGS, nodes_per_az=1, autoadmins=1,
                          autoadmin_settings=f"split_bytes: {SPLIT_BYTES} poll_interval_ms: 300 "
                                             "lease_ms: 2000 dead_after_ms: 30000")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def key_of(i):
    return f"p{i % 5}/d{(i // 5) % 7}/k{i:05d}"


def body_of(key, size=None):
    seed = hashlib.sha256(key.encode()).digest()
    size = size if size is not None else 100 + seed[0]
    return (seed * (size // len(seed) + 1))[:size]


def etag_of(data):
    return '"' + hashlib.md5(data).hexdigest() + '"'


def list_keys(s3, max_keys, **kwargs):
    """Every key of a ListObjectsV2 walk in pages of max_keys, and its common prefixes."""
    keys, prefixes, token = [], [], None
    for _ in range(10000):
        args = dict(Bucket=BUCKET, MaxKeys=max_keys, **kwargs)
        if token:
            args["ContinuationToken"] = token
        page = s3.list_objects_v2(**args)
        keys += [(o["Key"], o["Size"], o["ETag"]) for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page.get("IsTruncated"):
            return keys, prefixes
        token = page["NextContinuationToken"]
    raise AssertionError("the listing does not end")


def list_versions(s3, max_keys, **kwargs):
    keys, prefixes, marker = [], [], {}
    for _ in range(10000):
        page = s3.list_object_versions(Bucket=BUCKET, MaxKeys=max_keys, **marker, **kwargs)
        keys += [v["Key"] for v in page.get("Versions", [])]
        keys += [m["Key"] for m in page.get("DeleteMarkers", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page.get("IsTruncated"):
            return keys, prefixes
        marker = {"KeyMarker": page["NextKeyMarker"]}
        if page.get("NextVersionIdMarker"):
            marker["VersionIdMarker"] = page["NextVersionIdMarker"]
    raise AssertionError("the version listing does not end")


class S3SplitTest(unittest.TestCase):
    def setUp(self):
        self.c = CLUSTER
        self.s3 = self.c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)

    def bucket_prefix(self):
        # Meta's bucket list may lag the create by a moment.
        found = h.wait_until(lambda: re.search(rf"^{re.escape(BUCKET)} id=(\d+) ",
                                               self.c.cli("s3", "buckets").stdout, re.M), 10, 0.5)
        self.assertIsNotNone(found, self.c.cli("s3", "buckets").stdout)
        m = found
        return int(m.group(1)).to_bytes(8, "big")

    def bucket_partitions(self, prefix):
        """The `_s3` partitions overlapping the bucket, in key order."""
        end = (int.from_bytes(prefix, "big") + 1).to_bytes(8, "big")
        parts = [p for p in parse_status(self.c.cli("cluster", "status", "--json", check=False).stdout)
                 if p["table"] == "_s3" and p["start"] < end and (not p["end"] or p["end"] > prefix)]
        return sorted(parts, key=lambda p: p["start"])

    def test_bucket_grows_over_partitions(self):
        s3 = self.s3
        s3.create_bucket(Bucket=BUCKET)
        prefix = self.bucket_prefix()
        first = self.bucket_partitions(prefix)
        self.assertEqual(len(first), 1, first)
        big = {k: body_of(k, 40 * KiB) for k in BIG_KEYS}  # above the inline limit: blobs
        for k, data in big.items():
            s3.put_object(Bucket=BUCKET, Key=k, Body=data)
        mpu_key = "p4/zz-multipart"
        upload = s3.create_multipart_upload(Bucket=BUCKET, Key=mpu_key)["UploadId"]
        part1 = body_of("part1", 8 * KiB)
        e1 = s3.upload_part(Bucket=BUCKET, Key=mpu_key, UploadId=upload, PartNumber=1, Body=part1)["ETag"]

        # 1. Writes from WRITERS threads; a lister walks the bucket meanwhile.
        acked, lock, done = set(), threading.Lock(), threading.Event()
        walks, errors = [], []

        def write(worker):
            client = self.c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)
            for i in range(worker, OBJECTS, WRITERS):
                k = key_of(i)
                client.put_object(Bucket=BUCKET, Key=k, Body=body_of(k))
                with lock:
                    acked.add(k)

        def walk():
            client = self.c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)
            while not done.is_set():
                with lock:
                    before = set(acked)
                try:
                    keys = [k for k, _, _ in list_keys(client, 97)[0]]
                except Exception as e:  # noqa: BLE001 (reported below)
                    errors.append(repr(e))
                    continue
                names = [k for k in keys if not k.endswith("big")]
                if keys != sorted(set(keys)):
                    errors.append(f"walk out of order or repeated ({len(keys)} keys)")
                missing = before - set(names)
                if missing:
                    errors.append(f"walk missed {len(missing)} acknowledged keys, e.g. {sorted(missing)[:3]}")
                walks.append(len(names))

        def overwrite():
            # Old blobs of the big objects queue GC records in whatever
            # partition holds them while the splits move the objects.
            client = self.c.boto3_client(retries=8, read_timeout=30, connect_timeout=5)
            n = 0
            while not writes_done.is_set():
                k = BIG_KEYS[n % len(BIG_KEYS)]
                data = body_of(f"{k}-{n}", 40 * KiB)
                client.put_object(Bucket=BUCKET, Key=k, Body=data)
                big[k] = data
                n += 1
                time.sleep(0.05)

        def crash():
            # A storage node killed (SIGKILL) while splits are under way and
            # restarted: splits in progress finish or are abandoned, nothing
            # acknowledged is lost or listed twice.
            h.wait_until(lambda: len(acked) >= OBJECTS // 3, 60, 0.05)
            self.c.cli("cluster", "kill", "az3-n1")
            time.sleep(2)
            self.c.cli("cluster", "restart", "az3-n1")
            crashed.append(len(acked))

        writes_done, crashed = threading.Event(), []
        started = time.monotonic()
        crasher = threading.Thread(target=crash)
        crasher.start()
        lister = threading.Thread(target=walk)
        lister.start()
        overwriter = threading.Thread(target=overwrite)
        overwriter.start()
        with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
            for f in [pool.submit(write, w) for w in range(WRITERS)]:
                f.result()
        writes_done.set()
        overwriter.join()
        crasher.join()
        self.assertTrue(crashed, "the node was not killed and restarted")
        written_s = time.monotonic() - started
        parts = h.wait_until(lambda: (lambda ps: ps if len(ps) >= 3 else None)(
            self.bucket_partitions(prefix)), SPLITS_WITHIN_S, 1.0)
        done.set()
        lister.join()
        self.assertTrue(parts, f"the bucket is still on {len(self.bucket_partitions(prefix))} "
                               f"partition(s) {SPLITS_WITHIN_S}s after the writes\n"
                               + self.c.cli("autoadmin", "status", check=False).stdout[-3000:])
        print(f"[{OBJECTS} puts in {written_s:.1f}s; {len(parts)} partitions after "
              f"{time.monotonic() - started:.1f}s; {len(walks)} walks; az3-n1 back after "
              f"{crashed[0]} puts]", file=sys.stderr, end=" ")
        self.assertEqual(errors, [])
        self.assertTrue(walks)

        # 2. After the splits: listings, then GET/HEAD/LIST agreement.
        expected = {key_of(i): body_of(key_of(i)) for i in range(OBJECTS)}
        expected.update(big)
        names = sorted(expected)
        listed, _ = list_keys(s3, 113)
        self.assertEqual([k for k, _, _ in listed], names)
        for k, size, etag in listed:
            self.assertEqual((size, etag), (len(expected[k]), etag_of(expected[k])), k)
        _, top = list_keys(s3, 2, Delimiter="/")
        self.assertEqual(top, ["p0/", "p1/", "p2/", "p3/", "p4/", "q/"])
        keys, subs = list_keys(s3, 3, Prefix="p1/", Delimiter="/")
        self.assertEqual(([k for k, _, _ in keys], subs), (["p1/big"], [f"p1/d{d}/" for d in range(7)]))
        keys, _ = list_keys(s3, 7, Prefix="p2/d3/")
        self.assertEqual([k for k, _, _ in keys], [k for k in names if k.startswith("p2/d3/")])
        versions, _ = list_versions(s3, 37)
        self.assertEqual(versions, names)
        vkeys, vsubs = list_versions(s3, 4, Prefix="p3/", Delimiter="/")
        self.assertEqual((vkeys, vsubs), (["p3/big"], [f"p3/d{d}/" for d in range(7)]))
        by_key = {k: (size, etag) for k, size, etag in listed}
        sample = set(random.Random(7).sample(names, 60))
        for p in parts[1:]:  # the keys around every split point
            start = p["start"][8:].split(b"\0")[0].decode(errors="replace")
            i = next((j for j, k in enumerate(names) if k >= start), len(names))
            sample.update(names[max(0, i - 2):i + 2])
        for k in sorted(sample):
            head = s3.head_object(Bucket=BUCKET, Key=k)
            got = s3.get_object(Bucket=BUCKET, Key=k)["Body"].read()
            self.assertEqual(got, expected[k], k)
            self.assertEqual((head["ContentLength"], head["ETag"]), by_key[k], k)

        # 3. The multipart upload begun before the splits completes.
        part2 = body_of("part2", 3 * KiB)
        e2 = s3.upload_part(Bucket=BUCKET, Key=mpu_key, UploadId=upload, PartNumber=2, Body=part2)["ETag"]
        s3.complete_multipart_upload(Bucket=BUCKET, Key=mpu_key, UploadId=upload, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key=mpu_key)["Body"].read(), part1 + part2)

        # 4. Overwrites and deletes after the splits free the old blobs.
        for k in BIG_KEYS[:3]:
            big[k] = body_of(k + "-again", 40 * KiB)
            s3.put_object(Bucket=BUCKET, Key=k, Body=big[k])
        for k in BIG_KEYS[3:]:
            s3.delete_object(Bucket=BUCKET, Key=k)
            del big[k]
        for k, data in big.items():
            self.assertEqual(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read(), data, k)
        self.c.wait_s3_check(self, 60)
        print(f"[gc records checked at their owner's group: "
              f"{self.c.metric('tessera_s3_gc_checked_at_owner_total'):.0f}]", file=sys.stderr, end=" ")

        # 6. Usage: every live object once.
        usage = json.loads(self.c.cli("s3", "usage", BUCKET, "--json").stdout)
        live = OBJECTS + len(big) + 1
        self.assertEqual(usage["objects"], live, usage)
        self.assertEqual(usage["uploads"], 0, usage)


if __name__ == "__main__":
    unittest.main(verbosity=2)
