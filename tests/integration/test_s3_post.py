#!/usr/bin/env python3
"""POST Object (browser-based uploads), as AWS S3 answers it.

Goal: prove against a whole local Tessera cluster that:
  1. a form from boto3's generate_presigned_post (SigV4) uploads through a
     scripted client: 204 by default, 200, 201 with the PostResponse
     document, 303 to success_action_redirect with bucket, key and etag;
     metadata, Content-Type, tags and the acl field are stored as PutObject
     stores them; ${filename} in the key is replaced; a file past the
     inline size goes to blobs byte-identical;
  2. a SigV2 form (AWSAccessKeyId, policy, signature) uploads too;
  3. refusals carry S3's error code and store nothing: expired policy, bad
     signature, unknown key, failed eq / starts-with conditions, an extra
     field, content-length-range too small or too large (a large file's
     blobs are freed: `tessera s3 check` stays clean), no file or two, a
     malformed body, no key, a POST that is not a form, an anonymous POST
     to a private bucket, acl=public-read where BlockPublicAcls is set;
  4. a real HTML form in headless Chromium on another origin uploads a
     file, follows the redirect to a page that reads what S3 appended, and
     the object reads back byte-identical; a script on another origin
     POSTs a FormData and reads the 201 answer and its ETag where the
     bucket's CORS rule admits POST.
One cluster for the whole file.
"""

import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import unittest
import urllib.parse
import xml.etree.ElementTree as ET

import free_ports
import s3_harness as h

CLUSTER = None
BUCKET = "post-up"
PUBLIC = "post-open"    # grants anonymous writes (public-read-write)
BLOCKED = "post-block"  # BlockPublicAcls


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-post")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    s3 = CLUSTER.boto3_client()
    for bucket in (BUCKET, PUBLIC, BLOCKED):
        s3.create_bucket(Bucket=bucket)
    s3.put_bucket_acl(Bucket=PUBLIC, ACL="public-read-write")
    s3.put_public_access_block(Bucket=BLOCKED, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
        "RestrictPublicBuckets": False})


def form_body(fields, data, filename="file.txt", boundary="----tesseraFormBoundary7MA4YWxk",
              file_field="file", files=1):
    """A multipart/form-data body: `fields` (name, value) in order, then
    `files` file parts holding `data`. Returns (content type, body)."""
    out = bytearray()
    for name, value in fields:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                f"{value}\r\n").encode()
    for _ in range(files):
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; "
                f"filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                ).encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return f"multipart/form-data; boundary={boundary}", bytes(out)


