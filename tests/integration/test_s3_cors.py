#!/usr/bin/env python3
"""CORS on buckets, as AWS S3 answers it.

Goal: prove against a whole local Tessera cluster that:
  1. PutBucketCors / GetBucketCors / DeleteBucketCors round-trip the rules
     through boto3 and the aws CLI, only for the bucket's owner, and bad
     configurations are refused (MalformedXML, InvalidRequest) with nothing
     changed;
  2. preflight OPTIONS requests are answered from the rules without
     credentials: 200 with the admitting rule's Access-Control-* headers,
     403 AccessForbidden when no rule admits the origin, method or headers
     or the bucket has no rules, 400 without Origin, NoSuchBucket;
  3. actual requests with an Origin carry the rule's headers, others none;
  4. a page in headless Chromium on another origin uploads an object with
     a presigned PUT (preflighted) and reads it back, reads the ETag the
     rule exposes, and is blocked by the browser on a bucket without rules.
One cluster for the whole file.
"""

import json
import os
import re
import unittest

import free_ports
import s3_harness as h

CLUSTER = None
BUCKET = "cors-site"
PLAIN = "cors-none"
ORIGIN_RULES = """<CORSConfiguration>
  <CORSRule><ID>app</ID>
    <AllowedOrigin>https://*.example.com</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>content-type</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>600</MaxAgeSeconds>
  </CORSRule>
  <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>
</CORSConfiguration>"""


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-cors")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    s3 = CLUSTER.boto3_client()
    s3.create_bucket(Bucket=BUCKET)
    s3.create_bucket(Bucket=PLAIN)


