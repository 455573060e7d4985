#!/usr/bin/env python3
"""Preload the keys the wrk read runs use into Tessera's HTTP KV API.

Keys k000000000000000..k{N-1} (16 bytes, as ../shared/anchors/kv/wrk/kv.lua
draws them), 100-byte values, PUT /kv/{table}/{key} with a bearer token, over
persistent connections from several threads. Retries a key on 503/504 and
connection errors a few times; exits 1 if any key could not be written.

  kv_preload.py http://127.0.0.1:19351 TOKEN [N=100000] [TABLE=kv] [THREADS=16]
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

url = urllib.parse.urlparse(sys.argv[1])
token = sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
table = sys.argv[4] if len(sys.argv) > 4 else "kv"
threads = int(sys.argv[5]) if len(sys.argv) > 5 else 16
body = json.dumps({"value": "v" * 100})
headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
failed, statuses, lock = [], {}, threading.Lock()


def worker(first):
    c = None
    for i in range(first, n, threads):
        for attempt in range(5):
            try:
                if c is None:
                    c = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
                c.request("PUT", f"/kv/{table}/k{i:015d}", body, headers)
                r = c.getresponse()
                r.read()
                status = r.status
            except (OSError, http.client.HTTPException):
                status, c = 0, None
            if status == 200:
                break
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
            time.sleep(0.05 * (attempt + 1))
        else:
            with lock:
                failed.append(i)


t0 = time.time()
ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
dt = time.time() - t0
print(f"preloaded {n - len(failed)}/{n} keys in {dt:.1f} s ({n / dt:.0f}/s); "
      f"retried statuses {statuses}; failed {len(failed)}")
sys.exit(1 if failed else 0)
