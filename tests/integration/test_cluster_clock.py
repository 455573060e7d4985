#!/usr/bin/env python3
"""Clock faults through admin.faults (`tessera cluster clock`,
common/fault_clock.h).

Goal: an offset set on the metadata replicas moves the wall clock they
stamp records with (a bucket created under a one-day offset has a
CreationDate a day ahead), clearing it brings the stamps back to real time,
a skew within the lease drift bound leaves the cluster serving, and bad
input (a router target, a skew past its limit) is refused with a message.
"""

import datetime
import sys
import unittest
import xml.etree.ElementTree as ET

import s3_harness as h

CLUSTER = None
METAS = ("meta-az1", "meta-az2", "meta-az3")
DAY_MS = 86_400_000
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def setUpModule():
    global CLUSTER
    h.require_binary()
    h.scrub_environment()
    CLUSTER = h.S3Cluster("clock")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def creation_date(bucket):
    """The bucket's CreationDate in ListBuckets, as an aware datetime."""
    reply = h.S3Raw(CLUSTER).request("GET", "/")
    assert reply.status == 200, reply
    for b in ET.fromstring(reply.body).iter(f"{NS}Bucket"):
        if b.findtext(f"{NS}Name") == bucket:
            text = b.findtext(f"{NS}CreationDate")
            return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    raise AssertionError(f"bucket {bucket} not listed: {reply.body[:500]!r}")


def create_bucket(test, name):
    reply = h.S3Raw(CLUSTER).request("PUT", f"/{name}")
    test.assertEqual(reply.status, 200, reply.body[:300])


class ClusterClockTest(unittest.TestCase):
    def set_clock(self, *args):
        return CLUSTER.cli("cluster", "clock", *METAS, *args)

    def test_offset_moves_meta_timestamps_and_clears(self):
        out = self.set_clock("--offset-ms", str(DAY_MS)).stdout
        for m in METAS:
            self.assertIn(f"{m}: wall clock offset {DAY_MS} ms", out)
        create_bucket(self, "clock-ahead")
        ahead = creation_date("clock-ahead") - datetime.datetime.now(datetime.timezone.utc)
        print(f"CreationDate under a one-day offset: {ahead} ahead", file=sys.stderr)
        self.assertGreater(ahead, datetime.timedelta(hours=23))
        self.assertLess(ahead, datetime.timedelta(hours=25))

        self.set_clock("--offset-ms", "0")
        create_bucket(self, "clock-now")
        drift = creation_date("clock-now") - datetime.datetime.now(datetime.timezone.utc)
        self.assertLess(abs(drift), datetime.timedelta(minutes=5))

    def test_skew_within_the_drift_bound_keeps_the_cluster_serving(self):
        out = CLUSTER.cli("cluster", "clock", "az1", "--skew-ppm", "-9000").stdout
        self.assertIn("az1-n1: wall clock offset 0 ms, monotonic skew -9000 ppm", out)
        try:
            create_bucket(self, "clock-skewed")
            reply = h.S3Raw(CLUSTER).request("PUT", "/clock-skewed/k", body=b"hello")
            self.assertEqual(reply.status, 200, reply.body[:300])
            reply = h.S3Raw(CLUSTER).request("GET", "/clock-skewed/k")
            self.assertEqual((reply.status, reply.body), (200, b"hello"))
        finally:
            CLUSTER.cli("cluster", "clock", "az1", "--skew-ppm", "0")

    def test_bad_input_is_refused_with_a_message(self):
        router = CLUSTER.cli("cluster", "clock", "router-1", "--offset-ms", "5", check=False)
        self.assertEqual(router.returncode, 2, router.stdout + router.stderr)
        self.assertIn("only storage nodes and meta replicas", router.stderr)
        too_fast = CLUSTER.cli("cluster", "clock", "az1-n1", "--skew-ppm", "600000", check=False)
        self.assertNotEqual(too_fast.returncode, 0)
        self.assertIn("600000", too_fast.stderr)
        unknown = CLUSTER.cli("cluster", "clock", "nowhere", "--offset-ms", "5", check=False)
        self.assertEqual(unknown.returncode, 2)
        self.assertIn("unknown process or AZ: nowhere", unknown.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
