#!/usr/bin/env python3
"""Security probes against a live cluster: each sends what an attacker
would and requires the refusal (docs/security.md).

  * SigV2 sub-resources: a presigned URL for the latest version of a key,
    with a percent-encoded sub-resource appended (%76ersionId=<old>,
    %74agging, %75ploadId=), is refused with SignatureDoesNotMatch: it
    neither reads an old version nor deletes a chosen one.
  * KV APIs: no credential reaches an internal table (`_s3`) through the
    HTTP or the native API; a token narrowed with `tessera kv token --table
    T --read-only` reads T and nothing else, and writes nothing.
  * CompleteMultipartUpload from another user is refused before its body
    is read or parsed.
  * CreateBucket's body must match the payload hash it was signed with.
  * Bucket quota: a user owns at most meta_settings.s3_user_buckets_max
    buckets (TooManyBuckets beyond); another user is not affected.
  * Response splitting: CR/LF in a response-* override, in user metadata or
    Content-Type hoisted from a SigV2 query, or a control character in a
    header sent on the wire, is refused with InvalidArgument (or by the
    HTTP parser), nothing is stored, and no injected header reaches the
    client.
  * The cluster's own RPC: a node's port speaks TLS 1.3 only, presents the
    certificate the cluster CA issued for its role, and serves only a peer
    that presents one too (no certificate, TLS 1.2 and plain TCP are
    refused); a router's certificate cannot call admin RPCs (`tessera
    cluster heal --as router-1` is refused with PermissionDenied, the
    operator's succeeds).
  * Signed KV requests cover their conditions: a PUT signed with If-Match
    and replayed without it (or with another condition) is refused (403)
    and writes nothing.
  * A bearer token revoked with `tessera kv revoke` is refused by the
    router within seconds (403), while another token of the same
    credential keeps working.
  * TLS suites (`openssl s_client`): the S3 HTTPS, KV HTTPS and KV native
    TLS ports complete TLS 1.3 and TLS 1.2 with an ECDHE AEAD suite,
    verified against the cluster's HTTPS CA, and refuse CBC/SHA-1 suites
    and TLS 1.1; the internal RPC refuses TLS 1.2.
  * The KV HTTP API answers over TLS on the router's http_tls_port (the
    cluster's HTTPS CA verified for localhost) as on its plain port.
  * Secrets at rest: the cluster secret, credentials and every private key
    are readable by their owner only, and neither the cluster secret nor an
    S3 secret key appears in any process's log.

One cluster for the whole file; every client is given its own
configuration (s3_harness.scrub_environment).
"""

import base64
import hashlib
import hmac
import http.client
import os
import re
import socket
import ssl
import subprocess
import time
import unittest
import urllib.parse

import s3_harness as h

CLUSTER = None
BUCKET = "security"
USER_BUCKETS_MAX = 4


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("security", meta_settings=f"s3_user_buckets_max: {USER_BUCKETS_MAX}")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def presign_v2(cluster, method, path, subresources="", expires_in_s=300):
    """A SigV2 presigned target for `path` (AWS's documented form): the
    canonical resource is the path plus the signed sub-resources."""
    expires = int(time.time()) + expires_in_s
    string_to_sign = f"{method}\n\n\n{expires}\n{path}{subresources}"
    digest = hmac.new(cluster.secret_key.encode(), string_to_sign.encode(), hashlib.sha1).digest()
    signature = urllib.parse.quote(base64.b64encode(digest).decode(), safe="")
    query = subresources.lstrip("?")
    return (f"{path}?{query + '&' if query else ''}AWSAccessKeyId={cluster.access_key}"
            f"&Expires={expires}&Signature={signature}")


