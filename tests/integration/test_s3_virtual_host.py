#!/usr/bin/env python3
"""Virtual-hosted-style S3 addressing against a whole local Tessera cluster.

Goal: prove that a cluster started by `tessera cluster up` with no S3
setting serves <bucket>.s3.localhost (its default base domain) over HTTP and
HTTPS (the clients verify the cluster's own certificate, whose SANs cover
*.s3.localhost), for boto3 (bucket and object round trip, ListObjectsV2),
presigned GETs (SigV4 and SigV2) fetched by curl on the virtual host, and
the aws CLI with `addressing_style = virtual`; and that every other host
(s3.localhost itself, localhost, 127.0.0.1, a name outside the base
domain) is served path style.

No test depends on system DNS: this process resolves every name ending in
".localhost" to 127.0.0.1 (socket.getaddrinfo patched), the aws CLI gets
the same patch from a test-written sitecustomize.py on its PYTHONPATH, and
curl gets --resolve. One cluster for the whole file.
"""

import os
import socket
import tempfile
import unittest
import urllib.parse

import s3_harness as h

CLUSTER = None
BASE_DOMAIN = "s3.localhost"

_real_getaddrinfo = socket.getaddrinfo


def _loopback_getaddrinfo(host, *args, **kwargs):
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and host.endswith(".localhost"):
        host = "127.0.0.1"
    return _real_getaddrinfo(host, *args, **kwargs)


SITECUSTOMIZE = '''\
import socket
_real = socket.getaddrinfo
def _loopback(host, *args, **kwargs):
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and host.endswith(".localhost"):
        host = "127.0.0.1"
    return _real(host, *args, **kwargs)
socket.getaddrinfo = _loopback
'''


def setUpModule():
    global CLUSTER
    h.require_binary()
    socket.getaddrinfo = _loopback_getaddrinfo
    unittest.addModuleCleanup(setattr, socket, "getaddrinfo", _real_getaddrinfo)
    CLUSTER = h.S3Cluster("s3-vhost")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def endpoint(https, host=BASE_DOMAIN):
    port = CLUSTER.s3_tls_port if https else CLUSTER.s3_port
    return f"{'https' if https else 'http'}://{host}:{port}"


def client(https, style="virtual", host=BASE_DOMAIN, signature="s3v4"):
    """A boto3 client on `host`; records the Host of every request it sends."""
    import boto3
    from botocore.config import Config
    cfg = Config(region_name=h.REGION, signature_version=signature,
                 s3={"addressing_style": style}, retries={"max_attempts": 2, "mode": "standard"},
                 connect_timeout=10, read_timeout=60)
    session = boto3.session.Session(aws_access_key_id=CLUSTER.access_key,
                                    aws_secret_access_key=CLUSTER.secret_key,
                                    region_name=h.REGION)
    c = session.client("s3", endpoint_url=endpoint(https, host),
                       verify=CLUSTER.ca_bundle if https else True, config=cfg)
    c.sent_hosts = []
    c.meta.events.register("before-send.s3",
                           lambda request, **_: c.sent_hosts.append(
                               urllib.parse.urlsplit(request.url).hostname))
    return c


class VirtualHostedBoto3(unittest.TestCase):
    def round_trip(self, https):
        bucket = "vhost-https" if https else "vhost-http"
        s3 = client(https)
        s3.create_bucket(Bucket=bucket)
        self.assertEqual(s3.sent_hosts[-1], f"{bucket}.{BASE_DOMAIN}")
        names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
        self.assertIn(bucket, names)
        self.assertEqual(s3.sent_hosts[-1], BASE_DOMAIN)  # service level: the base domain
        keys = ["a.txt", "dir/b.txt", "dir/c d+e.txt"]
        for i, key in enumerate(keys):
            s3.put_object(Bucket=bucket, Key=key, Body=f"body {i}".encode())
        self.assertEqual(s3.sent_hosts[-1], f"{bucket}.{BASE_DOMAIN}")
        for i, key in enumerate(keys):
            self.assertEqual(s3.get_object(Bucket=bucket, Key=key)["Body"].read(),
                             f"body {i}".encode())
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="dir/", Delimiter="/")
        self.assertEqual([o["Key"] for o in listed.get("Contents", [])],
                         ["dir/b.txt", "dir/c d+e.txt"])
        self.assertEqual(listed["KeyCount"], 2)
        everything = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
        self.assertEqual([o["Key"] for o in everything["Contents"]], ["a.txt"])
        self.assertEqual([p["Prefix"] for p in everything["CommonPrefixes"]], ["dir/"])
        for key in keys:
            s3.delete_object(Bucket=bucket, Key=key)
        self.assertEqual(s3.list_objects_v2(Bucket=bucket)["KeyCount"], 0)
        s3.delete_bucket(Bucket=bucket)
        self.assertNotIn(bucket, [b["Name"] for b in s3.list_buckets()["Buckets"]])
        self.assertTrue(all(host.endswith(BASE_DOMAIN) for host in s3.sent_hosts))

    def test_round_trip_http(self):
        self.round_trip(https=False)

    def test_round_trip_https_verifies_the_cluster_certificate(self):
        self.round_trip(https=True)


