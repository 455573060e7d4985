#!/usr/bin/env python3
"""Integration tests of a whole local Tessera cluster through its router.

Goal: prove, end to end on real processes (3 metadata replicas, 6 storage
nodes in 3 AZs, 1 router, started with `tessera cluster up`), that
  1. writes land on three replicas in three AZs, strong reads see the latest
     acknowledged write, and scans return keys in order across partitions;
  2. killing a partition leader's node (SIGKILL) under a write loop loses no
     acknowledged write, writes resume quickly and the node catches up;
  3. cutting one AZ off keeps writes going and the cut replicas converge
     after heal; with no majority anywhere writes fail fast with a clear
     error and a refused (503) write never becomes visible;
  4. the router's MemDS load per client request is the same with a cold and
     a warm route cache (counters from /metrics, not timing);
  5. bad input gets clear errors (404 unknown table, 401 no token, 403
     tampered token, 400 bad escape) and the router keeps serving;
  6. `tessera kv put/get/del/scan` speak the native KV API on the router's
     kv_port (its counters move; a wrong secret is refused), and HTTP
     requests signed with TK1-HMAC-SHA256 are accepted while tampered,
     stale or unknown-key signatures get 403.

Self-contained: Python 3 standard library only; every cluster gets free
loopback ports, its own layout file and cluster directory in a fresh temp
dir, and is always brought down (`tessera cluster down`) at the end.
Binary: $TESSERA_BIN (set by ctest). Keep the temp dir: TESSERA_IT_KEEP=1.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from free_ports import free_ports
from kv_harness import scan_page

TESSERA_BIN = os.environ.get("TESSERA_BIN", "")
PARTITIONS = 4
HTTP_TIMEOUT_S = 15  # the router's own deadline is 5 s; this only catches hangs
AZS = ("az1", "az2", "az3")


def write_layout(path):
    """3 AZs x 2 storage nodes, one meta replica per AZ, one router in az1
    (the shape of cluster/local.textproto). Returns the router's HTTP port."""
    ports = iter(free_ports(6 * 2 + 3 * 2 + 4))
    lines = ['name: "integration"', 'azs: ["az1", "az2", "az3"]']
    for az in AZS:
        for n in (1, 2):
            lines.append(
                f'nodes {{ name: "{az}-n{n}" az: "{az}" host: "127.0.0.1" '
                f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    for az in AZS:
        lines.append(
            f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
            f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    kv, http, s3, s3_tls = next(ports), next(ports), next(ports), next(ports)
    lines.append(
        f'routers {{ name: "router-1" az: "az1" host: "127.0.0.1" kv_port: {kv} '
        f"http_port: {http} s3_port: {s3} s3_tls_port: {s3_tls} }}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return http


def sign_request(access_key, secret, method, path, query, body, ts, headers=None):
    """Authorization value of a signed HTTP KV request (docs/formats/credentials.md);
    `headers`: Content-Type, If-Match, If-None-Match as the request sends them."""
    headers = {k.lower(): v.strip() for k, v in (headers or {}).items()}
    string_to_sign = "\n".join(["TK1-HMAC-SHA256", str(ts), method, path, query] +
                                [f"{name}:{headers.get(name, '')}"
                                 for name in ("content-type", "if-match", "if-none-match")] +
                                [hashlib.sha256(body).hexdigest()])
    sig = hmac.new(secret.encode(), string_to_sign.encode(), hashlib.sha256).hexdigest()
    return f"TK1-HMAC-SHA256 Credential={access_key}, Timestamp={ts}, Signature={sig}"


def read_credential(cluster_dir):
    """(access_key, secret_key) of the first credential line."""
    with open(os.path.join(cluster_dir, "credentials")) as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                access, secret = line.split()
                return access, secret
    raise AssertionError("no credential")


def parse_status(text):
    """`tessera cluster status --json` -> list of partitions:
    {table, start, end (b"" = end of table), group, epoch, changing,
    replicas: [{name, leader, applied, lag, reachable, learner, log}]}
    (applied and lag are None for an unreachable replica). Output that is
    not a status report (the command failed) gives no partitions."""
    try:
        report = json.loads(text)
    except ValueError:
        return []
    parts = []
    for p in report.get("partitions", []):
        replicas = [{"name": r["name"], "leader": r["leader"], "reachable": r["reachable"],
                     "applied": int(r["applied"]) if r["reachable"] else None,
                     "lag": int(r["lag"]) if r["reachable"] else None,
                     "learner": r["learner"], "log": r["log_only"]} for r in p["replicas"]]
        parts.append({"table": p["table"], "start": base64.b64decode(p["start_key"]),
                      "end": base64.b64decode(p["end_key"]), "group": int(p["group"]),
                      "epoch": int(p["epoch"]), "changing": p["changing"], "replicas": replicas})
    return parts


def not_running(text):
    """`tessera cluster status --json` -> names of the storage nodes, meta
    replicas and routers that are down or paused."""
    try:
        report = json.loads(text)
    except ValueError:
        return []
    return [p["name"] for p in report.get("processes", [])
            if p["role"] in ("node", "meta", "router") and p["state"] in ("down", "paused")]


def parse_metrics(text):
    """Prometheus text -> {metric name: sum over its series}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


def wait_until(predicate, timeout_s, interval_s=0.2):
    """Polls predicate() until it returns a truthy value; returns the last value."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval_s)


class Cluster:
    """One local cluster in a fresh temp dir, driven through the CLI and HTTP."""

    def __init__(self, partitions=PARTITIONS):
        self.root = tempfile.mkdtemp(prefix="tessera-it-")
        self.layout = os.path.join(self.root, "layout.textproto")
        self.dir = os.path.join(self.root, "cluster")
        self.http_port = write_layout(self.layout)
        self.partitions = partitions
        self.token = None

    # --- CLI ---------------------------------------------------------------
    def cli(self, *args, timeout=120, check=True):
        cmd = [TESSERA_BIN] + list(args[:2]) + ["--layout", self.layout, "--dir", self.dir] + list(args[2:])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           text=True, errors="replace")
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} -> rc {p.returncode}\nstdout:\n{p.stdout}\n"
                                 f"stderr:\n{p.stderr}")
        return p

    def up(self):
        self.cli("cluster", "up", "--detach", "--partitions", str(self.partitions), timeout=180)
        self.token = self.cli("kv", "token").stdout.strip()

    def down(self):
        try:
            self.cli("cluster", "down", timeout=120, check=False)
        finally:
            if os.environ.get("TESSERA_IT_KEEP") != "1":
                shutil.rmtree(self.root, ignore_errors=True)
            else:
                print(f"kept {self.root}", file=sys.stderr)

    def status(self):
        """The `kv` table's partitions (the cluster also has the S3 table `_s3`)."""
        parts = parse_status(self.cli("cluster", "status", "--json", timeout=60, check=False).stdout)
        return [p for p in parts if p["table"] == "kv"]

    def fault(self, *args):
        """`cluster partition|heal ...`: every node and metadata replica must
        take the rule (the command exits 0 and names each one)."""
        p = self.cli("cluster", *args, timeout=60, check=False)
        if p.returncode != 0:
            raise AssertionError(f"cluster {' '.join(args)} -> rc {p.returncode}\n{p.stdout}\n{p.stderr}")
        for az in AZS:
            for n in (1, 2):
                if args[0] == "heal":
                    assert f"{az}-n{n}: healed" in p.stdout, p.stdout
            if args[0] == "heal":
                assert f"meta-{az}: healed" in p.stdout, p.stdout
        return p

    def wait_converged(self, timeout_s=30):
        """Every partition has a lease holder and every replica is reachable with lag 0."""
        def converged():
            parts = self.status()
            ok = len(parts) == self.partitions and all(
                any(r["leader"] for r in p["replicas"]) and len(p["replicas"]) == 3 and
                all(r["reachable"] and r["lag"] == 0 for r in p["replicas"]) for p in parts)
            return parts if ok else None
        parts = wait_until(converged, timeout_s, 0.5)
        if not parts:
            raise AssertionError(f"cluster did not converge within {timeout_s}s:\n"
                                 + self.cli("cluster", "status", check=False).stdout)
        return parts

    # --- HTTP --------------------------------------------------------------
    def request(self, method, path, body=None, headers=None, token=True, timeout=HTTP_TIMEOUT_S):
        """(status, headers, body bytes); status None on a transport error/timeout."""
        h = {} if headers is None else dict(headers)
        if token:
            h["Authorization"] = "Bearer " + (self.token if token is True else token)
        if body is not None:
            h.setdefault("Content-Type", "application/octet-stream")
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=body,
                                     headers=h, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()
        except (urllib.error.URLError, OSError):
            return None, {}, b""

    @staticmethod
    def kv_path(key, table="kv"):
        return f"/kv/{urllib.parse.quote(table, safe='')}/{urllib.parse.quote(key, safe='')}"

    def put(self, key, value, **kw):
        return self.request("PUT", self.kv_path(key), body=value, **kw)

    def get(self, key, **kw):
        return self.request("GET", self.kv_path(key), **kw)

    def metrics(self):
        status, _, body = self.request("GET", "/metrics", token=False)
        assert status == 200, status
        return parse_metrics(body.decode())

    def scan_all(self, start=b"", end=b"", limit=7):
        """Follows `next` page by page; returns [(key bytes, value bytes)] and the page count."""
        items, pages, cursor = [], 0, start
        while True:
            q = {"limit": str(limit), "start": cursor}
            if end:
                q["end"] = end
            status, _, body = self.request("GET", "/kv/kv?" + urllib.parse.urlencode(q))
            assert status == 200, (status, body)
            page = json.loads(body)
            pages += 1
            assert len(page["items"]) <= limit, page
            page_items, cursor = scan_page(page)
            items.extend(page_items)
            if cursor is None:
                return items, pages
            assert pages < 1000, "scan does not terminate"