def v4_form(cluster, conditions, fields, expires_in_s=600, secret_key=None, access_key=None):
    """Fields of a SigV4-signed form (policy over `conditions`, which this
    adds the signature fields' conditions to), `fields` first."""
    now = datetime.datetime.now(datetime.timezone.utc)
    day, amz_date = now.strftime("%Y%m%d"), now.strftime("%Y%m%dT%H%M%SZ")
    credential = f"{access_key or cluster.access_key}/{day}/{h.REGION}/s3/aws4_request"
    expiration = (now + datetime.timedelta(seconds=expires_in_s)).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z")
    conditions = list(conditions) + [{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
                                     {"x-amz-credential": credential},
                                     {"x-amz-date": amz_date}]
    policy = base64.b64encode(json.dumps({"expiration": expiration,
                                          "conditions": conditions}).encode()).decode()
    key = h.signing_key(secret_key or cluster.secret_key, day)
    signature = hmac.new(key, policy.encode(), hashlib.sha256).hexdigest()
    return list(fields) + [("x-amz-algorithm", "AWS4-HMAC-SHA256"),
                           ("x-amz-credential", credential), ("x-amz-date", amz_date),
                           ("policy", policy), ("x-amz-signature", signature)]


class PostCase(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()
        self.raw = h.S3Raw(self.c)

    def post(self, fields, data, bucket=BUCKET, headers=None, **kw):
        content_type, body = form_body(fields, data, **kw)
        return self.raw.send("POST", f"/{bucket}",
                             headers={"Content-Type": content_type, **(headers or {})}, body=body)

    def presigned(self, key, fields=None, conditions=None, bucket=BUCKET):
        """generate_presigned_post's fields as a list, key first."""
        post = self.s3.generate_presigned_post(bucket, key, Fields=fields or {},
                                               Conditions=conditions or [], ExpiresIn=600)
        return [("key", post["fields"].pop("key"))] + list(post["fields"].items())

    def assert_refused(self, response, code, status):
        self.assertEqual((response.status, response.error()["Code"]), (status, code), response)

    def assert_absent(self, key, bucket=BUCKET):
        self.assertEqual(self.raw.head_status(bucket, key), 404)


class SignedUploadTest(PostCase):
    def test_answers_and_stored_metadata(self):
        data = b"posted by a form\n"
        extra = {"Content-Type": "text/plain", "x-amz-meta-color": "teal",
                 "Cache-Control": "max-age=60", "x-amz-checksum-crc32": h.crc32_b64(data),
                 "tagging": "<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag>"
                            "</TagSet></Tagging>"}
        fields = self.presigned("a/plain.txt", extra, [{k: v} for k, v in extra.items()])
        r = self.post(fields, data)
        self.assertEqual(r.status, 204, r)
        etag = '"' + hashlib.md5(data).hexdigest() + '"'
        self.assertEqual(r.header("ETag"), etag)
        self.assertTrue(r.header("Location").endswith(f"/{BUCKET}/a/plain.txt"), r)
        got = self.s3.get_object(Bucket=BUCKET, Key="a/plain.txt", ChecksumMode="ENABLED")
        self.assertEqual(got["Body"].read(), data)
        self.assertEqual(got["ChecksumCRC32"], h.crc32_b64(data))
        self.assertEqual(got["ContentType"], "text/plain")
        self.assertEqual(got["CacheControl"], "max-age=60")
        self.assertEqual(got["Metadata"], {"color": "teal"})
        tags = self.s3.get_object_tagging(Bucket=BUCKET, Key="a/plain.txt")["TagSet"]
        self.assertEqual(tags, [{"Key": "k", "Value": "v"}])

        r = self.post(self.presigned("a/201.txt", {"success_action_status": "201"},
                                     [{"success_action_status": "201"}]), data)
        self.assertEqual(r.status, 201, r)
        doc = ET.fromstring(r.body)
        self.assertEqual(doc.tag, "PostResponse")
        self.assertEqual({c.tag: c.text for c in doc},
                         {"Location": f"http://{self.raw.host}/{BUCKET}/a/201.txt",
                          "Bucket": BUCKET, "Key": "a/201.txt", "ETag": etag})

        r = self.post(self.presigned("a/200.txt", {"success_action_status": "200"},
                                     [{"success_action_status": "200"}]), data)
        self.assertEqual((r.status, r.body), (200, b""), r)

        target = "https://app.example.com/done?x=1"
        r = self.post(self.presigned("a/303 file.txt", {"success_action_redirect": target},
                                     [{"success_action_redirect": target}]), data)
        self.assertEqual(r.status, 303, r)
        location = urllib.parse.urlsplit(r.header("Location"))
        self.assertEqual(location.netloc + location.path, "app.example.com/done")
        self.assertEqual(urllib.parse.parse_qs(location.query),
                         {"x": ["1"], "bucket": [BUCKET], "key": ["a/303 file.txt"],
                          "etag": [etag]})
        self.assertEqual(self.s3.head_object(Bucket=BUCKET, Key="a/303 file.txt")["ETag"], etag)

        # A redirect that is no absolute http(s) URL is ignored, as S3 ignores it.
        extra = {"success_action_redirect": "javascript:alert(1)", "success_action_status": "201"}
        r = self.post(self.presigned("a/ignored.txt", extra, [{k: v} for k, v in extra.items()]),
                      data)
        self.assertEqual((r.status, r.header("Location")),
                         (201, f"http://{self.raw.host}/{BUCKET}/a/ignored.txt"), r)

    def test_filename_acl_and_a_blob_sized_file(self):
        data = os.urandom(3 << 20)  # past the inline size: stored in blobs
        fields = self.presigned("up/${filename}", {"acl": "public-read"},
                                [["starts-with", "$key", "up/"], {"acl": "public-read"},
                                 ["content-length-range", 1, 4 << 20]])
        r = self.post(fields, data, filename="photo.bin")
        self.assertEqual(r.status, 204, r)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="up/photo.bin")["Body"].read(),
                         data)
        # The acl field: anyone reads it, while a private object stays private.
        anonymous = self.raw.request("GET", f"/{BUCKET}/up/photo.bin", sign=False)
        self.assertEqual((anonymous.status, hashlib.md5(anonymous.body).hexdigest()),
                         (200, hashlib.md5(data).hexdigest()))
        self.assertEqual(self.raw.request("GET", f"/{BUCKET}/a/plain.txt", sign=False).status,
                         403)

    def test_curl_form_over_https(self):
        # curl -F: its own multipart encoding, Expect: 100-continue for a
        # body past 1 MiB, TLS.
        data = os.urandom((2 << 20) + 7)
        path = os.path.join(self.tmp, "big.bin")
        with open(path, "wb") as f:
            f.write(data)
        s3 = self.c.boto3_client(https=True)
        post = s3.generate_presigned_post(BUCKET, "curl/${filename}", Fields={
            "success_action_status": "201"}, Conditions=[["starts-with", "$key", "curl/"],
                                                         {"success_action_status": "201"}])
        args = [a for n, v in post["fields"].items() for a in ("-F", f"{n}={v}")]
        rc, out, err = self.c.curl("-w", "\n%{http_code}", *args, "-F", f"file=@{path}",
                                   post["url"], https=True)
        body, _, status = out.rpartition("\n")
        self.assertEqual(status, "201", out + err)
        self.assertIn("<Key>curl/big.bin</Key>", body)
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="curl/big.bin")["Body"].read(), data)

    def test_sigv2_form(self):
        policy = base64.b64encode(json.dumps({
            "expiration": "2099-01-01T00:00:00.000Z",
            "conditions": [{"bucket": BUCKET}, ["starts-with", "$key", "v2/"]]}).encode())
        signature = base64.b64encode(hmac.new(self.c.secret_key.encode(), policy,
                                              hashlib.sha1).digest()).decode()
        fields = [("key", "v2/old.txt"), ("AWSAccessKeyId", self.c.access_key),
                  ("policy", policy.decode()), ("signature", signature),
                  ("x-ignore-note", "not checked, not stored")]
        r = self.post(fields, b"signed the old way")
        self.assertEqual(r.status, 204, r)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="v2/old.txt")["Body"].read(),
                         b"signed the old way")
        bad = [(n, v if n != "signature" else base64.b64encode(b"x" * 20).decode())
               for n, v in fields]
        self.assert_refused(self.post(bad, b"x"), "SignatureDoesNotMatch", 403)

    def test_anonymous_forms(self):
        # No signature, no policy: an anonymous PutObject.
        self.assert_refused(self.post([("key", "anon.txt")], b"x"), "AccessDenied", 403)
        self.assert_absent("anon.txt")
        r = self.post([("key", "anon.txt")], b"anyone", bucket=PUBLIC)
        self.assertEqual(r.status, 204, r)
        # What anonymous writes, anonymous owns (its owner reads it; the
        # bucket's owner is not granted it), as PutObject.
        r = self.raw.request("GET", f"/{PUBLIC}/anon.txt", sign=False)
        self.assertEqual((r.status, r.body), (200, b"anyone"), r)
        self.assertEqual(self.raw.head_status(PUBLIC, "anon.txt"), 403)
        # A page on another origin reads the answer where a CORS rule admits POST.
        origin = "https://forms.example.com"
        self.s3.put_bucket_cors(Bucket=PUBLIC, CORSConfiguration={"CORSRules": [{
            "AllowedOrigins": [origin], "AllowedMethods": ["POST"], "ExposeHeaders": ["ETag"]}]})
        r = self.post([("key", "cors.txt")], b"x", bucket=PUBLIC, headers={"Origin": origin})
        self.assertEqual((r.status, r.header("Access-Control-Allow-Origin"),
                          r.header("Access-Control-Expose-Headers")), (204, origin, "ETag"), r)