class PresignedOnTheVirtualHost(unittest.TestCase):
    BUCKET = "vhost-presigned"
    DATA = b"presigned bytes \x00\x01"

    @classmethod
    def setUpClass(cls):
        s3 = client(False)
        s3.create_bucket(Bucket=cls.BUCKET)
        s3.put_object(Bucket=cls.BUCKET, Key="p/obj", Body=cls.DATA)

    def fetch(self, url, https):
        parts = urllib.parse.urlsplit(url)
        self.assertEqual(parts.hostname, f"{self.BUCKET}.{BASE_DOMAIN}")
        self.assertFalse(parts.path.startswith(f"/{self.BUCKET}/"))  # virtual, not path
        out_dir = tempfile.mkdtemp(dir=CLUSTER.root)
        out = os.path.join(out_dir, "body")
        _, status, _ = CLUSTER.curl("--resolve", f"{parts.hostname}:{parts.port}:127.0.0.1",
                                    "-o", out, "-w", "%{http_code}", url, https=https)
        with open(out, "rb") as f:
            return status, f.read()

    def check(self, signature, https):
        s3 = client(https, signature=signature)
        url = s3.generate_presigned_url("get_object", Params={"Bucket": self.BUCKET,
                                                              "Key": "p/obj"}, ExpiresIn=300)
        status, body = self.fetch(url, https)
        self.assertEqual(status, "200", body)
        self.assertEqual(body, self.DATA)
        # The same URL with its signature altered is refused.
        bad = url.replace("Signature=", "Signature=0") if signature == "s3" else \
            url.replace("X-Amz-Signature=", "X-Amz-Signature=0")
        status, body = self.fetch(bad, https)
        self.assertEqual(status, "403", body)
        self.assertIn(b"SignatureDoesNotMatch", body)

    def test_sigv4_http(self):
        self.check("s3v4", https=False)

    def test_sigv4_https(self):
        self.check("s3v4", https=True)

    def test_sigv2_http(self):
        self.check("s3", https=False)

    def test_sigv2_https(self):
        self.check("s3", https=True)


class AwsCliVirtual(unittest.TestCase):
    def cli_env(self, https):
        site = os.path.join(CLUSTER.root, "vhost-site")
        os.makedirs(site, exist_ok=True)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write(SITECUSTOMIZE)
        config = os.path.join(CLUSTER.root, "aws-config-virtual")
        with open(config, "w") as f:
            f.write(f"[default]\nregion = {h.REGION}\ns3 =\n  addressing_style = virtual\n"
                    "  multipart_threshold = 64MB\n")
        env = CLUSTER.client_env(https)
        env["AWS_CONFIG_FILE"] = config
        env["PYTHONPATH"] = site
        return env

    def check(self, https):
        bucket = "vhost-cli-https" if https else "vhost-cli-http"
        client(https).create_bucket(Bucket=bucket)
        src = os.path.join(CLUSTER.root, "cli-src")
        data = os.urandom(100_000)
        with open(src, "wb") as f:
            f.write(data)
        env = self.cli_env(https)
        aws = ["aws", "--endpoint-url", endpoint(https), "--debug"]
        _, _, err = CLUSTER.run(aws + ["s3", "cp", src, f"s3://{bucket}/cli/obj"], https=https,
                                env=env)
        # The CLI really addressed the bucket by host.
        self.assertIn(f"{bucket}.{BASE_DOMAIN}", err)
        _, out, _ = CLUSTER.run(aws[:3] + ["s3", "ls", f"s3://{bucket}/cli/"], https=https,
                                env=env)
        self.assertIn("obj", out)
        self.assertIn("100000", out)
        dst = os.path.join(CLUSTER.root, "cli-dst")
        CLUSTER.run(aws[:3] + ["s3", "cp", f"s3://{bucket}/cli/obj", dst], https=https, env=env)
        with open(dst, "rb") as f:
            self.assertEqual(f.read(), data)

    def test_cli_http(self):
        self.check(https=False)

    def test_cli_https(self):
        self.check(https=True)


class OtherHostsArePathStyle(unittest.TestCase):
    def check(self, host, https=False):
        bucket = "pathstyle-" + host.replace(".", "-").replace("localhost", "lh")
        s3 = client(https, style="path", host=host)
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="k", Body=b"path style")
        self.assertEqual(s3.get_object(Bucket=bucket, Key="k")["Body"].read(), b"path style")
        self.assertEqual(set(s3.sent_hosts), {host})
        # The object is the same one the virtual host serves.
        self.assertEqual(client(False).get_object(Bucket=bucket, Key="k")["Body"].read(),
                         b"path style")
        s3.delete_object(Bucket=bucket, Key="k")
        s3.delete_bucket(Bucket=bucket)

    def test_base_domain_itself(self):
        self.check(BASE_DOMAIN)

    def test_host_outside_the_base_domain(self):
        self.check("elsewhere.localhost")

    def test_localhost_https(self):
        self.check("localhost", https=True)

    def test_loopback_address(self):
        self.check("127.0.0.1")

    def test_bucket_of_the_host_and_of_the_path_differ(self):
        # Virtual-hosted: the Host names the bucket, the whole path is the key.
        s3 = client(False)
        s3.create_bucket(Bucket="vhost-outer")
        raw = h.S3Raw(CLUSTER)
        raw.host = f"vhost-outer.{BASE_DOMAIN}:{CLUSTER.s3_port}"
        r = raw.request("PUT", "/vhost-inner/key", body=b"x")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(s3.get_object(Bucket="vhost-outer", Key="vhost-inner/key")["Body"].read(),
                         b"x")


if __name__ == "__main__":
    unittest.main()