def partition_of(parts, key):
    for p in parts:
        if p["start"] <= key and (not p["end"] or key < p["end"]):
            return p
    raise AssertionError(f"no partition holds {key!r}")


def key_in(part, tag):
    """A key inside `part` (its start key, a NUL, then `tag`)."""
    return part["start"] + b"\x00" + tag.encode()


class ClusterTestCase(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        if not TESSERA_BIN or not os.access(TESSERA_BIN, os.X_OK):
            raise unittest.SkipTest("TESSERA_BIN is not an executable tessera binary")
        cls.cluster = Cluster()
        cls.addClassCleanup(cls.cluster.down)  # also runs when up() fails
        cls.cluster.up()
        cls.parts = cls.cluster.wait_converged()


class ReadWriteTest(ClusterTestCase):
    """Tests 1, 4, 5: no faults; they share one cluster."""

    def test_writes_replicate_to_three_azs(self):
        c = self.cluster
        self.assertEqual(len(self.parts), PARTITIONS)
        for p in self.parts:
            names = [r["name"] for r in p["replicas"]]
            self.assertEqual(len(names), 3, p)
            self.assertEqual(sorted(n.split("-")[0] for n in names), list(AZS), p)
            self.assertEqual(sum(r["leader"] for r in p["replicas"]), 1, p)
        for p in self.parts:
            before = [q for q in c.status() if q["group"] == p["group"]][0]
            leader_applied = max(r["applied"] for r in before["replicas"])
            key = key_in(p, "replicated")
            status, _, body = c.put(key, b"value")
            self.assertEqual(status, 200, body)

            def same_applied():
                mine = [q for q in c.status() if q["group"] == p["group"]][0]
                applied = {r["applied"] for r in mine["replicas"]}
                return len(applied) == 1 and applied.pop() > leader_applied
            self.assertTrue(wait_until(same_applied, 10),
                            f"replicas of group {p['group']} did not reach one applied index")

    def test_strong_reads_see_latest_write(self):
        c = self.cluster
        keys = [key_in(p, f"rw{i}") for p in self.parts for i in range(2)]
        for rnd in range(6):
            for key in keys:
                value = f"{key!r}-round-{rnd}".encode()
                status, headers, body = c.put(key, value)
                self.assertEqual(status, 200, body)
                version = json.loads(body)["version"]
                status, headers, body = c.get(key)
                self.assertEqual((status, body), (200, value))
                self.assertEqual(int(headers["X-Tessera-Version"]), version)

    def test_scan_in_order_across_partitions(self):
        c = self.cluster
        expected = {}
        for i in range(200):
            # First byte walks the whole byte space: every partition gets keys.
            key = bytes([(i * 256) // 200]) + b"scan-%03d" % i
            expected[key] = b"v%03d" % i
            status, _, body = c.put(key, expected[key])
            self.assertEqual(status, 200, body)
        prefixes = sorted(expected)
        items, pages = c.scan_all(limit=7)
        got = [(k, v) for k, v in items if b"scan-" in k and k in expected]
        self.assertEqual([k for k, _ in got], prefixes)
        self.assertEqual(dict(got), expected)
        self.assertEqual([k for k, _ in items], sorted(k for k, _ in items))
        self.assertGreaterEqual(pages, 200 // 7)
        # A bounded range that crosses a partition boundary.
        boundary = self.parts[2]["start"]
        items, _ = c.scan_all(start=bytes([boundary[0] - 0x10]), end=bytes([boundary[0] + 0x10]), limit=5)
        want = [k for k in prefixes if bytes([boundary[0] - 0x10]) <= k < bytes([boundary[0] + 0x10])]
        self.assertTrue(want)
        self.assertEqual([k for k, _ in items if k in expected], want)

    def test_route_cache_keeps_memds_load_constant(self):
        c = self.cluster
        keys = [key_in(p, f"rc{i}") for p in self.parts for i in range(3)]
        for key in keys:
            self.assertEqual(c.put(key, b"x")[0], 200)
        c.cli("cluster", "restart", "router-1")
        self.assertTrue(wait_until(lambda: c.request("GET", "/health", token=False)[0] == 200, 20))
        n = 60

        def phase():
            before = c.metrics()
            for i in range(n):
                status, _, body = c.get(keys[i % len(keys)])
                self.assertEqual(status, 200, body)
            # Let the last asynchronous refreshes land (counters only).
            time.sleep(0.5)
            after = c.metrics()
            return {k: after.get(k, 0) - before.get(k, 0) for k in (
                "tessera_router_memds_requests_total", "tessera_router_route_cache_hits_total",
                "tessera_router_route_cache_misses_total")}
        cold, warm = phase(), phase()
        cold_rate = cold["tessera_router_memds_requests_total"] / n
        warm_rate = warm["tessera_router_memds_requests_total"] / n
        msg = f"cold {cold} warm {warm}"
        self.assertGreater(cold["tessera_router_route_cache_misses_total"], 0, msg)
        self.assertGreater(cold_rate, 0, msg)
        self.assertGreater(warm_rate, 0, msg)
        self.assertLessEqual(abs(cold_rate - warm_rate), 0.2 * warm_rate, msg)
        # Hits rise: the cold phase had to miss, the warm phase never does.
        self.assertEqual(warm["tessera_router_route_cache_misses_total"], 0, msg)
        self.assertGreater(warm["tessera_router_route_cache_hits_total"], 0, msg)

    def test_steady_state_get_needs_no_redirect(self):
        # A quiet cluster routes every GET straight to the leader: the leader the
        # router learnt from a redirect survives the async MemDS refreshes.
        c = self.cluster
        # Only partitions whose leader is not the first replica (the router's
        # fallback target) show the extra hop.
        parts = [p for p in c.status() if not p["replicas"][0]["leader"]]
        if not parts:
            self.skipTest("every partition is led by its first replica")
        keys = [key_in(p, "redirect") for p in parts]
        for key in keys:
            self.assertEqual(c.put(key, b"x")[0], 200)
        for key in keys:
            self.assertEqual(c.get(key)[0], 200)
        before = c.metrics()
        for _ in range(5):
            for key in keys:
                self.assertEqual(c.get(key)[0], 200)
        after = c.metrics()
        retries = after["tessera_router_retries_total"] - before["tessera_router_retries_total"]
        self.assertEqual(retries, 0, "GETs in a quiet cluster were redirected")

    def test_bad_input_gets_clear_errors(self):
        c = self.cluster

        def error_of(status_body):
            doc = json.loads(status_body[2])
            self.assertIsInstance(doc.get("error"), str)
            self.assertTrue(doc["error"])
            return doc

        r = c.request("GET", c.kv_path(b"k", table="no_such_table"))
        self.assertEqual(r[0], 404, r)
        self.assertIn("no_such_table", error_of(r)["error"])
        r = c.request("PUT", c.kv_path(b"k", table="no_such_table"), body=b"v")
        self.assertEqual(r[0], 404, r)
        error_of(r)
        r = c.get(b"k", token=False)
        self.assertEqual(r[0], 401, r)
        error_of(r)
        sig = c.token[-1]
        tampered = c.token[:-1] + ("0" if sig != "0" else "1")
        r = c.get(b"k", token=tampered)
        self.assertEqual(r[0], 403, r)
        error_of(r)
        r = c.put(b"k", b"v", token="tk1.garbage")
        self.assertEqual(r[0], 403, r)
        for bad in ("/kv/kv/%zz", "/kv/kv/a%4", "/kv/kv/%"):
            r = c.request("GET", bad)
            self.assertEqual(r[0], 400, (bad, r))
            error_of(r)
        # Still serving.
        self.assertEqual(c.put(b"after-bad-input", b"fine")[0], 200)
        self.assertEqual(c.get(b"after-bad-input")[:3:2], (200, b"fine"))
        self.assertEqual(c.request("GET", "/health", token=False)[0], 200)


    def test_cli_uses_the_native_api(self):
        c = self.cluster
        before = c.metrics()
        key = "cli key/1"
        put = c.cli("kv", "put", "kv", key, "v1")
        self.assertRegex(put.stdout, r"^ok version \d+\n$")
        self.assertEqual(c.cli("kv", "get", "kv", key).stdout, "v1")
        self.assertEqual(c.get(key.encode())[::2], (200, b"v1"))  # the same data over HTTP
        self.assertIn(c.cli("kv", "get", "--eventual", "kv", key, check=False).returncode, (0, 1))
        for i in range(3):
            c.cli("kv", "put", "kv", f"cli-scan-{i}", f"s{i}")
        scan = json.loads(c.cli("kv", "scan", "kv", "--start", "cli-scan-", "--end", "cli-scan.",
                                "--limit", "2").stdout)
        self.assertEqual([it["key"] for it in scan["items"]], ["cli-scan-0", "cli-scan-1"])
        self.assertEqual(scan["next"], "cli-scan-2")
        self.assertEqual(c.cli("kv", "del", "kv", key).stdout, "ok\n")
        gone = c.cli("kv", "get", "kv", key, check=False)
        self.assertEqual((gone.returncode, gone.stderr), (1, "not found\n"))
        unknown = c.cli("kv", "get", "no_such_table", "k", check=False)
        self.assertEqual(unknown.returncode, 3, unknown.stderr)
        self.assertIn("NotFound", unknown.stderr)
        after = c.metrics()
        self.assertGreaterEqual(after["tessera_router_native_requests_total"]
                                - before.get("tessera_router_native_requests_total", 0), 9)
        self.assertGreaterEqual(after["tessera_router_native_connections_total"]
                                - before.get("tessera_router_native_connections_total", 0), 9)
        # A wrong secret is refused by the handshake.
        bad_dir = os.path.join(c.root, "bad-credentials")
        os.makedirs(bad_dir, exist_ok=True)
        access, _ = read_credential(c.dir)
        with open(os.path.join(bad_dir, "credentials"), "w") as f:
            f.write(f"{access} {'0' * 64}\n")
        refused = subprocess.run([TESSERA_BIN, "kv", "get", "--layout", c.layout, "--dir", bad_dir,
                                  "kv", "k"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, timeout=60)
        self.assertEqual(refused.returncode, 3, refused.stderr)
        self.assertIn("PermissionDenied", refused.stderr)
        self.assertGreater(c.metrics().get("tessera_router_native_auth_failures_total", 0), 0)

    def test_signed_http_requests(self):
        c = self.cluster
        access, secret = read_credential(c.dir)
        path = c.kv_path(b"signed key")

        def signed(method, query="", body=b"", ts=None, key=access, sec=secret, send_body=None,
                   extra=None, send_extra=None):
            ts = int(time.time()) if ts is None else ts
            headers = dict(extra or {})
            if method == "PUT":
                headers["Content-Type"] = "application/octet-stream"  # as c.request sends it
            auth = sign_request(key, sec, method, path, query, body, ts, headers)
            target = path + ("?" + query if query else "")
            sent = body if send_body is None else send_body
            sent_headers = dict((extra or {}) if send_extra is None else send_extra, Authorization=auth)
            return c.request(method, target, body=sent if method == "PUT" else None,
                             headers=sent_headers, token=False)

        self.assertEqual(signed("PUT", body=b"sv")[0], 200)
        # The condition is signed: a captured conditional write replayed
        # without its If-Match (or with another) is refused, not applied.
        version = c.get(b"signed key")[1]["X-Tessera-Version"]
        self.assertEqual(signed("PUT", body=b"sv", extra={"If-Match": "999999"})[0], 412)
        self.assertEqual(signed("PUT", body=b"sv", extra={"If-Match": "999999"}, send_extra={})[0],
                         403, "If-Match stripped on replay")
        self.assertEqual(signed("PUT", body=b"sv", extra={"If-Match": version},
                                send_extra={"If-Match": "*"})[0], 403, "If-Match changed")
        self.assertEqual(signed("GET", query="consistency=strong")[::2], (200, b"sv"))
        for name, r in [("body swapped", signed("PUT", body=b"sv", send_body=b"evil")),
                        ("stale", signed("GET", ts=int(time.time()) - 3600)),
                        ("unknown key", signed("GET", key="nobody")),
                        ("wrong secret", signed("GET", sec="0" * 64)),
                        ("query not signed", c.request(
                            "GET", path + "?consistency=eventual",
                            headers={"Authorization": sign_request(access, secret, "GET", path, "", b"",
                                                                   int(time.time()))},
                            token=False))]:
            self.assertEqual(r[0], 403, (name, r))
            self.assertTrue(json.loads(r[2])["error"], name)
        r = c.request("GET", path, headers={"Authorization": "TK1-HMAC-SHA256"}, token=False)
        self.assertEqual(r[0], 403, r)
        r = c.request("GET", path, headers={"Authorization": "Basic abc"}, token=False)
        self.assertEqual(r[0], 401, r)
        self.assertEqual(c.get(b"signed key")[::2], (200, b"sv"))  # still serving, value intact


class WriteLoop(threading.Thread):
    """Writes unique keys (round-robin over partitions) until stopped."""

    def __init__(self, cluster, parts, tag):
        super().__init__(daemon=True)
        self.cluster, self.parts, self.tag = cluster, parts, tag
        self.stop_event = threading.Event()
        self.acked, self.unknown, self.refused = {}, {}, {}
        self.ack_times = []  # (monotonic time the acknowledged request was sent, key, group)
        self.lock = threading.Lock()

    def run(self):
        i = 0
        while not self.stop_event.is_set():
            part = self.parts[i % len(self.parts)]
            key = key_in(part, f"{self.tag}-{i:06d}")
            value = b"value-%06d" % i
            started = time.monotonic()
            status, _, _ = self.cluster.put(key, value)
            with self.lock:
                if status == 200:
                    self.acked[key] = value
                    self.ack_times.append((started, key, part["group"]))
                elif status == 503:
                    self.refused[key] = value
                else:
                    self.unknown[key] = value  # 504, timeout, anything else
            i += 1

    def stop(self):
        self.stop_event.set()
        self.join(HTTP_TIMEOUT_S + 5)


class FaultTest(ClusterTestCase):
    """Tests 2 and 3: each restores the cluster (heal, restart) at its end."""

    def tearDown(self):
        # Restore state even after a failure: heal and bring every process up.
        c = self.cluster
        c.cli("cluster", "heal", timeout=60, check=False)
        for name in not_running(c.cli("cluster", "status", "--json", check=False).stdout):
            c.cli("cluster", "restart", name, check=False)

    def assert_reads_back(self, loop):
        c = self.cluster
        for key, value in loop.acked.items():
            status, _, body = c.get(key)
            self.assertEqual((status, body), (200, value), f"acknowledged {key!r} lost")
        for key, value in loop.unknown.items():
            status, _, body = c.get(key)
            self.assertIn(status, (200, 404), key)
            if status == 200:
                self.assertEqual(body, value)

    def test_kill_leader_node_under_write_loop(self):
        c = self.cluster
        parts = c.status()
        victim = None
        for p in parts:
            for r in p["replicas"]:
                if r["leader"]:
                    victim = r["name"]
                    break
            if victim:
                break
        self.assertIsNotNone(victim)
        led = {p["group"] for p in parts for r in p["replicas"] if r["leader"] and r["name"] == victim}
        loop = WriteLoop(c, parts, "kill")
        loop.start()
        try:
            self.assertTrue(wait_until(lambda: len(loop.acked) >= 20, 15), "write loop did not start")
            c.cli("cluster", "kill", victim)
            killed_at = time.monotonic()

            def resumed():
                with loop.lock:
                    groups = {g for t, _, g in loop.ack_times if t > killed_at}
                return led <= groups
            self.assertTrue(wait_until(resumed, 10, 0.1),
                            f"writes to the groups {led} led by {victim} did not resume within 10 s")
            c.cli("cluster", "restart", victim)
            n = len(loop.acked)
            self.assertTrue(wait_until(lambda: len(loop.acked) >= n + 20, 15))
        finally:
            loop.stop()
        self.assertFalse(loop.is_alive())
        self.assert_reads_back(loop)
        c.wait_converged(30)

    def test_az_isolation_and_no_majority(self):
        c = self.cluster
        parts = c.status()
        # 1. Cut az1 off from az2 and az3: the router still reaches every node.
        c.fault("partition", "az1", "az2")
        c.fault("partition", "az1", "az3")
        for p in parts:
            key = key_in(p, "az1-cut-first")
            ok = wait_until(lambda: c.put(key, b"v")[0] == 200, 20, 0.1)
            self.assertTrue(ok, f"no write to group {p['group']} succeeded with az1 cut off")
        acked = {}
        for i in range(24):
            key = key_in(parts[i % len(parts)], f"az1-cut-{i:03d}")
            status, _, body = c.put(key, b"v%03d" % i)
            self.assertEqual(status, 200, f"write {i} with az1 cut off: {status} {body}")
            acked[key] = b"v%03d" % i
        for p in c.status():
            self.assertFalse(any(r["leader"] and r["name"].startswith("az1-") for r in p["replicas"]), p)
        c.fault("heal")
        after = c.wait_converged(30)
        for p in after:
            self.assertEqual(len({r["applied"] for r in p["replicas"]}), 1, p)
        for key, value in acked.items():
            self.assertEqual(c.get(key)[::2], (200, value))

        # 2. No majority anywhere: every write fails fast and clearly.
        c.fault("partition", "az1", "az2")
        c.fault("partition", "az1", "az3")
        c.fault("partition", "az2", "az3")
        outcomes = {}

        def attempt(key):
            t0 = time.monotonic()
            status, _, body = c.put(key, b"must-not-exist")
            outcomes[key] = (status, body, time.monotonic() - t0)
        for rnd in range(2):
            threads = [threading.Thread(target=attempt, args=(key_in(p, f"split-{rnd}-{j}"),))
                       for p in parts for j in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(HTTP_TIMEOUT_S + 5)
        refused = []
        for key, (status, body, elapsed) in outcomes.items():
            self.assertIn(status, (503, 504), f"{key!r}: {status} {body}")
            self.assertLess(elapsed, 10, f"{key!r} took {elapsed:.1f}s")
            self.assertTrue(json.loads(body)["error"], body)
            if status == 503:
                refused.append(key)
        self.assertTrue(refused, f"no write was refused with 503: {outcomes}")

        # 3. Heal: writes work again; refused writes never appear.
        c.fault("heal")
        c.wait_converged(30)
        for p in parts:
            key = key_in(p, "healed")
            self.assertTrue(wait_until(lambda: c.put(key, b"ok")[0] == 200, 20, 0.1))
            self.assertEqual(c.get(key)[::2], (200, b"ok"))
        for key in refused:
            status, _, body = c.get(key)
            self.assertEqual(status, 404, f"write refused with 503 is visible: {key!r} {body}")
        for key, (status, body, _) in outcomes.items():
            if status == 504:
                got = c.get(key)
                self.assertIn(got[0], (200, 404))

    def test_partition_reaches_metadata_replicas(self):
        # Metadata replicas take fault rules too: heal reaches every process.
        p = self.cluster.cli("cluster", "heal", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