class SecurityTest(h.ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        s3 = CLUSTER.boto3_client()
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        cls.old = s3.put_object(Bucket=BUCKET, Key="doc", Body=b"old secret")["VersionId"]
        cls.new = s3.put_object(Bucket=BUCKET, Key="doc", Body=b"new text")["VersionId"]

    def raw(self, method, target, headers=None, body=b""):
        raw = h.S3Raw(self.c)
        head = h.raw_head(method, target, raw.host, dict(headers or {}, **(
            {"content-length": str(len(body))} if method in ("PUT", "POST") else {})))
        return raw.send_raw(head, [body] if body else [])

    def assert_refused(self, response, code, status):
        self.assertEqual(response.status, status, response)
        self.assertEqual(response.error()["Code"], code, response)

    # --- SigV2 sub-resources are signed as routed ---------------------------
    def test_sigv2_presigned_get_cannot_be_turned_to_another_version(self):
        target = presign_v2(self.c, "GET", f"/{BUCKET}/doc")
        ok = self.raw("GET", target)
        self.assertEqual((ok.status, ok.body), (200, b"new text"), ok)
        for extra in (f"&%76ersionId={self.old}", f"&version%49d={self.old}", "&%74agging",
                      "&%75ploadId=x"):
            with self.subTest(extra=extra):
                r = self.raw("GET", target + extra)
                self.assert_refused(r, "SignatureDoesNotMatch", 403)
                self.assertNotIn(b"old secret", r.body)

    def test_sigv2_presigned_delete_cannot_choose_a_version(self):
        target = presign_v2(self.c, "DELETE", f"/{BUCKET}/doc")
        r = self.raw("DELETE", target + f"&%76ersionId={self.old}")
        self.assert_refused(r, "SignatureDoesNotMatch", 403)
        s3 = self.c.boto3_client()
        got = s3.get_object(Bucket=BUCKET, Key="doc", VersionId=self.old)["Body"].read()
        self.assertEqual(got, b"old secret", "the old version must survive")
        # The sub-resource signed as sent still works (and is what a client does).
        signed = presign_v2(self.c, "GET", f"/{BUCKET}/doc", f"?versionId={self.old}")
        r = self.raw("GET", signed)
        self.assertEqual((r.status, r.body), (200, b"old secret"), r)

    # --- per-user bucket limit ------------------------------------------------
    def test_a_user_owns_at_most_the_bucket_limit(self):
        ak, sk = self.c.create_user("hoarder")
        s3 = self.c.boto3_client(access_key=ak, secret_key=sk)
        for i in range(USER_BUCKETS_MAX):
            s3.create_bucket(Bucket=f"hoard-{i}")
        self.assert_client_error(s3.create_bucket, "TooManyBuckets", 400, Bucket="hoard-extra")
        names = {b["Name"] for b in s3.list_buckets()["Buckets"]}
        self.assertEqual(names, {f"hoard-{i}" for i in range(USER_BUCKETS_MAX)})
        # Another user's quota is its own.
        ak2, sk2 = self.c.create_user("modest")
        self.c.boto3_client(access_key=ak2, secret_key=sk2).create_bucket(Bucket="modest-0")
        # A deleted bucket frees its place.
        s3.delete_bucket(Bucket="hoard-0")

        def created():
            import botocore.exceptions
            try:
                s3.create_bucket(Bucket="hoard-extra")
                return True
            except botocore.exceptions.ClientError as e:
                if e.response["Error"]["Code"] != "TooManyBuckets":
                    raise
                return False  # the metadata leader has not applied the delete yet
        self.assertTrue(h.wait_until(created, 10), "the deleted bucket's place was not freed")

    def test_create_bucket_body_must_match_its_signed_hash(self):
        raw = h.S3Raw(self.c)
        body = (b'<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                b"<LocationConstraint>elsewhere-1</LocationConstraint></CreateBucketConfiguration>")
        r = raw.request("PUT", "/swapped-body", body=body, payload_hash=h.sha256_hex(b""))
        self.assert_refused(r, "XAmzContentSHA256Mismatch", 400)
        self.assertEqual(raw.request("HEAD", "/swapped-body").status, 404, "nothing created")

    # --- authenticated resource use -------------------------------------------
    def test_complete_multipart_checks_ownership_before_reading_the_body(self):
        up = self.c.boto3_client().create_multipart_upload(Bucket=BUCKET, Key="mp")
        ak, sk = self.c.create_user("intruder")
        raw = h.S3Raw(self.c, access_key=ak, secret_key=sk)
        path = f"/{BUCKET}/mp"
        query = [("uploadId", up["UploadId"])]
        signed = raw.sign("POST", path, query, headers={"content-length": str(1 << 20)},
                          payload_hash="UNSIGNED-PAYLOAD")
        target = f"{path}?uploadId={h.uri_encode(up['UploadId'], False)}"
        # The head promises a 1 MiB document and sends none of it: the answer
        # must not wait for (or parse) a body only the owner may send.
        r = raw.send_raw(h.raw_head("POST", target, raw.host, signed.headers), [], timeout=10,
                         shut_write=False)
        self.assertIsNotNone(r, "no answer without the body")
        self.assert_refused(r, "AccessDenied", 403)

    # --- KV APIs: internal tables, grants -----------------------------------
    def kv_http(self, method, target, token, body=b"", https=False):
        if https:
            ctx = ssl.create_default_context(cafile=self.c.ca_bundle)
            conn = http.client.HTTPSConnection("localhost", self.c.router_http_tls_port, timeout=30,
                                               context=ctx)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.c.router_http_port, timeout=30)
        try:
            conn.request(method, target, body=body, headers={"Authorization": f"Bearer {token}"})
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def test_kv_http_refuses_before_reading_the_body(self):
        """A head that promises a 1 MiB body and sends none of it is answered
        at once when its credentials are refused: the router never waits for
        (or buffers) a body it would refuse."""
        for auth, status in (({}, 401), ({"Authorization": "Bearer tk1.nobody.1.00"}, 403),
                             ({"Authorization": "TK1-HMAC-SHA256 Credential=nobody, Timestamp=1, "
                                                "Signature=" + "0" * 64}, 403)):
            with self.subTest(auth=auth):
                head = h.raw_head("PUT", "/kv/kv/x", f"127.0.0.1:{self.c.router_http_port}",
                                  dict(auth, **{"Content-Length": str(1 << 20)}))
                sock = socket.create_connection(("127.0.0.1", self.c.router_http_port), timeout=10)
                try:
                    sock.sendall(head)
                    data = b""
                    while b"\r\n\r\n" not in data:
                        got = sock.recv(65536)
                        if not got:
                            break
                        data += got
                except socket.timeout:
                    data = b""
                finally:
                    sock.close()
                self.assertTrue(data.startswith(f"HTTP/1.1 {status} ".encode()), data[:200])

    def test_kv_apis_cannot_reach_internal_tables(self):
        token = self.c.cli("kv", "token").stdout.strip()
        for method, target in (("GET", "/kv/_s3?limit=10"), ("GET", "/kv/_s3/x"),
                               ("PUT", "/kv/_s3/x"), ("DELETE", "/kv/_s3/x")):
            with self.subTest(api="http", method=method, target=target):
                status, body = self.kv_http(method, target, token, b"v" if method == "PUT" else b"")
                self.assertEqual(status, 403, body)
                self.assertIn(b"PermissionDenied", body)
        for args in (("get", "_s3", "x"), ("scan", "_s3"), ("put", "_s3", "x", "v"), ("del", "_s3", "x")):
            with self.subTest(api="native", args=args):
                p = self.c.cli("kv", *args, check=False)
                self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
                self.assertIn("internal", p.stderr)

    def test_kv_token_narrowed_to_one_table_and_reads(self):
        full = self.c.cli("kv", "token").stdout.strip()
        status, body = self.kv_http("PUT", "/kv/kv/granted", full, b"v")
        self.assertEqual(status, 200, body)
        narrow = self.c.cli("kv", "token", "--table", "kv", "--read-only", "--ttl", "600").stdout.strip()
        self.assertTrue(narrow.startswith("tk2."), narrow)
        status, body = self.kv_http("GET", "/kv/kv/granted", narrow)
        self.assertEqual((status, body), (200, b"v"))
        for method, target in (("PUT", "/kv/kv/granted"), ("DELETE", "/kv/kv/granted"),
                               ("GET", "/kv/other/k")):
            with self.subTest(method=method, target=target):
                status, body = self.kv_http(method, target, narrow, b"w" if method == "PUT" else b"")
                self.assertEqual(status, 403, body)
                self.assertIn(b"PermissionDenied", body)
        status, body = self.kv_http("GET", "/kv/kv/granted", full)
        self.assertEqual(body, b"v", "nothing was written through the narrowed token")
        # A token may not outlive the router's bound (30 days).
        p = self.c.cli("kv", "token", "--ttl", str(31 * 86400), check=False)
        self.assertNotEqual(p.returncode, 0)

    def kv_signed(self, method, target, body=b"", headers=None):
        """A TK1-HMAC-SHA256 signed KV request (docs/formats/credentials.md):
        its Authorization value, covering method, target, body and the
        Content-Type, If-Match and If-None-Match headers."""
        headers = headers or {}
        path, _, query = target.partition("?")
        now = int(time.time())
        string_to_sign = "\n".join([
            "TK1-HMAC-SHA256", str(now), method, path, query,
            "content-type:" + headers.get("Content-Type", ""),
            "if-match:" + headers.get("If-Match", ""),
            "if-none-match:" + headers.get("If-None-Match", ""),
            hashlib.sha256(body).hexdigest()])
        signature = hmac.new(self.c.secret_key.encode(), string_to_sign.encode(),
                             hashlib.sha256).hexdigest()
        return (f"TK1-HMAC-SHA256 Credential={self.c.access_key}, Timestamp={now}, "
                f"Signature={signature}")

    def kv_send(self, method, target, authorization, body=b"", headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.c.router_http_port, timeout=30)
        try:
            conn.request(method, target, body=body,
                         headers=dict(headers or {}, Authorization=authorization))
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def test_a_signed_kv_write_cannot_lose_its_condition_on_replay(self):
        token = self.c.cli("kv", "token").stdout.strip()
        self.assertEqual(self.kv_http("PUT", "/kv/kv/guarded", token, b"v1")[0], 200)
        conditional = {"If-Match": "999999"}
        auth = self.kv_signed("PUT", "/kv/kv/guarded", b"v2", conditional)
        status, body = self.kv_send("PUT", "/kv/kv/guarded", auth, b"v2", conditional)
        self.assertEqual(status, 412, body)  # signed as sent: the condition decides
        # The same signature with the condition stripped (or changed) is refused.
        for replayed in ({}, {"If-Match": "*"}, {"If-None-Match": "*"}):
            with self.subTest(headers=replayed):
                status, body = self.kv_send("PUT", "/kv/kv/guarded", auth, b"v2", replayed)
                self.assertEqual(status, 403, body)
        self.assertEqual(self.kv_http("GET", "/kv/kv/guarded", token), (200, b"v1"))

    def test_a_revoked_token_is_refused_and_others_are_not(self):
        doomed = self.c.cli("kv", "token", "--ttl", "3600").stdout.strip()
        kept = self.c.cli("kv", "token", "--ttl", "3601").stdout.strip()
        self.assertEqual(self.kv_http("PUT", "/kv/kv/revocation", doomed, b"before")[0], 200)
        self.c.cli("kv", "revoke", doomed)
        refused = lambda: self.kv_http("GET", "/kv/kv/revocation", doomed)[0] == 403
        self.assertTrue(h.wait_until(refused, 10), "the revoked token still works")
        status, body = self.kv_http("PUT", "/kv/kv/revocation", doomed, b"after")
        self.assertEqual(status, 403, body)
        self.assertIn(b"revoked", body)
        self.assertEqual(self.kv_http("GET", "/kv/kv/revocation", kept), (200, b"before"))
        # Only this cluster's valid tokens can be revoked.
        p = self.c.cli("kv", "revoke", "tk1.nobody.1.00", check=False)
        self.assertNotEqual(p.returncode, 0)

    def s_client(self, port, *args):
        """`openssl s_client` against `port` (trusting the HTTPS CA); its
        exit code and output."""
        p = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}",
                            "-servername", "localhost", "-CAfile", self.c.ca_bundle,
                            "-verify_return_error", *args],
                           input=b"", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=30, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        return p.returncode, p.stdout.decode(errors="replace")

    def test_tls_listeners_offer_only_aead_suites_over_tls12_or_later(self):
        for port in (self.c.s3_tls_port, self.c.router_http_tls_port, self.c.router_kv_tls_port):
            with self.subTest(port=port):
                rc, out = self.s_client(port, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256")
                self.assertEqual(rc, 0, out)
                self.assertIn("ECDHE-ECDSA-AES128-GCM-SHA256", out)
                self.assertIn("Verify return code: 0 (ok)", out)
                for weak in ("ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA384", "AES128-SHA"):
                    rc, out = self.s_client(port, "-tls1_2", "-cipher", weak)
                    self.assertNotEqual(rc, 0, f"{weak} accepted:\n{out}")
                rc, out = self.s_client(port, "-tls1_1", "-cipher", "ALL:@SECLEVEL=0")
                self.assertNotEqual(rc, 0, f"TLS 1.1 accepted:\n{out}")
                rc, out = self.s_client(port, "-tls1_3")
                self.assertEqual(rc, 0, out)
                self.assertIn("TLSv1.3", out)
        # The internal RPC: TLS 1.3 only.
        rc, out = self.s_client(self.node_peer_port(), "-tls1_2")
        self.assertNotEqual(rc, 0, f"TLS 1.2 accepted on the internal RPC:\n{out}")

    def test_kv_http_api_over_tls(self):
        token = self.c.cli("kv", "token").stdout.strip()
        status, body = self.kv_http("PUT", "/kv/kv/sealed", token, b"over tls", https=True)
        self.assertEqual(status, 200, body)
        self.assertEqual(self.kv_http("GET", "/kv/kv/sealed", token, https=True), (200, b"over tls"))
        self.assertEqual(self.kv_http("GET", "/kv/kv/sealed", token), (200, b"over tls"))
        # The TLS port speaks nothing but TLS: a plain request gets no HTTP answer.
        answer = self.plain_exchange(self.c.router_http_tls_port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertNotIn(b"HTTP/1.1 200", answer)

    # --- no response splitting ---------------------------------------------
    def test_crlf_in_response_override_is_refused(self):
        raw = h.S3Raw(self.c)
        for name in ("response-content-type", "response-content-disposition",
                     "response-cache-control"):
            with self.subTest(override=name):
                r = raw.request("GET", f"/{BUCKET}/doc",
                                query=[(name, "text/plain\r\nX-Injected: 1")])
                self.assert_refused(r, "InvalidArgument", 400)
                self.assertIsNone(r.header("X-Injected"))

    def test_crlf_hoisted_from_a_sigv2_query_is_refused_and_not_stored(self):
        for param in ("x-amz-meta-note", "content-type"):
            with self.subTest(param=param):
                key = f"hoisted-{param}"
                # Hoisted headers are signed as amz headers / Content-Type:
                # sign the injected value as the server would canonicalize it.
                value = "a\r\nX-Injected: 1"
                expires = int(time.time()) + 300
                if param == "content-type":
                    sts = f"PUT\n\n{value}\n{expires}\n/{BUCKET}/{key}"
                else:
                    sts = f"PUT\n\n\n{expires}\n{param}:{value}\n/{BUCKET}/{key}"
                digest = hmac.new(self.c.secret_key.encode(), sts.encode(), hashlib.sha1).digest()
                target = (f"/{BUCKET}/{key}?{param}={urllib.parse.quote(value, safe='')}"
                          f"&AWSAccessKeyId={self.c.access_key}&Expires={expires}&Signature="
                          f"{urllib.parse.quote(base64.b64encode(digest).decode(), safe='')}")
                r = self.raw("PUT", target, body=b"payload")
                self.assert_refused(r, "InvalidArgument", 400)
                self.assertEqual(h.S3Raw(self.c).head_status(BUCKET, key), 404, "nothing stored")

    def test_control_character_in_a_wire_header_is_refused(self):
        raw = h.S3Raw(self.c)
        signed = raw.sign("PUT", f"/{BUCKET}/wire", headers={"x-amz-meta-note": "a\x01b"},
                          payload_hash=h.sha256_hex(b"x"))
        head = h.raw_head("PUT", f"/{BUCKET}/wire", raw.host,
                          dict(signed.headers, **{"content-length": "1"}))
        try:
            r = raw.send_raw(head, [b"x"])
        except (ConnectionError, socket.timeout):
            r = None  # the HTTP parser closed the connection: refused as well
        if r is not None:
            self.assertEqual(r.status, 400, r)
        self.assertEqual(raw.head_status(BUCKET, "wire"), 404, "nothing stored")

    # --- the cluster's own RPC ------------------------------------------------
    def node_peer_port(self):
        with open(self.c.layout) as f:
            return int(re.search(r'name: "az1-n1".*?peer_port: (\d+)', f.read()).group(1))

    def internal_tls_context(self, certificate=None, tls12_only=False):
        pki = os.path.join(self.c.dir, "pki")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(os.path.join(pki, "ca.pem"))
        ctx.check_hostname = False  # identities are role and id, not host names
        if certificate:
            ctx.load_cert_chain(os.path.join(pki, certificate + ".pem"),
                                os.path.join(pki, certificate + ".key"))
        if tls12_only:
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        return ctx

    @staticmethod
    def plain_exchange(port, data):
        """Sends `data` over plain TCP; what comes back first (b"" once closed)."""
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(data)
            try:
                return sock.recv(4096)
            except ConnectionError:
                return b""

    @staticmethod
    def recv_exactly(stream, n):
        data = b""
        while len(data) < n:
            chunk = stream.recv(n - len(data))
            if not chunk:
                raise ConnectionError(f"closed after {len(data)} of {n} bytes")
            data += chunk
        return data

    def test_internal_rpc_is_tls13_with_certificates_both_ways(self):
        port = self.node_peer_port()
        ctx = self.internal_tls_context("cli")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            with ctx.wrap_socket(sock) as tls:
                self.assertEqual(tls.version(), "TLSv1.3")
                subject = dict(entry[0] for entry in tls.getpeercert()["subject"])
                self.assertEqual(subject["organizationalUnitName"], "node")
                # The RPC handshake starts only inside TLS: its Challenge frame.
                length = int.from_bytes(self.recv_exactly(tls, 8)[:4], "big")
                self.assertIn(b"rpc.Challenge", self.recv_exactly(tls, length))

        # No client certificate: the node refuses (TLS 1.3 reports it after
        # the client's side of the handshake).
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            with self.assertRaises((ssl.SSLError, ConnectionError)):
                with self.internal_tls_context().wrap_socket(sock) as tls:
                    self.recv_exactly(tls, 8)
        # TLS 1.2: no handshake at all.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            with self.assertRaises((ssl.SSLError, ConnectionError)):
                self.internal_tls_context("cli", tls12_only=True).wrap_socket(sock)
        # Plain TCP (a frame instead of a ClientHello): closed, not one frame back.
        answer = self.plain_exchange(port, b"\x00\x00\x00\x04\xde\xad\xbe\xef" b"abcd")
        self.assertNotIn(b"rpc.Challenge", answer)

    def test_a_router_identity_cannot_call_admin_rpcs(self):
        refused = self.c.cli("cluster", "heal", "--as", "router-1", check=False)
        self.assertNotEqual(refused.returncode, 0, refused)
        self.assertIn("PermissionDenied", refused.stderr)
        # The operator's identity may.
        self.c.cli("cluster", "heal")

    def test_secrets_at_rest_are_the_owners_alone_and_never_logged(self):
        private = ["secret", "credentials", "pki/ca.key", "pki/cli.key", "pki/az1-n1.key",
                   "pki/router-1.key", "tls/ca.key", "tls/key.pem"]
        for rel in private:
            mode = os.stat(os.path.join(self.c.dir, rel)).st_mode & 0o777
            self.assertEqual(mode & 0o077, 0, f"{rel} has mode {oct(mode)}")
        self.assertEqual(os.stat(os.path.join(self.c.dir, "pki")).st_mode & 0o077, 0)
        with open(os.path.join(self.c.dir, "secret")) as f:
            cluster_secret = f.read().strip()
        logs = os.path.join(self.c.dir, "logs")
        for name in os.listdir(logs):
            with open(os.path.join(logs, name), errors="replace") as f:
                text = f.read()
            self.assertNotIn(cluster_secret, text, name)
            self.assertNotIn(self.c.secret_key, text, name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
