"""What the KV integration tests that write their own layouts share: a
cluster in a fresh temp dir driven through the `tessera` CLI, and the sum
of a Prometheus metric's series.

Python 3 standard library only. Binary: $TESSERA_BIN (set by ctest).
"""

import base64
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from free_ports import free_ports

TESSERA_BIN = os.environ.get("TESSERA_BIN", "")
AZS = ("az1", "az2", "az3")


Layout = collections.namedtuple("Layout", "lines router_http node_http autoadmin_http")


def three_az_layout(name, routers=1, autoadmin=False, gacs=0):
    """A small layout on free loopback ports: 3 AZs x 1 storage node, one
    meta replica per AZ, `routers` routers and `gacs` GAC instances (placed
    az1, az2, ...), an autoadmin in az1 when asked. Settings lines are the
    caller's to append to `lines`. Returns a Layout: the lines, the routers'
    and the storage nodes' HTTP ports, the autoadmin's (None without)."""
    ports = iter(free_ports(3 * 2 + 3 * 2 + routers * 4 + gacs * 2 + (1 if autoadmin else 0)))
    lines = [f'name: "{name}"', 'azs: ["az1", "az2", "az3"]']
    node_http = []
    for az in AZS:
        peer, http = next(ports), next(ports)
        node_http.append(http)
        lines.append(f'nodes {{ name: "{az}-n1" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {peer} http_port: {http} }}")
    for az in AZS:
        lines.append(f'meta {{ name: "meta-{az}" az: "{az}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    router_http = []
    for i in range(routers):
        kv, http, s3, s3_tls = next(ports), next(ports), next(ports), next(ports)
        router_http.append(http)
        lines.append(f'routers {{ name: "router-{i + 1}" az: "{AZS[i % 3]}" host: "127.0.0.1" '
                     f"kv_port: {kv} http_port: {http} s3_port: {s3} s3_tls_port: {s3_tls} }}")
    for i in range(gacs):
        lines.append(f'gac {{ name: "gac-{AZS[i % 3]}" az: "{AZS[i % 3]}" host: "127.0.0.1" '
                     f"peer_port: {next(ports)} http_port: {next(ports)} }}")
    autoadmin_http = None
    if autoadmin:
        autoadmin_http = next(ports)
        lines.append(f'autoadmin {{ name: "autoadmin-az1" az: "az1" host: "127.0.0.1" '
                     f"http_port: {autoadmin_http} }}")
    return Layout(lines, router_http, node_http, autoadmin_http)


def write_layout_file(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def series_sum(text, name, labels):
    """Sum of metric `name` over series whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def scan_page(page):
    """One page of the HTTP KV API's scan (GET /kv/TABLE?start=...), parsed
    from JSON: ([(key bytes, value bytes)], the next page's start key as
    bytes, or None after the last page)."""
    items = []
    for it in page["items"]:
        k = it["key"].encode() if "key" in it else base64.b64decode(it["key_base64"])
        v = it["value"].encode() if "value" in it else base64.b64decode(it["value_base64"])
        items.append((k, v))
    if "next_base64" in page:
        return items, base64.b64decode(page["next_base64"])
    if page.get("next") is not None:
        return items, page["next"].encode()
    return items, None


def assert_reads_back(test, items, acked):
    """`items` (a whole table's scan): in key order, every key once, and
    every acknowledged key (`acked`: key bytes -> value) with its value."""
    keys = [k for k, _ in items]
    test.assertEqual(keys, sorted(keys), "scan out of order")
    test.assertEqual(len(keys), len(set(keys)), "a key scanned twice")
    got = dict(items)
    for k, v in acked.items():
        test.assertEqual(got.get(k), v, f"acknowledged {k!r} does not read back")


def http_text(port, path):
    """The body of GET http://127.0.0.1:PORT/PATH as text ("" when it cannot
    be fetched: a process's status page while it restarts)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.read().decode()
    except (urllib.error.URLError, OSError):
        return ""


class KvCluster:
    """A cluster of the layout `write_layout(path)` writes (its return value
    is kept as `self.ports`), one KV partition per table, the HTTP API's
    bearer token in `self.token` once up."""

    HTTP_TIMEOUT_S = 15

    def __init__(self, prefix, write_layout):
        self.root = tempfile.mkdtemp(prefix=prefix)
        self.layout = os.path.join(self.root, "layout.textproto")
        self.dir = os.path.join(self.root, "cluster")
        self.ports = write_layout(self.layout)
        self.token = None
        self.http_port = None  # a router's HTTP port, for request/put/scan_all: the subclass's

    def cli(self, *args, timeout=120, check=True):
        """`tessera A B --layout L --dir D REST...`; for `kv table ACTION` and
        `kv partition ACTION` the layout flags go after the action. Raises on
        a non-zero exit when `check`."""
        cmd = [TESSERA_BIN] + list(args[:2]) + ["--layout", self.layout, "--dir", self.dir] + list(args[2:])
        if args[:2] in (("kv", "table"), ("kv", "partition")):
            cmd = [TESSERA_BIN, "kv", args[1], args[2], "--layout", self.layout, "--dir", self.dir] + list(args[3:])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           text=True, errors="replace")
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} -> rc {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    def request(self, method, path, body=None):
        """The router's HTTP API with the bearer token: (status, body); status
        0 when the connection failed."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=body, method=method,
                                     headers={"Authorization": "Bearer " + self.token,
                                              "Content-Type": "application/octet-stream"})
        try:
            with urllib.request.urlopen(req, timeout=self.HTTP_TIMEOUT_S) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            return 0, str(e).encode()

    def put(self, table, key, value):
        return self.request("PUT", f"/kv/{table}/{urllib.parse.quote(key, safe='')}", value)

    def scan_all(self, table, page=100):
        """Every (key, value) of `table` through paged scans, in order."""
        items, cursor = [], b""
        for _ in range(10000):
            q = urllib.parse.urlencode({"limit": str(page), "start": cursor})
            status, body = self.request("GET", f"/kv/{table}?{q}")
            assert status == 200, (status, body)
            page_items, cursor = scan_page(json.loads(body))
            items.extend(page_items)
            if cursor is None:
                return items
        raise AssertionError("scan does not terminate")

    def status_partitions(self, table):
        """[{group, epoch, start, end, leader, load}] of `table` in key order,
        from `tessera cluster status --json` (start and end as base64 of the
        report; leader: the leading node's name or None; load: its requests
        per second)."""
        p = self.cli("cluster", "status", "--json", check=False)
        out = []
        for part in json.loads(p.stdout).get("partitions", []):
            if part["table"] != table:
                continue
            leader = [r for r in part["replicas"] if r.get("leader")]
            out.append({"group": int(part["group"]), "epoch": int(part["epoch"]),
                        "start": part["start_key"], "end": part["end_key"],
                        "leader": leader[0]["name"] if leader else None,
                        "load": int(leader[0].get("load_rps", 0)) if leader else 0})
        return out

    def up(self):
        self.cli("cluster", "up", "--detach", "--partitions", "1", timeout=180)
        self.token = self.cli("kv", "token").stdout.strip()

    def down(self):
        try:
            self.cli("cluster", "down", timeout=120, check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class AutoadminKvCluster(KvCluster):
    """A KvCluster whose write_layout returns (router HTTP port, autoadmin
    HTTP port): the split tests', which read the autoadmin's pages."""

    def __init__(self, prefix, write_layout):
        super().__init__(prefix, write_layout)
        self.http_port, self.aa_port = self.ports

    def autoadmin(self, path):
        return http_text(self.aa_port, path)

    def partitions(self, table):
        return self.status_partitions(table)
