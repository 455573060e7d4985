"""What the KV integration tests that write their own layouts share: a
cluster in a fresh temp dir driven through the `tessera` CLI, and the sum
of a Prometheus metric's series.

Python 3 standard library only. Binary: $TESSERA_BIN (set by ctest).
"""

import base64
import os
import re
import shutil
import subprocess
import tempfile

TESSERA_BIN = os.environ.get("TESSERA_BIN", "")


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


class KvCluster:
    """A cluster of the layout `write_layout(path)` writes (its return value
    is kept as `self.ports`), one KV partition per table, the HTTP API's
    bearer token in `self.token` once up."""

    def __init__(self, prefix, write_layout):
        self.root = tempfile.mkdtemp(prefix=prefix)
        self.layout = os.path.join(self.root, "layout.textproto")
        self.dir = os.path.join(self.root, "cluster")
        self.ports = write_layout(self.layout)
        self.token = None

    def cli(self, *args, timeout=120, check=True):
        """`tessera A B --layout L --dir D REST...`; for `kv table ACTION` the
        layout flags go after the action. Raises on a non-zero exit when
        `check`."""
        cmd = [TESSERA_BIN] + list(args[:2]) + ["--layout", self.layout, "--dir", self.dir] + list(args[2:])
        if args[:2] == ("kv", "table"):
            cmd = [TESSERA_BIN, "kv", "table", args[2], "--layout", self.layout, "--dir", self.dir] + list(args[3:])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           text=True, errors="replace")
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} -> rc {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    def up(self):
        self.cli("cluster", "up", "--detach", "--partitions", "1", timeout=180)
        self.token = self.cli("kv", "token").stdout.strip()

    def down(self):
        try:
            self.cli("cluster", "down", timeout=120, check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
