"""Shared harness of the S3 integration tests (test_s3_*.py).

Goal: give every S3 test file one real local cluster (`tessera cluster up`
on free loopback ports, in a fresh temp dir, always brought down) and
clients that depend on nothing in the session's environment:
  * `scrub_environment()` drops every AWS_* and CA-bundle variable from this
    process, so boto3 reads only what the tests pass it;
  * every client process (aws CLI, s3cmd, rclone, curl) runs with an
    explicit environment: PATH, a UTF-8 locale, HOME in the temp dir, the
    cluster's credentials, region us-east-1, AWS_CONFIG_FILE and
    AWS_SHARED_CREDENTIALS_FILE pointing at files written here, and for
    HTTPS the cluster's HTTPS CA (DIR/tls/ca.pem) as the only CA bundle;
  * `S3Raw` sends hand-made requests (SigV4 signed in Python, aws-chunked
    bodies encoded here) over http.client or a raw socket, for the error
    and bad-input tests that real clients refuse to send.

Standard library + boto3 only. Binary: $TESSERA_BIN (set by ctest). Keep the
temp dir: TESSERA_IT_KEEP=1.
"""

import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
import zlib

from free_ports import free_ports

TESSERA_BIN = os.environ.get("TESSERA_BIN", "")
REGION = "us-east-1"
AZS = ("az1", "az2", "az3")
HTTP_TIMEOUT_S = 30
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

# Variables that would make a client trust or sign with something other than
# what a test passes explicitly.
_SCRUBBED_PREFIXES = ("AWS_", "BOTO_", "RCLONE_", "S3CMD")
_SCRUBBED = ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
             "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


def scrub_environment():
    for name in list(os.environ):
        if name.startswith(_SCRUBBED_PREFIXES) or name in _SCRUBBED:
            del os.environ[name]
    # boto3 in this process reads no ~/.aws files either: every setting is
    # passed explicitly (S3Cluster.boto3_client).
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


scrub_environment()

def wait_until(predicate, timeout_s, interval_s=0.2):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval_s)


def require_binary():
    if not TESSERA_BIN or not os.access(TESSERA_BIN, os.X_OK):
        raise unittest.SkipTest("TESSERA_BIN is not an executable tessera binary")