def error_code(call, *args, **kw):
    from botocore.exceptions import ClientError
    try:
        call(*args, **kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


class CorsConfigurationTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client()
        self.raw = h.S3Raw(self.c)

    def put_rules(self, body, bucket=BUCKET):
        data = body.encode()
        return self.raw.request("PUT", f"/{bucket}", [("cors", "")],
                                {"Content-MD5": h.md5_b64(data)}, data)

    def test_rules_round_trip_and_delete(self):
        self.assertEqual(error_code(self.s3.get_bucket_cors, Bucket=PLAIN),
                         "NoSuchCORSConfiguration")
        rules = [{"ID": "one", "AllowedOrigins": ["https://a.example"],
                  "AllowedMethods": ["GET", "HEAD"], "AllowedHeaders": ["*"],
                  "ExposeHeaders": ["ETag", "x-amz-request-id"], "MaxAgeSeconds": 30},
                 {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]
        self.s3.put_bucket_cors(Bucket=PLAIN, CORSConfiguration={"CORSRules": rules})
        got = self.s3.get_bucket_cors(Bucket=PLAIN)["CORSRules"]
        self.assertEqual(got, rules)
        r = self.s3.delete_bucket_cors(Bucket=PLAIN)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertEqual(error_code(self.s3.get_bucket_cors, Bucket=PLAIN),
                         "NoSuchCORSConfiguration")

    def test_aws_cli_sets_and_reads_rules(self):
        path = os.path.join(self.tmp, "cors.json")
        with open(path, "w") as f:
            json.dump({"CORSRules": [{"AllowedOrigins": ["https://cli.example"],
                                      "AllowedMethods": ["PUT"]}]}, f)
        bucket = "cors-cli"
        self.s3.create_bucket(Bucket=bucket)
        self.c.aws("s3api", "put-bucket-cors", "--bucket", bucket,
                   "--cors-configuration", f"file://{path}")
        _, stdout, _ = self.c.aws("s3api", "get-bucket-cors", "--bucket", bucket)
        out = json.loads(stdout)
        self.assertEqual(out["CORSRules"], [{"AllowedOrigins": ["https://cli.example"],
                                             "AllowedMethods": ["PUT"]}])

    def test_bad_configurations_change_nothing(self):
        self.assertEqual(self.put_rules(ORIGIN_RULES).status, 200)
        cases = [
            ("<CORSConfiguration/>", 400, "MalformedXML"),
            ("<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule>"
             "</CORSConfiguration>", 400, "MalformedXML"),
            ("<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH"
             "</AllowedMethod></CORSRule></CORSConfiguration>", 400, "InvalidRequest"),
            ("<CORSConfiguration><CORSRule><AllowedOrigin>http://*.*</AllowedOrigin>"
             "<AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>", 400,
             "InvalidRequest"),
            ("not xml", 400, "MalformedXML"),
        ]
        for body, status, code in cases:
            with self.subTest(body=body):
                r = self.put_rules(body)
                self.assertEqual((r.status, r.error()["Code"]), (status, code), r)
        r = self.put_rules("<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>"
                           "<AllowedMethod>PATCH</AllowedMethod></CORSRule></CORSConfiguration>")
        self.assertIn("Unsupported method is PATCH", r.error()["Message"])
        self.assertEqual(len(self.s3.get_bucket_cors(Bucket=BUCKET)["CORSRules"]), 2)

    def test_rules_live_and_die_with_the_bucket(self):
        # The bucket's configuration record sits before its objects in its
        # `_s3` partition: listings never show it, and deleting the bucket
        # removes it, so a bucket re-created under the name has no rules.
        name = "cors-recreated"
        self.s3.create_bucket(Bucket=name)
        self.assertEqual(self.put_rules(ORIGIN_RULES, bucket=name).status, 200)
        self.assertEqual(self.s3.list_objects_v2(Bucket=name)["KeyCount"], 0)
        self.assertNotIn("Versions", self.s3.list_object_versions(Bucket=name))
        self.s3.put_object(Bucket=name, Key="!first", Body=b"x")
        keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket=name)["Contents"]]
        self.assertEqual(keys, ["!first"])
        self.assertEqual(len(self.s3.get_bucket_cors(Bucket=name)["CORSRules"]), 2)
        self.assertEqual(error_code(self.s3.delete_bucket, Bucket=name), "BucketNotEmpty")
        self.s3.delete_object(Bucket=name, Key="!first")
        self.s3.delete_bucket(Bucket=name)
        self.s3.create_bucket(Bucket=name)
        self.assertEqual(error_code(self.s3.get_bucket_cors, Bucket=name),
                         "NoSuchCORSConfiguration")
        r = self.raw.request("OPTIONS", f"/{name}/k", sign=False,
                             headers={"Origin": "https://app.example.com",
                                      "Access-Control-Request-Method": "GET"})
        self.assertEqual((r.status, r.error()["Code"]), (403, "AccessForbidden"), r)
        self.s3.delete_bucket(Bucket=name)

    def test_a_configuration_past_the_record_bound_is_refused(self):
        # 100 rules (S3's most) of long origins: over the record's bound.
        origin = "https://" + "o" * 3000 + ".example.com"
        rules = "".join(f"<CORSRule><AllowedOrigin>{origin}</AllowedOrigin>"
                        "<AllowedMethod>GET</AllowedMethod></CORSRule>" for _ in range(100))
        r = self.put_rules(f"<CORSConfiguration>{rules}</CORSConfiguration>")
        self.assertEqual((r.status, r.error()["Code"]), (400, "EntityTooLarge"), r)

    def test_only_the_owner_sets_or_reads_rules(self):
        access, secret = self.c.create_user("cors-other")
        other = self.c.boto3_client(access_key=access, secret_key=secret)
        self.assertEqual(error_code(other.put_bucket_cors, Bucket=BUCKET, CORSConfiguration={
            "CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]}),
            "AccessDenied")
        self.assertEqual(error_code(other.get_bucket_cors, Bucket=BUCKET), "AccessDenied")
        self.assertEqual(error_code(other.delete_bucket_cors, Bucket=BUCKET), "AccessDenied")
        self.assertEqual(error_code(self.s3.put_bucket_cors, Bucket="cors-absent",
                                    CORSConfiguration={"CORSRules": [
                                        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]}),
                         "NoSuchBucket")


class PreflightTest(h.ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        data = ORIGIN_RULES.encode()
        r = h.S3Raw(CLUSTER).request("PUT", f"/{BUCKET}", [("cors", "")],
                                     {"Content-MD5": h.md5_b64(data)}, data)
        assert r.status == 200, r

    def setUp(self):
        super().setUp()
        self.raw = h.S3Raw(self.c)

    def options(self, path, origin="https://app.example.com", method="PUT", headers=None):
        hdrs = {}
        if origin is not None:
            hdrs["Origin"] = origin
        if method is not None:
            hdrs["Access-Control-Request-Method"] = method
        if headers is not None:
            hdrs["Access-Control-Request-Headers"] = headers
        return self.raw.send("OPTIONS", path, headers=hdrs)

    def test_an_admitted_preflight_gets_the_rules_headers(self):
        r = self.options(f"/{BUCKET}/photos/a.jpg", headers="X-Amz-Date, Content-Type")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Access-Control-Allow-Origin"), "https://app.example.com")
        self.assertEqual(r.header("Access-Control-Allow-Methods"), "GET, PUT")
        self.assertEqual(r.header("Access-Control-Allow-Headers"), "x-amz-date, content-type")
        self.assertEqual(r.header("Access-Control-Expose-Headers"), "ETag")
        self.assertEqual(r.header("Access-Control-Max-Age"), "600")
        self.assertEqual(r.header("Access-Control-Allow-Credentials"), "true")
        self.assertIn("Origin", r.header("Vary"))
        # Any origin may GET (the second rule), and is told "*".
        r = self.options(f"/{BUCKET}/x", origin="https://else.org", method="GET")
        self.assertEqual((r.status, r.header("Access-Control-Allow-Origin")), (200, "*"), r)

    def test_refused_preflights(self):
        cases = [
            ({"origin": "https://else.org", "method": "PUT"}, 403, "AccessForbidden"),
            ({"method": "DELETE"}, 403, "AccessForbidden"),
            ({"headers": "x-custom"}, 403, "AccessForbidden"),
            ({"origin": "http://app.example.com"}, 403, "AccessForbidden"),
            ({"origin": None}, 400, "BadRequest"),
            ({"method": None}, 400, "BadRequest"),
        ]
        for kw, status, code in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                r = self.options(f"/{BUCKET}/k", **kw)
                self.assertEqual((r.status, r.error()["Code"]), (status, code), r)
                self.assertIsNone(r.header("Access-Control-Allow-Origin"))
        r = self.options(f"/{PLAIN}/k")
        self.assertEqual((r.status, r.error()["Code"]), (403, "AccessForbidden"), r)
        self.assertIn("CORS is not enabled", r.error()["Message"])
        r = self.options("/cors-absent/k")
        self.assertEqual((r.status, r.error()["Code"]), (404, "NoSuchBucket"), r)

    def test_actual_requests_carry_the_headers_of_the_admitting_rule(self):
        s3 = self.c.boto3_client()
        s3.put_object(Bucket=BUCKET, Key="page.txt", Body=b"hello")
        r = self.raw.request("GET", f"/{BUCKET}/page.txt",
                             headers={"Origin": "https://app.example.com"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Access-Control-Allow-Origin"), "https://app.example.com")
        self.assertEqual(r.header("Access-Control-Expose-Headers"), "ETag")
        # DELETE is in no rule: served, without CORS headers.
        s3.put_object(Bucket=BUCKET, Key="gone.txt", Body=b"x")
        r = self.raw.request("DELETE", f"/{BUCKET}/gone.txt",
                             headers={"Origin": "https://app.example.com"})
        self.assertEqual(r.status, 204, r)
        self.assertIsNone(r.header("Access-Control-Allow-Origin"))
        # No Origin, no CORS headers.
        r = self.raw.request("GET", f"/{BUCKET}/page.txt")
        self.assertIsNone(r.header("Access-Control-Allow-Origin"))


PAGE = """<!DOCTYPE html><html><body><pre id="out">running</pre><script>
async function attempt(url, init, read) {
  try {
    const r = await fetch(url, init);
    return read ? {status: r.status, body: await r.text(), etag: r.headers.get('ETag')}
                : {status: r.status, etag: r.headers.get('ETag')};
  } catch (e) {
    return {blocked: String(e)};
  }
}
(async () => {
  const out = {};
  out.put = await attempt(%(put)s, {method: 'PUT', body: 'written by a browser',
                                    headers: {'Content-Type': 'text/plain'}}, false);
  out.get = await attempt(%(get)s, {}, true);
  out.other = await attempt(%(other)s, {}, true);
  document.getElementById('out').textContent = 'RESULT' + JSON.stringify(out) + 'END';
})();
</script></body></html>"""


class BrowserTest(h.ClusterTestCase):
    def test_a_page_on_another_origin_uploads_and_reads_back(self):
        if not h.CHROMIUM:
            self.skipTest("chromium is not installed (Debian package chromium; "
                          "scripts/install-deps.sh installs it)")
        page_port = free_ports.free_ports(1)[0]
        origin = f"http://127.0.0.1:{page_port}"
        s3 = self.c.boto3_client()
        bucket = "cors-browser"
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{
            "AllowedOrigins": [origin], "AllowedMethods": ["GET", "PUT"],
            "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"]}]})
        s3.put_object(Bucket=PLAIN, Key="secret.txt", Body=b"no cors here")
        put = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "up.txt"},
                                        ExpiresIn=600)
        get = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "up.txt"},
                                        ExpiresIn=600)
        other = s3.generate_presigned_url("get_object",
                                          Params={"Bucket": PLAIN, "Key": "secret.txt"},
                                          ExpiresIn=600)
        site = os.path.join(self.tmp, "site")
        os.makedirs(site)
        with open(os.path.join(site, "page.html"), "w") as f:
            f.write(PAGE % {"put": json.dumps(put), "get": json.dumps(get),
                            "other": json.dumps(other)})

        h.serve_directory(self, site, page_port)
        stdout, stderr = h.chromium_dom(self, self.c, f"{origin}/page.html")
        found = re.search(r'<pre id="out">RESULT(.*?)END</pre>', stdout, re.S)
        self.assertIsNotNone(found, stdout[-2000:] + stderr[-2000:])
        result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        print(f"[browser: {result}]", end=" ")
        self.assertEqual(result["put"]["status"], 200, result)
        self.assertTrue(result["put"]["etag"], result)  # exposed by the rule
        self.assertEqual(result["get"]["status"], 200, result)
        self.assertEqual(result["get"]["body"], "written by a browser", result)
        self.assertIn("blocked", result["other"], result)
        body = s3.get_object(Bucket=bucket, Key="up.txt")["Body"].read()
        self.assertEqual(body, b"written by a browser")


if __name__ == "__main__":
    unittest.main(verbosity=2)
