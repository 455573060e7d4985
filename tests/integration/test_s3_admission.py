#!/usr/bin/env python3
"""S3 admission control (per-bucket request budgets) against a whole cluster.

Goal: prove that a router whose layout sets router_settings
{ s3_bucket_rate s3_bucket_burst } (decision D24) refuses requests
beyond a bucket's budget with 503 SlowDown, "Please reduce your request
rate." in S3's XML (RequestId = x-amz-request-id), before doing any work
for them; that another bucket is unaffected; that the bucket is served
again once its budget refills; that a boto3 client with botocore's default
retries completes every request (it backs off on SlowDown); and that the
router counts admitted and throttled requests per scope. Assertions are on
content and counters, never on timing. One cluster for the whole file.
"""

import re
import time
import unittest
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import s3_harness as h
from s3_harness import S3Raw

CLUSTER = None
RATE = 4     # requests per second per bucket on the router
BURST = 6    # requests at once above it
HOT, COLD = "hot-bucket", "cold-bucket"


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-admission", router_settings=f"s3_bucket_rate: {RATE} "
                                                          f"s3_bucket_burst: {BURST}")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    raw = S3Raw(CLUSTER)
    for bucket in (HOT, COLD):
        wait_for_budget(raw, bucket)
        assert raw.request("PUT", f"/{bucket}").status == 200


def router_http_port():
    with open(CLUSTER.layout) as f:
        m = re.search(r'routers \{[^}]*http_port: (\d+)', f.read())
    return int(m.group(1))


def metric(name, scope):
    with urllib.request.urlopen(f"http://127.0.0.1:{router_http_port()}/metrics",
                                timeout=10) as r:
        text = r.read().decode()
    m = re.search(rf'^{name}\{{scope="{scope}"\}} (\d+)', text, re.M)
    return int(m.group(1)) if m else 0


def wait_for_budget(raw, bucket):
    """Waits (bounded) until `bucket` answers something other than SlowDown."""
    def admitted():
        r = raw.request("HEAD", f"/{bucket}")
        return r.status != 503
    assert h.wait_until(admitted, 30, 0.5), f"{bucket} stays throttled"
    time.sleep(BURST / RATE + 0.5)  # the HEADs took tokens: let the budget refill


def concurrently(fn, n, workers=10):
    """fn(i) for i in range(n) from `workers` threads at once: a burst far
    above the budget's rate however slow the machine is. Results in order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, range(n)))


def burst(raw, bucket, n):
    return concurrently(lambda _: raw.request("GET", f"/{bucket}", query=[("list-type", "2")]),
                        n)


class SlowDown(unittest.TestCase):
    def setUp(self):
        self.raw = S3Raw(CLUSTER)
        wait_for_budget(self.raw, HOT)

    def test_burst_beyond_budget_gets_slow_down_xml(self):
        throttled_before = metric("tessera_router_admission_throttled_total", "bucket")
        answers = burst(self.raw, HOT, 3 * BURST)
        codes = [r.status for r in answers]
        self.assertIn(200, codes)
        self.assertIn(503, codes)
        self.assertTrue(set(codes) <= {200, 503}, codes)
        refused = [r for r in answers if r.status == 503]
        for r in refused:
            err = r.error()
            self.assertEqual(err["Code"], "SlowDown")
            self.assertEqual(err["Message"], "Please reduce your request rate.")
            self.assertEqual(err["RequestId"], r.header("x-amz-request-id"))
            self.assertEqual(err["Resource"], f"/{HOT}")
        self.assertGreaterEqual(
            metric("tessera_router_admission_throttled_total", "bucket") - throttled_before,
            len(refused))
        self.assertGreater(metric("tessera_router_admission_admitted_total", "bucket"), 0)
        # Another bucket of the same user is unaffected right now.
        self.assertEqual([r.status for r in burst(self.raw, COLD, BURST)], [200] * BURST)
        # The hot bucket is served again once its budget refilled.
        wait_for_budget(self.raw, HOT)
        self.assertEqual(burst(self.raw, HOT, 1)[0].status, 200)

    def test_boto3_without_retries_sees_slow_down(self):
        from botocore.exceptions import ClientError
        s3 = CLUSTER.boto3_client(retries=1, max_pool_connections=10)
        n = 5 * BURST

        def put(i):
            try:
                s3.put_object(Bucket=HOT, Key=f"nr/{i}", Body=b"x")
                return None
            except ClientError as e:
                return e.response
        errors = [e for e in concurrently(put, n) if e is not None]
        self.assertTrue(errors, "no request was throttled")
        for e in errors:
            self.assertEqual(e["Error"]["Code"], "SlowDown")
            self.assertEqual(e["Error"]["Message"], "Please reduce your request rate.")
            self.assertEqual(e["ResponseMetadata"]["HTTPStatusCode"], 503)
        # A refused PUT stored nothing.
        wait_for_budget(self.raw, HOT)
        listed = CLUSTER.boto3_client(retries=10).list_objects_v2(Bucket=HOT, Prefix="nr/")
        self.assertEqual(listed["KeyCount"], n - len(errors))

    def test_boto3_default_retries_complete_every_request(self):
        import boto3
        from botocore.config import Config
        # botocore's defaults: no retries setting at all.
        session = boto3.session.Session(aws_access_key_id=CLUSTER.access_key,
                                        aws_secret_access_key=CLUSTER.secret_key,
                                        region_name=h.REGION)
        s3 = session.client("s3", endpoint_url=CLUSTER.http_endpoint,
                            config=Config(s3={"addressing_style": "path"}))
        throttled_before = metric("tessera_router_admission_throttled_total", "bucket")
        n, clients = 3 * BURST, 3

        def put_all(c):  # client c puts keys c, c + clients, ...
            for i in range(c, n, clients):
                s3.put_object(Bucket=HOT, Key=f"retried/{i:03d}", Body=f"{i}".encode())
        concurrently(put_all, clients, workers=clients)
        listed = s3.list_objects_v2(Bucket=HOT, Prefix="retried/")
        self.assertEqual(listed["KeyCount"], n)
        self.assertGreater(metric("tessera_router_admission_throttled_total", "bucket"),
                           throttled_before, "the client was never throttled")
        for i in (0, n - 1):
            body = s3.get_object(Bucket=HOT, Key=f"retried/{i:03d}")["Body"].read()
            self.assertEqual(body, f"{i}".encode())


if __name__ == "__main__":
    unittest.main()