class S3Cluster:
    """One local cluster (6 nodes in 3 AZs, 3 meta replicas, 1 router) in a
    fresh temp dir, plus the client configuration files for it."""

    def __init__(self, name, router_settings="", node_settings="", meta_settings="",
                 autoadmin_settings=None, nodes_per_az=2, autoadmins=2):
        """router_settings / node_settings / meta_settings: protobuf text of
        the layout's RouterSettings / NodeSettings / MetaSettings
        (proto/tessera/cluster.proto), e.g. 's3_min_part_bytes: 1024'.
        autoadmin_settings: None for no autoadmin; otherwise the text of
        AutoadminSettings ("" for the defaults), and the layout runs
        `autoadmins` instances (az1, az2). `nodes_per_az` storage nodes in
        each of the three AZs."""
        self.router_settings = router_settings
        self.node_settings = node_settings
        self.meta_settings = meta_settings
        self.autoadmin_settings = autoadmin_settings
        self.nodes_per_az = nodes_per_az
        self.autoadmins = autoadmins
        self.autoadmin_http_ports = []
        self.root = tempfile.mkdtemp(prefix=f"tessera-{name}-")
        self.layout = os.path.join(self.root, "layout.textproto")
        self.dir = os.path.join(self.root, "cluster")
        self.home = os.path.join(self.root, "home")
        os.makedirs(self.home)
        self._write_layout()
        # What HTTPS clients trust: the CA that issued the routers' certificate.
        self.ca_bundle = os.path.join(self.dir, "tls", "ca.pem")
        self.access_key = self.secret_key = None

    def _write_layout(self):
        ports = iter(free_ports(3 * self.nodes_per_az * 2 + 3 * 2 + 6 + self.autoadmins))
        lines = ['name: "s3-integration"', 'azs: ["az1", "az2", "az3"]']
        for az in AZS:
            for n in range(1, self.nodes_per_az + 1):
                lines.append(f'nodes {{ name: "{az}-n{n}" az: "{az}" host: "127.0.0.1" '
                             f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        for az in AZS:
            lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                         f"peer_port: {next(ports)} http_port: {next(ports)} }}")
        kv, http_port, self.s3_port, self.s3_tls_port = (next(ports) for _ in range(4))
        self.router_http_port = http_port
        self.router_kv_tls_port, self.router_http_tls_port = next(ports), next(ports)
        lines.append(f'routers {{ name: "router-1" az: "az1" host: "127.0.0.1" kv_port: {kv} '
                     f"http_port: {http_port} s3_port: {self.s3_port} "
                     f"s3_tls_port: {self.s3_tls_port} kv_tls_port: {self.router_kv_tls_port} "
                     f"http_tls_port: {self.router_http_tls_port} }}")
        if self.router_settings:
            lines.append(f"router_settings {{ {self.router_settings} }}")
        if self.node_settings:
            lines.append(f"node_settings {{ {self.node_settings} }}")
        if self.meta_settings:
            lines.append(f"meta_settings {{ {self.meta_settings} }}")
        if self.autoadmin_settings is not None:
            for az in ("az1", "az2")[:self.autoadmins]:
                port = next(ports)
                self.autoadmin_http_ports.append(port)
                lines.append(f'autoadmin {{ name: "autoadmin-{az}" az: "{az}" host: "127.0.0.1" '
                             f"http_port: {port} }}")
            lines.append(f"autoadmin_settings {{ {self.autoadmin_settings} }}")
        with open(self.layout, "w") as f:
            f.write("\n".join(lines) + "\n")

    @property
    def http_endpoint(self):
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def https_endpoint(self):
        return f"https://localhost:{self.s3_tls_port}"

    def endpoint(self, https):
        return self.https_endpoint if https else self.http_endpoint

    # --- CLI ---------------------------------------------------------------
    def cli(self, *args, timeout=120, check=True):
        cmd = [TESSERA_BIN, *args, "--layout", self.layout, "--dir", self.dir]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           text=True, errors="replace", env=self.client_env())
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} -> rc {p.returncode}\nstdout:\n{p.stdout}\n"
                                 f"stderr:\n{p.stderr}")
        return p

    def up(self):
        self.cli("cluster", "up", "--detach", timeout=180)
        with open(os.path.join(self.dir, "credentials")) as f:
            line = next(l for l in f if l.strip() and not l.startswith("#"))
        self.access_key, self.secret_key = line.split()[:2]
        self._write_client_configs()
        ok = wait_until(lambda: self._router_answers(), 30, 0.3)
        if not ok:
            raise AssertionError("the S3 endpoint does not answer")

    def _router_answers(self):
        try:
            return S3Raw(self).request("GET", "/").status == 200
        except OSError:
            return False

    def down(self):
        try:
            self.cli("cluster", "down", timeout=120, check=False)
        finally:
            if os.environ.get("TESSERA_IT_KEEP") != "1":
                shutil.rmtree(self.root, ignore_errors=True)
            else:
                print(f"kept {self.root}", file=sys.stderr)

    def partitions(self):
        """`tessera cluster status --json` parsed (test_kv_cluster.parse_status)."""
        from test_kv_cluster import parse_status
        return parse_status(self.cli("cluster", "status", "--json", check=False).stdout)

    def running_nodes(self):
        """Names of the storage nodes that are running (`cluster status --json`)."""
        report = json.loads(self.cli("cluster", "status", "--json", check=False).stdout or "{}")
        return [p["name"] for p in report.get("processes", [])
                if p["role"] == "node" and p["state"] == "running"]

    def bucket_leader(self, test, bucket):
        """The node leading the `_s3` partition that holds `bucket`."""
        out = self.cli("s3", "buckets").stdout
        m = re.search(rf"^{re.escape(bucket)} id=(\d+) ", out, re.M)
        test.assertIsNotNone(m, out)
        prefix = int(m.group(1)).to_bytes(8, "big")
        for p in self.partitions():
            if p["table"] == "_s3" and p["start"] <= prefix and (not p["end"] or prefix < p["end"]):
                leaders = [r["name"] for r in p["replicas"] if r["leader"]]
                test.assertEqual(len(leaders), 1, p)
                return leaders[0]
        test.fail(f"no _s3 partition holds bucket id {m.group(1)}")

    def wait_converged(self, test, timeout_s=60):
        """Every partition has a leader and every replica is reachable with
        no lag (after a node restarted)."""
        def converged():
            parts = self.partitions()
            return parts and all(
                any(r["leader"] for r in p["replicas"]) and
                all(r["reachable"] and r["lag"] == 0 for r in p["replicas"]) for p in parts)
        if not wait_until(converged, timeout_s, 0.5):
            test.fail("the cluster did not converge after the restart:\n" +
                      self.cli("cluster", "status", check=False).stdout)

    def node_http_ports(self):
        """Storage node name -> its HTTP (health, metrics) port."""
        with open(self.layout) as f:
            text = f.read()
        ports = {name: int(port) for name, port in
                 re.findall(r'nodes \{ name: "([^"]+)".*?http_port: (\d+)', text)}
        added = os.path.join(self.dir, "added_nodes.textproto")  # `cluster add-node`
        if os.path.exists(added):
            with open(added) as f:
                ports.update((name, int(port)) for name, port in
                             re.findall(r'name: "([^"]+)"[^}]*?http_port: (\d+)', f.read()))
        return ports

    def metric(self, name, processes="nodes"):
        """The sum of every series of metric `name` on the storage nodes
        (processes="nodes"), on the router ("router") or on one storage node
        (its name); a process that does not answer counts 0."""
        if processes == "nodes":
            ports = self.node_http_ports().values()
        elif processes == "router":
            ports = [self.router_http_port]
        else:
            ports = [self.node_http_ports()[processes]]
        total = 0.0
        for port in ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
            except OSError:
                continue
            for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M):
                total += float(m.group(1))
        return total

    def unresolved_router_blobs(self):
        """Blobs the router may have left without a record or a GC record:
        kept for an op of unknown outcome, or abandoned after a broken body
        with a delete some replica did not confirm. Counters since the
        router's start."""
        failed_deletes = 0.0
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.router_http_port}/metrics",
                                        timeout=5) as r:
                text = r.read().decode()
        except OSError as e:
            raise AssertionError(f"the router's metrics do not answer: {e}")
        for m in re.finditer(r'^tessera_blob_client_requests_total\{([^}]*)\} (\S+)$', text, re.M):
            if 'op="delete"' in m.group(1) and 'code="OK"' not in m.group(1):
                failed_deletes += float(m.group(2))
        return int(self.metric("tessera_s3_unknown_outcome_blobs_total", "router") + failed_deletes)

    def wait_s3_check(self, test, timeout_s, orphans_known=0):
        """Waits until `tessera s3 check` finds every referenced blob at 3
        copies, no pending GC record and no unreferenced blob file beyond
        what the run may leave for the orphan sweeper: 3 copies of each blob
        the router could not resolve (unresolved_router_blobs) and of
        `orphans_known` blobs the test left itself. Meant for clusters with
        the sweeper's production grace (1 h): only the GC removes files, so
        a GC that leaves a copy behind fails. Returns the last report (dict)."""
        last = {}

        def passes():
            p = self.cli("s3", "check", "--json", check=False, timeout=120)
            last["output"] = p.stdout + p.stderr
            try:
                report = json.loads(p.stdout)
            except ValueError:
                return False
            allowed = 3 * (self.unresolved_router_blobs() + orphans_known)
            last["report"], last["allowed"] = report, allowed
            copies = report["copies"]
            return (copies["0"] == copies["1"] == copies["2"] == 0 and
                    report["stray_files"] == 0 and
                    report["pending_gc_records"] == 0 and report["unreferenced_files"] <= allowed)
        ok = wait_until(passes, timeout_s, 2)
        test.assertTrue(ok, f"`tessera s3 check` not clean within {timeout_s}s (unreferenced files "
                            f"allowed: {last.get('allowed')}): {last.get('output', '')[-3000:]}")
        print(f"[s3 check: {last['report']['unreferenced_files']} unreferenced files, "
              f"{last['allowed']} allowed]", file=sys.stderr, end=" ")
        return last["report"]

    def create_user(self, name):
        """`tessera s3 user create NAME` -> (access key, secret key)."""
        out = self.cli("s3", "user", "create", name).stdout
        fields = dict(line.split(None, 1) for line in out.splitlines() if " " in line)
        return fields["access_key"].strip(), fields["secret_key"].strip()

    def log_tail(self, process="router-1", lines=40):
        path = os.path.join(self.dir, "logs", f"{process}.log")
        try:
            with open(path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError as e:
            return f"(no log: {e})"

    # --- clients -----------------------------------------------------------
    def _write_client_configs(self):
        self.aws_config = os.path.join(self.root, "aws-config")
        self.aws_credentials = os.path.join(self.root, "aws-credentials")
        with open(self.aws_config, "w") as f:
            # Single-part uploads only (multipart comes with part 2).
            f.write(f"[default]\nregion = {REGION}\ns3 =\n  multipart_threshold = 64MB\n"
                    "  multipart_chunksize = 64MB\n")
        with open(self.aws_credentials, "w") as f:
            f.write(f"[default]\naws_access_key_id = {self.access_key}\n"
                    f"aws_secret_access_key = {self.secret_key}\n")
        for https in (False, True):
            with open(self.s3cfg(https), "w") as f:
                host = f"localhost:{self.s3_tls_port}" if https else f"127.0.0.1:{self.s3_port}"
                f.write("[default]\n"
                        f"access_key = {self.access_key}\nsecret_key = {self.secret_key}\n"
                        f"host_base = {host}\nhost_bucket = {host}\n"
                        f"bucket_location = {REGION}\n"
                        f"use_https = {https}\ncheck_ssl_certificate = True\n"
                        f"ca_certs_file = {self.ca_bundle if https else ''}\n"
                        "signature_v2 = False\nenable_multipart = False\n"
                        "progress_meter = False\n")
        self.rclone_conf = os.path.join(self.root, "rclone.conf")
        with open(self.rclone_conf, "w") as f:
            for name, https in (("ts", False), ("tss", True)):
                f.write(f"[{name}]\ntype = s3\nprovider = Other\n"
                        f"access_key_id = {self.access_key}\n"
                        f"secret_access_key = {self.secret_key}\n"
                        f"endpoint = {self.endpoint(https)}\nregion = {REGION}\n"
                        "force_path_style = true\n\n")

    def s3cfg(self, https):
        return os.path.join(self.root, "s3cfg-https" if https else "s3cfg-http")

    def plain_env(self):
        """An environment with nothing a client reads for endpoints, keys or
        trust: PATH, HOME in the temp dir, a UTF-8 locale; no AWS_*, CA
        bundle or proxy variable. For clients configured by files alone."""
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home,
                "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
                "PYTHONIOENCODING": "utf-8", "AWS_EC2_METADATA_DISABLED": "true"}

    def client_env(self, https=False, access_key=None, secret_key=None):
        """The whole environment of a client process (nothing inherited but PATH)."""
        env = self.plain_env()
        if self.access_key:
            env.update({
                "AWS_ACCESS_KEY_ID": access_key or self.access_key,
                "AWS_SECRET_ACCESS_KEY": secret_key or self.secret_key,
                "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
                "AWS_CONFIG_FILE": self.aws_config,
                "AWS_SHARED_CREDENTIALS_FILE": self.aws_credentials,
                "RCLONE_CONFIG": self.rclone_conf,
            })
        if https:
            env["AWS_CA_BUNDLE"] = self.ca_bundle
            env["SSL_CERT_FILE"] = self.ca_bundle  # rclone (Go) and curl
        return env

    def run(self, cmd, https=False, timeout=300, check=True, input_bytes=None, env=None):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=env or self.client_env(https), input=input_bytes)
        out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        if check and p.returncode != 0:
            raise AssertionError(f"{cmd} -> rc {p.returncode}\nstdout:\n{out[-4000:]}\n"
                                 f"stderr:\n{err[-4000:]}\nrouter log:\n{self.log_tail()}")
        return p.returncode, out, err

    def aws(self, *args, https=False, **kw):
        return self.run(["aws", "--endpoint-url", self.endpoint(https), *args], https=https, **kw)

    def s3cmd(self, *args, https=False, **kw):
        return self.run(["s3cmd", "-c", self.s3cfg(https), "--disable-multipart", *args],
                        https=https, **kw)

    def rclone(self, *args, https=False, **kw):
        # HTTPS trusts the cluster's HTTPS CA through SSL_CERT_FILE only:
        # rclone 1.60 cannot use a custom CA bundle for s3 remotes, neither
        # --ca-cert nor AWS_CA_BUNDLE ("HTTPClient's transport unsupported
        # type"), but Go's TLS reads SSL_CERT_FILE.
        env = self.client_env(https)
        env.pop("AWS_CA_BUNDLE", None)
        return self.run(["rclone", "--config", self.rclone_conf, "--s3-upload-cutoff", "64M",
                         "--retries", "1", "--low-level-retries", "3", *args],
                        https=https, env=env, **kw)

    def curl(self, *args, https=False, **kw):
        extra = ["--cacert", self.ca_bundle] if https else []
        return self.run(["curl", "-sS", "--noproxy", "*", *extra, *args], https=https, **kw)

    def boto3_client(self, https=False, access_key=None, secret_key=None, signature=None,
                     retries=2, region=REGION, **config):
        import boto3
        from botocore.config import Config
        config.setdefault("connect_timeout", 10)
        config.setdefault("read_timeout", 60)
        cfg = Config(region_name=region, signature_version=signature or "s3v4",
                     s3={"addressing_style": "path"},
                     retries={"max_attempts": retries, "mode": "standard"}, **config)
        session = boto3.session.Session(aws_access_key_id=access_key or self.access_key,
                                        aws_secret_access_key=secret_key or self.secret_key,
                                        region_name=region)
        return session.client("s3", endpoint_url=self.endpoint(https),
                              verify=self.ca_bundle if https else True, config=cfg)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def serve_directory(test, directory, port):
    """Serves `directory` over plain HTTP on 127.0.0.1:`port` (a page on
    another origin than the router) until the test ends."""
    import http.server
    import threading
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=directory, **kw)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)