class RefusalTest(PostCase):
    def test_policy_and_signature_refusals(self):
        base = [{"bucket": BUCKET}, ["starts-with", "$key", "r/"]]
        refused = [
            ("expired", v4_form(self.c, base, [("key", "r/1")], expires_in_s=-60),
             "AccessDenied", 403),
            ("eq", v4_form(self.c, base + [{"Content-Type": "image/png"}],
                           [("key", "r/2"), ("Content-Type", "text/plain")]),
             "AccessDenied", 403),
            ("starts-with", v4_form(self.c, base, [("key", "elsewhere/3")]), "AccessDenied", 403),
            ("extra field", v4_form(self.c, base, [("key", "r/4"), ("x-amz-meta-a", "b")]),
             "AccessDenied", 403),
            ("bad signature", v4_form(self.c, base, [("key", "r/5")], secret_key="not-it"),
             "SignatureDoesNotMatch", 403),
            ("unknown key", v4_form(self.c, base, [("key", "r/6")], access_key="AKIDUNKNOWN0000"),
             "InvalidAccessKeyId", 403),
            ("bad Content-MD5", v4_form(self.c, base + [{"Content-MD5": h.md5_b64(b"other")}],
                                        [("key", "r/8"), ("Content-MD5", h.md5_b64(b"other"))]),
             "BadDigest", 400),
            ("bad checksum", v4_form(self.c, base + [{"x-amz-checksum-crc32": h.crc32_b64(b"o")}],
                                     [("key", "r/9"), ("x-amz-checksum-crc32", h.crc32_b64(b"o"))]),
             "BadDigest", 400),
            ("no key field", v4_form(self.c, [{"bucket": BUCKET}], []), "InvalidArgument", 400),
            ("bad policy", [("key", "r/7"), ("AWSAccessKeyId", self.c.access_key),
                            ("policy", "bm90IGpzb24="),  # "not json", rightly signed
                            ("signature", base64.b64encode(hmac.new(
                                self.c.secret_key.encode(), b"bm90IGpzb24=",
                                hashlib.sha1).digest()).decode())],
             "InvalidPolicyDocument", 400),
        ]
        for what, fields, code, status in refused:
            with self.subTest(what):
                self.assert_refused(self.post(fields, b"never stored"), code, status)
        for key in ("r/1", "r/2", "elsewhere/3", "r/4", "r/5", "r/6", "r/7", "r/8", "r/9"):
            self.assert_absent(key)

    def test_content_length_range_frees_what_was_written(self):
        # Blobs are 8 MiB (router.s3_blob_bytes): each refusal below comes
        # after a whole blob was written, which must be freed.
        conditions = [["starts-with", "$key", "len/"], ["content-length-range", 9 << 20, 10 << 20]]
        r = self.post(v4_form(self.c, conditions, [("key", "len/small")]), b"tiny")
        self.assert_refused(r, "EntityTooSmall", 400)
        self.assertEqual(r.error().get("ProposedSize"), "4", r)
        r = self.post(v4_form(self.c, conditions, [("key", "len/under")]),
                      os.urandom((8 << 20) + (512 << 10)))  # refused once the file ended
        self.assert_refused(r, "EntityTooSmall", 400)
        r = self.post(v4_form(self.c, conditions, [("key", "len/large")]),
                      os.urandom(12 << 20))  # refused as it passes 10 MiB
        self.assert_refused(r, "EntityTooLarge", 400)
        for key in ("len/small", "len/under", "len/large"):
            self.assert_absent(key)
        self.c.wait_s3_check(self, 90)

    def test_malformed_forms(self):
        fields = v4_form(self.c, [["starts-with", "$key", "m/"]], [("key", "m/1")])
        content_type, body = form_body(fields, b"", files=0)
        r = self.raw.send("POST", f"/{BUCKET}", headers={"Content-Type": content_type}, body=body)
        self.assert_refused(r, "InvalidArgument", 400)
        self.assertEqual((r.error()["ArgumentName"], r.error()["Message"]),
                         ("file", "POST requires exactly one file upload per request."))
        content_type, body = form_body(fields, b"data", files=2)
        r = self.raw.send("POST", f"/{BUCKET}", headers={"Content-Type": content_type}, body=body)
        self.assert_refused(r, "InvalidArgument", 400)
        content_type, body = form_body(fields, b"data")
        r = self.raw.send("POST", f"/{BUCKET}", headers={"Content-Type": content_type},
                          body=body[:-40])  # no closing delimiter
        self.assert_refused(r, "MalformedPOSTRequest", 400)
        r = self.raw.send("POST", f"/{BUCKET}", headers={"Content-Type": content_type},
                          body=b"no delimiter at all")
        self.assert_refused(r, "MalformedPOSTRequest", 400)
        r = self.raw.send("POST", f"/{BUCKET}", headers={"Content-Type": "text/plain"},
                          body=b"key=m/2")
        self.assert_refused(r, "PreconditionFailed", 412)
        # A value that would split a response when replayed as a header.
        fields = v4_form(self.c, [{"key": "m/3"}, {"x-amz-meta-a": "x\r\nSet-Cookie: y"}],
                         [("key", "m/3"), ("x-amz-meta-a", "x\r\nSet-Cookie: y")])
        self.assert_refused(self.post(fields, b"x"), "InvalidArgument", 400)
        self.assert_absent("m/1")
        self.assert_absent("m/3")

    def test_block_public_acls(self):
        fields = v4_form(self.c, [{"bucket": BLOCKED}, {"key": "pub"}, {"acl": "public-read"}],
                         [("key", "pub"), ("acl", "public-read")])
        self.assert_refused(self.post(fields, b"x", bucket=BLOCKED), "AccessDenied", 403)
        self.assert_absent("pub", bucket=BLOCKED)
        fields = v4_form(self.c, [{"bucket": BLOCKED}, {"key": "priv"}, {"acl": "private"}],
                         [("key", "priv"), ("acl", "private")])
        self.assertEqual(self.post(fields, b"x", bucket=BLOCKED).status, 204)