def chromium_dom(test, cluster, url, budget_ms=20000):
    """Loads `url` in headless Chromium (a fresh profile under test.tmp,
    the cluster's plain environment) and returns the DOM of the page it
    ends on (--dump-dom), after `budget_ms` of virtual time."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=test.tmp)
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
         f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
        timeout=120, env=cluster.plain_env())
    test.assertEqual(p.returncode, 0, p.stderr[-2000:])
    return p.stdout, p.stderr


def canonical_id(user_name):
    """The S3 canonical user id Tessera gives user `user_name` (64 hex digits)."""
    return hashlib.sha256(b"tessera-s3-user/" + user_name.encode()).hexdigest()


# --- hand-made requests ----------------------------------------------------------

def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def uri_encode(text, slash=True):
    """AWS UriEncode (RFC 3986 unreserved kept); '/' kept when slash=True."""
    return urllib.parse.quote(text, safe="-_.~/" if slash else "-_.~")


def key_path(bucket, key):
    """The request path for an object key (str or bytes) as clients send it."""
    if isinstance(key, bytes):
        return "/" + bucket + "/" + urllib.parse.quote_from_bytes(key, safe="-_.~/")
    return "/" + bucket + "/" + uri_encode(key)


def amz_now(offset_s=0):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset_s)
    return t.strftime("%Y%m%dT%H%M%SZ")


def signing_key(secret, day, region=REGION):
    k = hmac.new(("AWS4" + secret).encode(), day.encode(), hashlib.sha256).digest()
    for part in (region, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def md5_b64(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


class Signed:
    """What a SigV4 signature produced (the chunk encoder needs the parts)."""

    def __init__(self, headers, signature, key, scope, amz_date):
        self.headers, self.signature, self.key = headers, signature, key
        self.scope, self.amz_date = scope, amz_date


def sign_v4(method, host, path, query, headers, payload_hash, access_key, secret_key,
            amz_date=None, region=REGION, credential_region=None):
    """SigV4 header auth. `path` is the path as sent; `query` a list of
    (name, value) decoded pairs. Returns Signed with every header to send."""
    amz_date = amz_date or amz_now()
    day = amz_date[:8]
    h = {k.lower(): str(v) for k, v in headers.items()}
    h["host"] = host
    h["x-amz-date"] = amz_date
    h["x-amz-content-sha256"] = payload_hash
    names = sorted(h)
    canonical_headers = "".join(f"{n}:{' '.join(h[n].split())}\n" for n in names)
    canonical_query = "&".join(f"{n}={v}" for n, v in sorted(
        (uri_encode(n, False), uri_encode(v or "", False)) for n, v in query))
    canonical = "\n".join([method, path, canonical_query, canonical_headers, ";".join(names),
                           payload_hash])
    scope = f"{day}/{credential_region or region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, sha256_hex(canonical.encode())])
    key = signing_key(secret_key, day, credential_region or region)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                          f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return Signed(h, signature, key, scope, amz_date)


def aws_chunked_signed(signed, data, chunk_bytes=64 << 10, trailer=None, corrupt_chunk=None):
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] body of `data`: chunks
    signed in a chain from the seed signature. `trailer`: (name, value) sent
    with a trailer signature. `corrupt_chunk`: index of a chunk whose
    signature is flipped."""
    chunks = [data[i:i + chunk_bytes] for i in range(0, len(data), chunk_bytes)] + [b""]
    out, previous = bytearray(), signed.signature
    for i, chunk in enumerate(chunks):
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", signed.amz_date, signed.scope, previous,
                             EMPTY_SHA256, sha256_hex(chunk)])
        sig = hmac.new(signed.key, to_sign.encode(), hashlib.sha256).hexdigest()
        previous = sig
        if i == corrupt_chunk:
            sig = ("0" if sig[0] != "0" else "1") + sig[1:]
        out += f"{len(chunk):x};chunk-signature={sig}\r\n".encode() + chunk
        if chunk:
            out += b"\r\n"
    if trailer:
        name, value = trailer
        line = f"{name}:{value}\n"
        to_sign = "\n".join(["AWS4-HMAC-SHA256-TRAILER", signed.amz_date, signed.scope, previous,
                             sha256_hex(line.encode())])
        sig = hmac.new(signed.key, to_sign.encode(), hashlib.sha256).hexdigest()
        out += f"{name}:{value}\r\nx-amz-trailer-signature:{sig}\r\n".encode()
    out += b"\r\n"
    return bytes(out)


def aws_chunked_unsigned(data, trailer, chunk_bytes=64 << 10):
    """STREAMING-UNSIGNED-PAYLOAD-TRAILER body: plain chunks, then the trailer."""
    out = bytearray()
    for i in range(0, len(data), chunk_bytes):
        chunk = data[i:i + chunk_bytes]
        out += f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    out += b"0\r\n"
    name, value = trailer
    out += f"{name}:{value}\r\n\r\n".encode()
    return bytes(out)


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def error(self):
        """The S3 error document as a dict (Code, Message, Resource, RequestId, ...)."""
        root = ET.fromstring(self.body)
        assert root.tag == "Error", self.body
        return {child.tag: (child.text or "") for child in root}

    def __repr__(self):
        return f"Response({self.status}, {self.headers}, {self.body[:600]!r})"


class S3Raw:
    """Hand-made S3 requests to one cluster's router."""

    def __init__(self, cluster, https=False, access_key=None, secret_key=None):
        self.cluster, self.https = cluster, https
        self.access_key = access_key or cluster.access_key
        self.secret_key = secret_key or cluster.secret_key
        self.port = cluster.s3_tls_port if https else cluster.s3_port
        self.host = f"{'localhost' if https else '127.0.0.1'}:{self.port}"

    def _connection(self, timeout):
        if self.https:
            ctx = ssl.create_default_context(cafile=self.cluster.ca_bundle)
            return http.client.HTTPSConnection("localhost", self.port, timeout=timeout,
                                               context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def sign(self, method, path, query=(), headers=None, payload_hash=EMPTY_SHA256, **kw):
        return sign_v4(method, self.host, path, list(query), headers or {}, payload_hash,
                       kw.pop("access_key", self.access_key), kw.pop("secret_key", self.secret_key),
                       **kw)

    def request(self, method, path, query=(), headers=None, body=b"", sign=True,
                payload_hash=None, timeout=HTTP_TIMEOUT_S, **sign_kw):
        """Sends one request (SigV4-signed unless sign=False; payload hash:
        the body's SHA-256 unless given). Returns Response."""
        headers = dict(headers or {})
        if sign:
            ph = payload_hash if payload_hash is not None else sha256_hex(body)
            headers = self.sign(method, path, query, headers, ph, **sign_kw).headers
        return self.send(method, path, query, headers, body, timeout=timeout)

    def send(self, method, path, query=(), headers=None, body=b"", timeout=HTTP_TIMEOUT_S):
        target = path
        if query:
            target += "?" + "&".join(
                f"{uri_encode(n, False)}={uri_encode(v, False)}" if v is not None
                else uri_encode(n, False) for n, v in query)
        conn = self._connection(timeout)
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            headers = dict(headers or {})
            headers.setdefault("host", self.host)
            if body or method in ("PUT", "POST"):
                if not any(k.lower() in ("content-length", "transfer-encoding") for k in headers):
                    headers["Content-Length"] = str(len(body))
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
            data = resp.read()
            return Response(resp.status, resp.getheaders(), data)
        finally:
            conn.close()

    def send_raw(self, head, body_parts, timeout=HTTP_TIMEOUT_S, shut_write=True):
        """Writes `head` (bytes, the request line and headers) and the body
        pieces on a plain-HTTP socket, half-closes when `shut_write`, and returns
        the first response (status, raw headers, body) or None if the server
        closed without one."""
        sock = socket.create_connection(("127.0.0.1", self.cluster.s3_port), timeout=timeout)
        try:
            sock.sendall(head)
            for part in body_parts:
                sock.sendall(part)
            if shut_write:
                sock.shutdown(socket.SHUT_WR)
            data = bytearray()
            while True:
                try:
                    got = sock.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not got:
                    break
                data += got
                if b"\r\n\r\n" in data and _complete(data):
                    break
        finally:
            sock.close()
        if not data:
            return None
        head_bytes, _, rest = bytes(data).partition(b"\r\n\r\n")
        lines = head_bytes.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = [tuple(x.strip() for x in l.split(":", 1)) for l in lines[1:] if ":" in l]
        return Response(status, headers, rest)

    def head_status(self, bucket, key):
        return self.request("HEAD", key_path(bucket, key)).status


def _complete(data):
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(rest) >= int(value.strip())
    return False


def raw_head(method, target, host, headers):
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "host"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class ClusterTestCase(unittest.TestCase):
    """Base of the S3 integration test classes: `self.c` is the test
    module's CLUSTER (started by its setUpModule), `self.tmp` a scratch
    directory removed after each test, whose duration is printed."""

    def setUp(self):
        self.c = sys.modules[type(self).__module__].CLUSTER
        self.tmp = tempfile.mkdtemp(dir=self.c.root)
        self.started = time.monotonic()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        print(f"[{self.id().split('.')[-1]}: {time.monotonic() - self.started:.1f}s]",
              file=sys.stderr, end=" ")

    def assert_client_error(self, call, code, status, **kw):
        """call(**kw) raises botocore's ClientError with this S3 code and
        HTTP status; returns the error response."""
        import botocore.exceptions
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            call(**kw)
        err = e.exception.response
        self.assertEqual((err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]),
                         (code, status), err)
        return err