PAGE = """<!doctype html><html><body>
<form id="f" method="post" enctype="multipart/form-data" action=%(action)s>
%(inputs)s
<input type="file" id="file" name="file">
</form>
<script>
const dt = new DataTransfer();
dt.items.add(new File([%(content)s], 'hello.txt', {type: 'text/plain'}));
document.getElementById('file').files = dt.files;
document.getElementById('f').submit();
</script></body></html>"""

DONE = """<!doctype html><html><body><pre id="out"></pre>
<script>document.getElementById('out').textContent = 'RESULT' + location.search + 'END';</script>
</body></html>"""


FETCH = """<!doctype html><html><body><pre id="out"></pre>
<script>
(async () => {
  const fd = new FormData();
  for (const [n, v] of Object.entries(%(fields)s)) fd.append(n, v);
  fd.append('file', new File([%(content)s], 'f.txt'));
  let out;
  try {
    const r = await fetch(%(url)s, {method: 'POST', body: fd});
    out = {status: r.status, etag: r.headers.get('ETag'), body: await r.text()};
  } catch (e) { out = {blocked: String(e)}; }
  document.getElementById('out').textContent = 'RESULT' + JSON.stringify(out) + 'END';
})();
</script></body></html>"""


class BrowserTest(PostCase):
    def test_an_html_form_uploads_and_follows_the_redirect(self):
        if not h.CHROMIUM:
            self.skipTest("chromium is not installed (Debian package chromium; "
                          "scripts/install-deps.sh installs it)")
        page_port = free_ports.free_ports(1)[0]
        origin = f"http://127.0.0.1:{page_port}"
        redirect = f"{origin}/done.html"
        post = self.s3.generate_presigned_post(
            BUCKET, "browser/${filename}", Fields={"success_action_redirect": redirect},
            Conditions=[["starts-with", "$key", "browser/"],
                        {"success_action_redirect": redirect}], ExpiresIn=600)
        inputs = "\n".join(
            f'<input type="hidden" name="{n}" value="{v}">' for n, v in post["fields"].items())
        content = "bytes from a browser \u00e9\u00e8 \U0001F600\n"
        site = os.path.join(self.tmp, "site")
        os.makedirs(site)
        with open(os.path.join(site, "page.html"), "w") as f:
            f.write(PAGE % {"action": json.dumps(post["url"]), "inputs": inputs,
                            "content": json.dumps(content)})
        with open(os.path.join(site, "done.html"), "w") as f:
            f.write(DONE)
        h.serve_directory(self, site, page_port)
        stdout, stderr = h.chromium_dom(self, self.c, f"{origin}/page.html")
        found = re.search(r'<pre id="out">RESULT(.*?)END</pre>', stdout, re.S)
        self.assertIsNotNone(found, stdout[-2000:] + stderr[-2000:])
        query = urllib.parse.parse_qs(found.group(1).replace("&amp;", "&").lstrip("?"))
        print(f"[browser landed with {query}]", end=" ")
        expected = content.encode()
        self.assertEqual(query, {"bucket": [BUCKET], "key": ["browser/hello.txt"],
                                 "etag": ['"' + hashlib.md5(expected).hexdigest() + '"']})
        got = self.s3.get_object(Bucket=BUCKET, Key="browser/hello.txt")
        self.assertEqual(got["Body"].read(), expected)

    def test_a_script_on_another_origin_posts_a_form_data(self):
        if not h.CHROMIUM:
            self.skipTest("chromium is not installed (Debian package chromium; "
                          "scripts/install-deps.sh installs it)")
        page_port = free_ports.free_ports(1)[0]
        origin = f"http://127.0.0.1:{page_port}"
        bucket = "post-cors"
        self.s3.create_bucket(Bucket=bucket)
        self.s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{
            "AllowedOrigins": [origin], "AllowedMethods": ["POST"], "ExposeHeaders": ["ETag"]}]})
        post = self.s3.generate_presigned_post(
            bucket, "fetched.txt", Fields={"success_action_status": "201"},
            Conditions=[{"success_action_status": "201"}], ExpiresIn=600)
        content = "sent by fetch\n"
        site = os.path.join(self.tmp, "site")
        os.makedirs(site)
        with open(os.path.join(site, "fetch.html"), "w") as f:
            f.write(FETCH % {"fields": json.dumps(post["fields"]), "url": json.dumps(post["url"]),
                             "content": json.dumps(content)})
        h.serve_directory(self, site, page_port)
        stdout, stderr = h.chromium_dom(self, self.c, f"{origin}/fetch.html")
        found = re.search(r'<pre id="out">RESULT(.*?)END</pre>', stdout, re.S)
        self.assertIsNotNone(found, stdout[-2000:] + stderr[-2000:])
        result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")
                            .replace("&lt;", "<").replace("&gt;", ">"))
        etag = '"' + hashlib.md5(content.encode()).hexdigest() + '"'
        self.assertEqual((result.get("status"), result.get("etag")), (201, etag), result)
        self.assertIn("<Key>fetched.txt</Key>", result["body"])
        self.assertEqual(self.s3.get_object(Bucket=bucket, Key="fetched.txt")["Body"].read(),
                         content.encode())


if __name__ == "__main__":
    unittest.main(verbosity=2)
