#!/usr/bin/env python3
"""S3 error documents with AWS's detail elements, and the listings AWS pages.

Goal: prove against a whole local Tessera cluster that the answers AWS gives
(its error codes, messages and the detail elements it puts between Message
and Resource, and its listing edge cases) are the ones Tessera gives:
  1. ListBuckets pages by max-buckets / continuation-token, filters by a
     case-sensitive prefix and by bucket-region, and refuses a bad
     max-buckets or an unknown region with InvalidArgument naming it;
  2. ListObjectsV2 echoes StartAfter only on a request without a token;
  3. a bad encoding-type on every listing is InvalidArgument naming it (no
     ArgumentValue when the value is empty);
  4. a bad continuation-token, max-keys or max-uploads is InvalidArgument
     naming the argument;
  5. ListObjectVersions refuses a version-id-marker without a key marker,
     and a page truncated on a common prefix has no NextVersionIdMarker;
  6. ListMultipartUploads has no Prefix without a prefix parameter, and its
     Next markers name the page's last upload only;
  7. an empty VersioningConfiguration is refused and changes nothing;
  8. a delete marker answers 405 (Method, ResourceType DeleteMarker) to
     ACL and GET requests, and tagging of a missing version is NoSuchVersion
     with Key and VersionId;
  9. an unrouted method is 405 naming Method and SERVICE / BUCKET / OBJECT;
 10. empty and malformed version ids and part numbers are InvalidArgument
     naming the argument and its value;
 11. multipart errors name UploadId, PartNumber, ETag, ProposedSize and
     MinSizeAllowed; a part's checksum not asked for at creation is not
     listed and cannot be named in the completion;
 12. a conditional CompleteMultipartUpload is PreconditionFailed or, when
     the object changed since the upload began, ConditionalRequestConflict;
 13. the conditional write forms S3 lacks are NotImplemented naming the
     Header, and every PreconditionFailed names its Condition;
 14. DeleteObject's size and time conditions, when they fail, are 412
     naming the condition header (D85);
 15. bad copy sources, ranges and metadata directives name the argument;
 16. BucketNotEmpty on a versioned bucket says to delete all versions.
Every error document is checked for <Code><Message>...<Resource><RequestId>
order, its exact code and status, and each detail element. Small parts are
refused below 1,024 bytes (s3_min_part_bytes) so EntityTooSmall is cheap.
One cluster for the whole file.
"""

import email.utils
import time
import unittest
import xml.etree.ElementTree as ET

import botocore.exceptions

import s3_harness as h

CLUSTER = None
BUCKET = "details"            # never versioned
VBUCKET = "details-versions"  # versioning enabled
MIN_PART = 1024


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-error-details", router_settings=f"s3_min_part_bytes: {MIN_PART}")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()
    s3 = CLUSTER.boto3_client()
    s3.create_bucket(Bucket=BUCKET)
    s3.create_bucket(Bucket=VBUCKET)
    s3.put_bucket_versioning(Bucket=VBUCKET, VersioningConfiguration={"Status": "Enabled"})


def http_date(offset_s):
    return email.utils.formatdate(time.time() + offset_s, usegmt=True)


def xml(body):
    """The document's root with namespaces stripped from every tag."""
    root = ET.fromstring(body)
    for el in root.iter():
        el.tag = el.tag.rsplit("}", 1)[-1]
    return root


def child_tags(root):
    return [c.tag for c in root]


def complete_xml(parts):
    """A CompleteMultipartUpload body from (part number, etag) pairs."""
    body = "".join(f"<Part><PartNumber>{n}</PartNumber><ETag>{e}</ETag></Part>" for n, e in parts)
    return f"<CompleteMultipartUpload>{body}</CompleteMultipartUpload>".encode()


class ErrorDetailsTest(h.ClusterTestCase):
    def setUp(self):
        super().setUp()
        self.s3 = self.c.boto3_client(retries=1)
        self.raw = h.S3Raw(self.c)

    # --- helpers -----------------------------------------------------------
    def error_doc(self, resp, status, code, message=None, absent=(), **details):
        """Asserts an S3 error response: status, <Error> with Code, Message,
        the detail elements, then Resource and RequestId; `details` exact,
        `absent` elements missing. Returns the elements as a dict."""
        self.assertEqual(resp.status, status, resp)
        root = xml(resp.body)
        self.assertEqual(root.tag, "Error", resp)
        tags = child_tags(root)
        self.assertEqual(tags[:2], ["Code", "Message"], resp)
        self.assertEqual(tags[-2:], ["Resource", "RequestId"], resp)
        self.assertEqual(len(tags), len(set(tags)), resp)
        doc = {c.tag: c.text or "" for c in root}
        self.assertEqual(doc["Code"], code, resp)
        if message is not None:
            self.assertEqual(doc["Message"], message, resp)
        for name, value in details.items():
            self.assertIn(name, doc, resp)
            self.assertEqual(doc[name], value, (name, resp))
        for name in absent:
            self.assertNotIn(name, doc, resp)
        return doc

    def boto_error(self, call, status, code, message=None, **kw):
        """call(**kw) fails with this status and code; returns botocore's
        Error dict (every child element of <Error>)."""
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            call(**kw)
        resp = e.exception.response
        self.assertEqual((resp["ResponseMetadata"]["HTTPStatusCode"], resp["Error"]["Code"]),
                         (status, code), resp)
        if message is not None:
            self.assertEqual(resp["Error"]["Message"], message, resp)
        return resp["Error"]

    def get(self, path, query=(), headers=None):
        return self.raw.request("GET", path, query=query, headers=headers)

    def new_upload(self, bucket, key):
        upload = self.s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        self.addCleanup(self._abort_quietly, bucket, key, upload)
        return upload

    def two_part_upload(self, key, first, second):
        """A new upload of `key` in BUCKET with parts 1 and 2; (id, etag1, etag2)."""
        upload = self.new_upload(BUCKET, key)
        etags = [self.s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=n,
                                     Body=body)["ETag"] for n, body in ((1, first), (2, second))]
        return upload, etags[0], etags[1]

    def _abort_quietly(self, bucket, key, upload):
        try:
            self.s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
        except botocore.exceptions.ClientError:
            pass  # completed or already aborted

    # --- 1. ListBuckets ------------------------------------------------------
    def test_list_buckets_pagination_prefix_and_region(self):
        """ListBuckets pages, filters and refuses bad arguments as AWS's 2024 API does."""
        prefix = "pglb-"
        names = [prefix + s for s in ("delta", "alpha", "echo", "charlie", "bravo")]
        for name in names:
            self.s3.create_bucket(Bucket=name)
            self.addCleanup(self.s3.delete_bucket, Bucket=name)
        expected = sorted(names)

        pages, token = [], None
        for _ in range(10):
            kw = {"ContinuationToken": token} if token else {}
            r = self.s3.list_buckets(MaxBuckets=2, Prefix=prefix, **kw)
            self.assertEqual(r.get("Prefix"), prefix, r)
            page = [b["Name"] for b in r["Buckets"]]
            self.assertLessEqual(len(page), 2, r)
            pages.append(page)
            token = r.get("ContinuationToken")
            if not token:
                break
        self.assertEqual(pages, [expected[0:2], expected[2:4], expected[4:]])
        self.assertEqual(sum(pages, []), expected)

        everything = self.s3.list_buckets()
        listed = [b["Name"] for b in everything["Buckets"]]
        self.assertNotIn("ContinuationToken", everything, everything)
        self.assertNotIn("Prefix", everything, everything)
        self.assertEqual(listed, sorted(listed))
        self.assertEqual(sorted(listed), sorted(names + [BUCKET, VBUCKET]), everything)

        # An empty continuation token starts from the beginning.
        resp = self.get("/", [("max-buckets", "1"), ("continuation-token", ""),
                              ("prefix", prefix)])
        self.assertEqual(resp.status, 200, resp)
        root = xml(resp.body)
        self.assertEqual([n.text for n in root.iter("Name")], expected[:1], resp)
        self.assertTrue(root.findtext("ContinuationToken"), resp)

        upper = self.s3.list_buckets(Prefix=prefix.upper())
        self.assertEqual(upper["Buckets"], [], upper)

        self.assertEqual(h.REGION, "us-east-1")
        here = self.s3.list_buckets(Prefix=prefix, BucketRegion=h.REGION)
        self.assertEqual([b["Name"] for b in here["Buckets"]], expected, here)
        elsewhere = self.s3.list_buckets(Prefix=prefix, BucketRegion="eu-west-1")
        self.assertEqual(elsewhere["Buckets"], [], elsewhere)
        resp = self.get("/", [("bucket-region", "eu-east-1")])
        self.error_doc(resp, 400, "InvalidArgument",
                       "Argument value eu-east-1 is not a valid AWS Region",
                       ArgumentName="bucket-region")
        err = self.boto_error(self.s3.list_buckets, 400, "InvalidArgument",
                              BucketRegion="eu-east-1")
        self.assertEqual(err.get("ArgumentName"), "bucket-region", err)

        for value in ("0", "10001", "x"):
            with self.subTest(max_buckets=value):
                resp = self.get("/", [("max-buckets", value)])
                self.error_doc(resp, 400, "InvalidArgument", ArgumentName="max-buckets",
                               ArgumentValue=value)
        for value in ("1", "10000"):
            self.assertEqual(self.get("/", [("max-buckets", value)]).status, 200)

    # --- 2. StartAfter echo --------------------------------------------------
    def test_list_objects_v2_start_after_echoed_only_without_token(self):
        """StartAfter is echoed with start-after alone, not with a continuation token."""
        for key in ("sa/1", "sa/2", "sa/3"):
            self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"s")
        first = self.get(f"/{BUCKET}", [("list-type", "2"), ("prefix", "sa/"),
                                        ("start-after", "sa/1"), ("max-keys", "1")])
        self.assertEqual(first.status, 200, first)
        root = xml(first.body)
        self.assertEqual(root.findtext("StartAfter"), "sa/1", first)
        self.assertEqual([k.text for k in root.iter("Key")], ["sa/2"], first)
        token = root.findtext("NextContinuationToken")
        self.assertTrue(token, first)
        second = self.get(f"/{BUCKET}", [("list-type", "2"), ("prefix", "sa/"),
                                         ("start-after", "sa/1"), ("continuation-token", token)])
        self.assertEqual(second.status, 200, second)
        root = xml(second.body)
        self.assertEqual([k.text for k in root.iter("Key")], ["sa/3"], second)
        self.assertEqual(root.findtext("ContinuationToken"), token, second)
        self.assertNotIn("StartAfter", child_tags(root), second)

    # --- 3-6. listing arguments and markers ---------------------------------
    def test_bad_encoding_type_on_every_listing(self):
        """encoding-type other than url is InvalidArgument on all four listings."""
        listings = {"v1": [], "v2": [("list-type", "2")], "versions": [("versions", None)],
                    "uploads": [("uploads", None)]}
        for name, query in listings.items():
            with self.subTest(listing=name):
                resp = self.get(f"/{BUCKET}", query + [("encoding-type", "url")])
                self.assertEqual(resp.status, 200, resp)
                self.assertIn(b"<EncodingType>url</EncodingType>", resp.body, resp)
                resp = self.get(f"/{BUCKET}", query + [("encoding-type", "value")])
                self.error_doc(resp, 400, "InvalidArgument",
                               "Invalid Encoding Method specified in Request",
                               ArgumentName="encoding-type", ArgumentValue="value")
                resp = self.get(f"/{BUCKET}", query + [("encoding-type", "")])
                self.error_doc(resp, 400, "InvalidArgument",
                               "Invalid Encoding Method specified in Request",
                               absent=("ArgumentValue",), ArgumentName="encoding-type")

    def test_bad_list_arguments_name_the_argument(self):
        """Bad continuation-token, max-keys, max-uploads and version-id-marker are named."""
        for token in ("%%%", "!!"):
            with self.subTest(token=token):
                resp = self.get(f"/{BUCKET}", [("list-type", "2"), ("continuation-token", token)])
                self.error_doc(resp, 400, "InvalidArgument",
                               "The continuation token provided is incorrect",
                               ArgumentName="continuation-token")
        resp = self.get(f"/{BUCKET}", [("list-type", "2"), ("max-keys", "abc")])
        self.error_doc(resp, 400, "InvalidArgument", ArgumentName="max-keys",
                       ArgumentValue="abc")
        resp = self.get(f"/{BUCKET}", [("uploads", None), ("max-uploads", "abc")])
        self.error_doc(resp, 400, "InvalidArgument", ArgumentName="max-uploads")
        # The valid twins answer.
        self.assertEqual(self.get(f"/{BUCKET}", [("list-type", "2"), ("max-keys", "5")]).status,
                         200)
        self.assertEqual(self.get(f"/{BUCKET}", [("uploads", None), ("max-uploads", "5")]).status,
                         200)

        marker = self.s3.put_object(Bucket=VBUCKET, Key="vim", Body=b"v")["VersionId"]
        resp = self.get(f"/{VBUCKET}", [("versions", None), ("version-id-marker", marker)])
        self.error_doc(resp, 400, "InvalidArgument",
                       "A version-id marker cannot be specified without a key marker.",
                       ArgumentName="version-id-marker", ArgumentValue=marker)
        resp = self.get(f"/{VBUCKET}", [("versions", None), ("key-marker", "vim"),
                                        ("version-id-marker", marker)])
        self.assertEqual(resp.status, 200, resp)

    def test_bad_list_parts_arguments_name_the_argument(self):
        """ListParts' max-parts and part-number-marker: negative and
        non-integer values get the two messages S3 gives, naming the argument."""
        key = "lp-args"
        upload = self.new_upload(BUCKET, key)
        path = h.key_path(BUCKET, key)
        for name in ("max-parts", "part-number-marker"):
            with self.subTest(name=name):
                resp = self.get(path, [("uploadId", upload), (name, "-42")])
                self.error_doc(resp, 400, "InvalidArgument",
                               f"Argument {name} must be an integer between 0 and 2147483647",
                               ArgumentName=name, ArgumentValue="-42")
                for value in ("ten", "2147483648"):
                    resp = self.get(path, [("uploadId", upload), (name, value)])
                    self.error_doc(resp, 400, "InvalidArgument",
                                   f"Provided {name} not an integer or within integer range",
                                   ArgumentName=name, ArgumentValue=value)
                self.assertEqual(self.get(path, [("uploadId", upload), (name, "5")]).status, 200)
        parts = self.s3.list_parts(Bucket=BUCKET, Key=key, UploadId=upload, MaxParts=5000)
        self.assertEqual(parts["MaxParts"], 1000, "a page holds at most 1000 parts")

    def test_list_object_versions_truncated_on_common_prefix(self):
        """A versions page ending in a common prefix has NextKeyMarker, no NextVersionIdMarker."""
        for key in ("v7/a/1", "v7/a/2", "v7/b"):
            self.s3.put_object(Bucket=VBUCKET, Key=key, Body=b"x")
        resp = self.get(f"/{VBUCKET}", [("versions", None), ("prefix", "v7/"),
                                        ("delimiter", "/"), ("max-keys", "1")])
        self.assertEqual(resp.status, 200, resp)
        root = xml(resp.body)
        self.assertEqual(root.findtext("IsTruncated"), "true", resp)
        self.assertEqual([p.text for p in root.findall("CommonPrefixes/Prefix")], ["v7/a/"], resp)
        self.assertEqual(root.findall("Version"), [], resp)
        self.assertEqual(root.findtext("NextKeyMarker"), "v7/a/", resp)
        self.assertNotIn("NextVersionIdMarker", child_tags(root), resp)
        # The next page, from that marker, holds v7/b.
        resp = self.get(f"/{VBUCKET}", [("versions", None), ("prefix", "v7/"),
                                        ("delimiter", "/"), ("key-marker", "v7/a/")])
        root = xml(resp.body)
        self.assertEqual([v.findtext("Key") for v in root.findall("Version")], ["v7/b"], resp)

    def test_list_multipart_uploads_prefix_and_next_markers(self):
        """Uploads listings: Prefix only when asked; Next markers name the last upload only."""
        bucket = "details-uploads"
        self.s3.create_bucket(Bucket=bucket)
        self.addCleanup(self.s3.delete_bucket, Bucket=bucket)
        ids = {key: self.new_upload(bucket, key) for key in ("a/1", "a/2", "b", "c")}

        resp = self.get(f"/{bucket}", [("uploads", None)])
        self.assertEqual(resp.status, 200, resp)
        root = xml(resp.body)
        self.assertNotIn("Prefix", child_tags(root), resp)
        self.assertEqual([u.findtext("Key") for u in root.findall("Upload")],
                         ["a/1", "a/2", "b", "c"], resp)
        resp = self.get(f"/{bucket}", [("uploads", None), ("prefix", "a/")])
        root = xml(resp.body)
        self.assertEqual(root.findtext("Prefix"), "a/", resp)
        self.assertEqual([u.findtext("Key") for u in root.findall("Upload")], ["a/1", "a/2"])

        # A page of common prefixes only: empty Next markers.
        resp = self.get(f"/{bucket}", [("uploads", None), ("delimiter", "/"),
                                       ("max-uploads", "1")])
        self.assertEqual(resp.status, 200, resp)
        root = xml(resp.body)
        self.assertEqual(root.findtext("IsTruncated"), "true", resp)
        self.assertEqual([p.text for p in root.findall("CommonPrefixes/Prefix")], ["a/"], resp)
        self.assertEqual(root.findall("Upload"), [], resp)
        for tag in ("NextKeyMarker", "NextUploadIdMarker"):
            self.assertIn(tag, child_tags(root), resp)
            self.assertEqual(root.findtext(tag), "", (tag, resp))
        # A page with an upload after the prefix names that upload.
        resp = self.get(f"/{bucket}", [("uploads", None), ("delimiter", "/"),
                                       ("max-uploads", "2")])
        root = xml(resp.body)
        self.assertEqual(root.findtext("IsTruncated"), "true", resp)
        self.assertEqual([p.text for p in root.findall("CommonPrefixes/Prefix")], ["a/"], resp)
        self.assertEqual([u.findtext("Key") for u in root.findall("Upload")], ["b"], resp)
        self.assertEqual((root.findtext("NextKeyMarker"), root.findtext("NextUploadIdMarker")),
                         ("b", ids["b"]), resp)

    # --- 7. versioning configuration ----------------------------------------
    def test_empty_versioning_configuration_refused(self):
        """An empty VersioningConfiguration is refused and leaves the state unchanged."""
        for bucket, status in ((VBUCKET, "Enabled"), (BUCKET, None)):
            with self.subTest(bucket=bucket):
                self.boto_error(self.s3.put_bucket_versioning, 400,
                                "IllegalVersioningConfigurationException",
                                "The Versioning element must be specified",
                                Bucket=bucket, VersioningConfiguration={})
                body = b"<VersioningConfiguration/>"
                resp = self.raw.request("PUT", f"/{bucket}", query=[("versioning", None)],
                                        body=body, headers={"Content-MD5": h.md5_b64(body)})
                self.error_doc(resp, 400, "IllegalVersioningConfigurationException",
                               "The Versioning element must be specified")
                self.assertEqual(self.s3.get_bucket_versioning(Bucket=bucket).get("Status"),
                                 status)

    # --- 8. delete markers -----------------------------------------------------
    def test_delete_marker_acl_get_and_tagging_versions(self):
        """A delete marker is 405 to ACL/GET requests; tagging of a missing version is 404."""
        key = "dm"
        v1 = self.s3.put_object(Bucket=VBUCKET, Key=key, Body=b"1")["VersionId"]
        self.s3.put_object(Bucket=VBUCKET, Key=key, Body=b"2")
        marker = self.s3.delete_object(Bucket=VBUCKET, Key=key)["VersionId"]
        self.assertTrue(marker)

        for extra in ({}, {"VersionId": marker}):
            with self.subTest(put_acl=extra):
                err = self.boto_error(self.s3.put_object_acl, 405, "MethodNotAllowed",
                                      Bucket=VBUCKET, Key=key, ACL="private", **extra)
                self.assertEqual((err.get("Method"), err.get("ResourceType")),
                                 ("PUT", "DeleteMarker"), err)
        resp = self.raw.request("PUT", f"/{VBUCKET}/{key}", query=[("acl", None)],
                                headers={"x-amz-acl": "private"})
        self.error_doc(resp, 405, "MethodNotAllowed", Method="PUT", ResourceType="DeleteMarker")

        resp = self.get(f"/{VBUCKET}/{key}", [("acl", None)])
        self.error_doc(resp, 404, "NoSuchKey", Key=key)
        resp = self.get(f"/{VBUCKET}/{key}", [("acl", None), ("versionId", marker)])
        self.error_doc(resp, 405, "MethodNotAllowed", Method="GET", ResourceType="DeleteMarker")
        err = self.boto_error(self.s3.get_object_acl, 405, "MethodNotAllowed",
                              Bucket=VBUCKET, Key=key, VersionId=marker)
        self.assertEqual((err.get("Method"), err.get("ResourceType")), ("GET", "DeleteMarker"))
        resp = self.get(f"/{VBUCKET}/{key}", [("versionId", marker)])
        self.error_doc(resp, 405, "MethodNotAllowed", Method="GET", ResourceType="DeleteMarker")

        tagging = self.s3.get_object_tagging(Bucket=VBUCKET, Key=key, VersionId=v1)
        self.assertEqual(tagging["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(tagging["ResponseMetadata"]["HTTPHeaders"].get("x-amz-version-id"), v1)
        other = self.s3.put_object(Bucket=VBUCKET, Key="dm-other", Body=b"o")["VersionId"]
        resp = self.get(f"/{VBUCKET}/{key}", [("tagging", None), ("versionId", other)])
        self.error_doc(resp, 404, "NoSuchVersion", Key=key, VersionId=other)

    # --- 9. unrouted methods ---------------------------------------------------
    def test_method_not_allowed_names_method_and_resource_type(self):
        """Unrouted methods are 405 with Method and ResourceType SERVICE / BUCKET / OBJECT."""
        self.s3.put_object(Bucket=BUCKET, Key="patched", Body=b"p")
        for method, path, kind in (("POST", "/", "SERVICE"), ("PATCH", f"/{BUCKET}", "BUCKET"),
                                   ("PATCH", f"/{BUCKET}/patched", "OBJECT")):
            with self.subTest(method=method, path=path):
                resp = self.raw.request(method, path)
                self.error_doc(resp, 405, "MethodNotAllowed", Method=method, ResourceType=kind)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="patched")["Body"].read(), b"p")

    # --- 10. version ids and part numbers -----------------------------------------
    def test_version_id_arguments(self):
        """Empty and malformed version ids are InvalidArgument naming versionId."""
        self.s3.put_object(Bucket=BUCKET, Key="vid", Body=b"v")
        resp = self.get(f"/{BUCKET}/vid", [("versionId", "")])
        self.error_doc(resp, 400, "InvalidArgument", "Version id cannot be the empty string",
                       ArgumentName="versionId")
        resp = self.raw.request("DELETE", f"/{BUCKET}/vid", query=[("versionId", "bad!")])
        self.error_doc(resp, 400, "InvalidArgument", "Invalid version id specified",
                       ArgumentName="versionId", ArgumentValue="bad!")
        self.assertEqual(self.get(f"/{BUCKET}/vid", [("versionId", "null")]).status, 200)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key="vid")["Body"].read(), b"v")

    def test_part_number_arguments(self):
        """partNumber outside 1..10000 or not a number is InvalidArgument naming it."""
        upload = self.new_upload(BUCKET, "parts")
        path = f"/{BUCKET}/parts"
        for number in ("0", "10001", "x"):
            with self.subTest(part_number=number):
                resp = self.raw.request("PUT", path, query=[("partNumber", number),
                                                            ("uploadId", upload)], body=b"p")
                self.error_doc(resp, 400, "InvalidArgument",
                               "Part number must be an integer between 1 and 10000, inclusive",
                               ArgumentName="partNumber", ArgumentValue=number)
        for number in ("1", "10000"):
            resp = self.raw.request("PUT", path, query=[("partNumber", number),
                                                        ("uploadId", upload)], body=b"p")
            self.assertEqual(resp.status, 200, resp)
        parts = self.s3.list_parts(Bucket=BUCKET, Key="parts", UploadId=upload)["Parts"]
        self.assertEqual([p["PartNumber"] for p in parts], [1, 10000])

    # --- 11. multipart errors ----------------------------------------------------
    def test_multipart_errors_name_upload_part_and_sizes(self):
        """NoSuchUpload, InvalidPart and EntityTooSmall carry S3's elements."""
        key = "mpu-errors"
        path = f"/{BUCKET}/{key}"
        gone = self.s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
        self.s3.abort_multipart_upload(Bucket=BUCKET, Key=key, UploadId=gone)
        for method, body in (("DELETE", b""), ("GET", b""),
                             ("POST", complete_xml([(1, '"00000000000000000000000000000000"')]))):
            with self.subTest(method=method):
                resp = self.raw.request(method, path, query=[("uploadId", gone)], body=body)
                self.error_doc(resp, 404, "NoSuchUpload", UploadId=gone)

        big, small = b"b" * MIN_PART, b"s" * 100
        upload, e1, e2 = self.two_part_upload(key, big, small)
        wrong = "0123456789abcdef0123456789abcdef"
        resp = self.raw.request("POST", path, query=[("uploadId", upload)],
                                body=complete_xml([(1, f'"{wrong}"'), (2, e2)]))
        self.error_doc(resp, 400, "InvalidPart", UploadId=upload, PartNumber="1", ETag=wrong)
        done = self.s3.complete_multipart_upload(
            Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={"Parts": [
                {"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        self.assertEqual(done["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read(), big + small)

        tiny = b"t" * 100
        upload, t1, t2 = self.two_part_upload(key, tiny, big)
        resp = self.raw.request("POST", path, query=[("uploadId", upload)],
                                body=complete_xml([(1, t1), (2, t2)]))
        self.error_doc(resp, 400, "EntityTooSmall",
                       "Your proposed upload is smaller than the minimum allowed size",
                       ProposedSize=str(len(tiny)), MinSizeAllowed=str(MIN_PART),
                       PartNumber="1", ETag=t1.strip('"'))
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read(), big + small)

    def test_invalid_part_order_names_the_upload(self):
        """Parts listed out of order (2, then 1) are InvalidPartOrder naming the UploadId."""
        key = "mpu-order"
        upload, e1, e2 = self.two_part_upload(key, b"b" * MIN_PART, b"s" * 100)
        resp = self.raw.request("POST", f"/{BUCKET}/{key}", query=[("uploadId", upload)],
                                body=complete_xml([(2, e2), (1, e1)]))
        self.error_doc(resp, 400, "InvalidPartOrder",
                       "The list of parts was not in ascending order. Parts must be ordered by "
                       "part number.", UploadId=upload)

    def test_part_checksum_not_kept_without_an_algorithm(self):
        """Without ChecksumAlgorithm a part's CRC32 is not kept; listing it fails the completion."""
        key = "no-algorithm"
        data = b"part data without an algorithm"
        upload = self.new_upload(BUCKET, key)
        sent_headers = []
        self.s3.meta.events.register("before-send.s3.UploadPart",
                                     lambda request, **_: sent_headers.append(request.headers))
        sent = self.s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=1,
                                   Body=data)
        crc = h.crc32_b64(data)
        # boto3's default: the part goes with its CRC32 (a header or a trailer).
        self.assertEqual(len(sent_headers), 1)
        sent_with = {k.lower(): (v.decode() if isinstance(v, bytes) else v)
                     for k, v in sent_headers[0].items()}
        self.assertTrue(sent_with.get("x-amz-checksum-crc32") == crc or
                        sent_with.get("x-amz-trailer") == "x-amz-checksum-crc32", sent_with)
        listed = self.s3.list_parts(Bucket=BUCKET, Key=key, UploadId=upload)["Parts"]
        self.assertEqual(len(listed), 1, listed)
        self.assertNotIn("ChecksumCRC32", listed[0], listed)
        err = self.boto_error(self.s3.complete_multipart_upload, 400, "InvalidPart",
                              Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={
                                  "Parts": [{"PartNumber": 1, "ETag": sent["ETag"],
                                             "ChecksumCRC32": crc}]})
        self.assertEqual((err.get("PartNumber"), err.get("UploadId")), ("1", upload), err)
        self.s3.complete_multipart_upload(
            Bucket=BUCKET, Key=key, UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": sent["ETag"]}]})
        self.assertEqual(self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read(), data)

    # --- 12. conditional CompleteMultipartUpload --------------------------------
    def _upload_one_part(self, key, data):
        upload = self.new_upload(BUCKET, key)
        etag = self.s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=1,
                                   Body=data)["ETag"]
        return upload, {"Parts": [{"PartNumber": 1, "ETag": etag}]}

    def _read(self, key):
        return self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def test_conditional_complete_multipart_upload(self):
        """Conditional completions: 412 on a failed condition, 409 after a conflicting write."""
        key = "cond"
        conflict = ("The conditional request cannot succeed due to a conflicting operation "
                    "against this resource.")
        # a. If-None-Match: * against an existing key, then after it is deleted.
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"test", IfNoneMatch="*")
        upload, parts = self._upload_one_part(key, b"test")
        err = self.boto_error(self.s3.complete_multipart_upload, 412, "PreconditionFailed",
                              Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload=parts,
                              IfNoneMatch="*")
        self.assertEqual(err.get("Condition"), "If-None-Match", err)
        r = self.s3.delete_object(Bucket=BUCKET, Key=key)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        err = self.boto_error(self.s3.complete_multipart_upload, 409,
                              "ConditionalRequestConflict", conflict, Bucket=BUCKET, Key=key,
                              UploadId=upload, MultipartUpload=parts, IfNoneMatch="*")
        self.assertEqual((err.get("Condition"), err.get("Key")), ("If-None-Match", key), err)
        upload, parts = self._upload_one_part(key, b"a-new")
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload=parts, IfNoneMatch="*")
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self._read(key), b"a-new")

        # b. If-Match after the object was overwritten (same ETag) since creation.
        etag1 = self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"test")["ETag"]
        upload, parts = self._upload_one_part(key, b"b-old")
        self.assertEqual(self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"test")["ETag"], etag1)
        err = self.boto_error(self.s3.complete_multipart_upload, 409,
                              "ConditionalRequestConflict", conflict, Bucket=BUCKET, Key=key,
                              UploadId=upload, MultipartUpload=parts, IfMatch=etag1)
        self.assertEqual((err.get("Condition"), err.get("Key")), ("If-Match", key), err)
        self.assertEqual(self._read(key), b"test")
        upload, parts = self._upload_one_part(key, b"b-new")
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload=parts, IfMatch=etag1)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self._read(key), b"b-new")

        # c. No condition: no conflict check.
        upload, parts = self._upload_one_part(key, b"c-mpu")
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"c-put")
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload=parts)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self._read(key), b"c-mpu")

        # d. If-Match chains: a put, a multipart over it, a multipart over that.
        etag = self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"d-put")["ETag"]
        upload, parts = self._upload_one_part(key, b"d-mpu1")
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload=parts, IfMatch=etag)
        mpu_etag = r["ETag"]
        self.assertTrue(mpu_etag.endswith('-1"'), r)
        upload, parts = self._upload_one_part(key, b"d-mpu2")
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload,
                                              MultipartUpload=parts, IfMatch=mpu_etag)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self._read(key), b"d-mpu2")

    # --- 13. conditional header forms and PreconditionFailed ----------------------
    def test_conditional_write_forms_not_implemented(self):
        """If-None-Match other than *, If-Match: * and both headers are 501 naming the Header."""
        self.s3.put_object(Bucket=BUCKET, Key="cond-src", Body=b"s")
        not_this = "We don't accept the provided value of {} header for this API"
        cases = (
            ({"If-None-Match": '"abc"'}, "If-None-Match", not_this.format("If-None-Match")),
            ({"If-Match": "*"}, "If-Match", not_this.format("If-Match")),
            ({"If-Match": '"abc"', "If-None-Match": "*"}, "If-Match,If-None-Match",
             "Multiple conditional request headers present in the request"),
        )
        for headers, header, why in cases:
            with self.subTest(put=headers):
                resp = self.raw.request("PUT", f"/{BUCKET}/cond-forms", body=b"c",
                                        headers=headers)
                self.error_doc(resp, 501, "NotImplemented", Header=header,
                               additionalMessage=why)
        resp = self.raw.request("PUT", f"/{BUCKET}/cond-forms-copy", headers={
            "x-amz-copy-source": f"/{BUCKET}/cond-src", "If-None-Match": '"x"'})
        self.error_doc(resp, 501, "NotImplemented", Header="If-None-Match",
                       additionalMessage=not_this.format("If-None-Match"))
        for key in ("cond-forms", "cond-forms-copy"):
            self.assertEqual(self.raw.head_status(BUCKET, key), 404, key)
        # The forms S3 has are accepted.
        resp = self.raw.request("PUT", f"/{BUCKET}/cond-forms", body=b"c",
                                headers={"If-None-Match": "*"})
        self.assertEqual(resp.status, 200, resp)

    def test_precondition_failed_names_the_condition(self):
        """Every 412 names the failed condition header."""
        src = self.s3.put_object(Bucket=BUCKET, Key="pre", Body=b"pre")["ETag"]
        wrong = '"0123456789abcdef0123456789abcdef"'
        resp = self.get(f"/{BUCKET}/pre", headers={"If-Match": wrong})
        self.error_doc(resp, 412, "PreconditionFailed", Condition="If-Match")
        ten_years_ago = http_date(-10 * 365 * 86400)
        resp = self.get(f"/{BUCKET}/pre", headers={"If-Unmodified-Since": ten_years_ago})
        self.error_doc(resp, 412, "PreconditionFailed", Condition="If-Unmodified-Since")
        self.assertEqual(self.get(f"/{BUCKET}/pre", headers={"If-Match": src}).status, 200)
        resp = self.raw.request("PUT", f"/{BUCKET}/pre", body=b"new",
                                headers={"If-None-Match": "*"})
        self.error_doc(resp, 412, "PreconditionFailed", Condition="If-None-Match")
        source = f"/{BUCKET}/pre"
        for header, value in (("x-amz-copy-source-if-match", wrong),
                              ("x-amz-copy-source-if-none-match", src)):
            with self.subTest(copy=header):
                resp = self.raw.request("PUT", f"/{BUCKET}/pre-copy",
                                        headers={"x-amz-copy-source": source, header: value})
                condition = header.replace("if-match", "If-Match").replace(
                    "if-none-match", "If-None-Match")
                self.error_doc(resp, 412, "PreconditionFailed", Condition=condition)
        self.assertEqual(self.raw.head_status(BUCKET, "pre-copy"), 404)
        resp = self.raw.request("DELETE", f"/{BUCKET}/pre", headers={"If-Match": wrong})
        self.error_doc(resp, 412, "PreconditionFailed", Condition="If-Match")
        self.assertEqual(self._read("pre"), b"pre")

    # --- 14. delete size and time conditions -------------------------------------
    def test_delete_size_and_time_conditions_name_the_condition(self):
        """A failed x-amz-if-match-size / -last-modified-time is 412 naming the Condition."""
        self.s3.put_object(Bucket=BUCKET, Key="keep", Body=b"0123456789")
        for header, value in (("x-amz-if-match-size", "9"),
                              ("x-amz-if-match-last-modified-time", http_date(-86400))):
            with self.subTest(header=header):
                resp = self.raw.request("DELETE", f"/{BUCKET}/keep", headers={header: value})
                self.error_doc(resp, 412, "PreconditionFailed", Condition=header)
                self.assertEqual(self.raw.head_status(BUCKET, "keep"), 200)

    # --- 15. copy arguments --------------------------------------------------------
    def test_copy_source_range_and_directive_arguments(self):
        """Bad copy ranges, copy sources and metadata directives name the argument."""
        self.s3.put_object(Bucket=BUCKET, Key="src10", Body=b"0123456789")
        upload = self.new_upload(BUCKET, "range-dst")
        path = f"/{BUCKET}/range-dst"
        query = [("partNumber", "1"), ("uploadId", upload)]
        source = {"x-amz-copy-source": f"/{BUCKET}/src10"}

        def copy_part(rng):
            return self.raw.request("PUT", path, query=query,
                                    headers={**source, "x-amz-copy-source-range": rng})
        self.error_doc(copy_part("0-8"), 400, "InvalidArgument",
                       ArgumentName="x-amz-copy-source-range", ArgumentValue="0-8")
        self.error_doc(copy_part("bytes=0-100"), 400, "InvalidArgument",
                       "Range specified is not valid for source object of size: 10",
                       ArgumentName="x-amz-copy-source-range", ArgumentValue="bytes=0-100")
        self.error_doc(copy_part("bytes=100-200"), 400, "InvalidRequest",
                       "The specified copy range is invalid for the source object size")
        resp = copy_part("bytes=0-8")
        self.assertEqual(resp.status, 200, resp)
        self.assertIn(b"CopyPartResult", resp.body, resp)

        resp = self.raw.request("PUT", f"/{BUCKET}/copy-dst",
                                headers={"x-amz-copy-source": "nobucketslash"})
        self.error_doc(resp, 400, "InvalidArgument", "Invalid copy source object key",
                       ArgumentName="x-amz-copy-source")
        resp = self.raw.request("PUT", f"/{BUCKET}/copy-dst", headers={
            **source, "x-amz-metadata-directive": "BOGUS"})
        self.error_doc(resp, 400, "InvalidArgument", ArgumentName="x-amz-metadata-directive",
                       ArgumentValue="BOGUS")
        self.assertEqual(self.raw.head_status(BUCKET, "copy-dst"), 404)
        resp = self.raw.request("PUT", f"/{BUCKET}/copy-dst", headers={
            **source, "x-amz-metadata-directive": "REPLACE"})
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(self._read("copy-dst"), b"0123456789")

    # --- 16. BucketNotEmpty -----------------------------------------------------------
    def test_bucket_not_empty_messages(self):
        """BucketNotEmpty: a versioned bucket's message says to delete all versions."""
        versioned, plain = "details-del-versioned", "details-del-plain"
        self.s3.create_bucket(Bucket=versioned)
        self.s3.put_bucket_versioning(Bucket=versioned,
                                      VersioningConfiguration={"Status": "Enabled"})
        v1 = self.s3.put_object(Bucket=versioned, Key="k", Body=b"k")["VersionId"]
        marker = self.s3.delete_object(Bucket=versioned, Key="k")["VersionId"]
        self.s3.delete_object(Bucket=versioned, Key="k", VersionId=v1)
        listed = self.s3.list_object_versions(Bucket=versioned)
        self.assertNotIn("Versions", listed, listed)
        self.assertEqual([m["VersionId"] for m in listed["DeleteMarkers"]], [marker], listed)
        resp = self.raw.request("DELETE", f"/{versioned}")
        self.error_doc(resp, 409, "BucketNotEmpty",
                       "The bucket you tried to delete is not empty. You must delete all "
                       "versions in the bucket.", BucketName=versioned)
        self.s3.delete_object(Bucket=versioned, Key="k", VersionId=marker)
        self.assertEqual(self.raw.request("DELETE", f"/{versioned}").status, 204)

        self.s3.create_bucket(Bucket=plain)
        self.s3.put_object(Bucket=plain, Key="k", Body=b"k")
        resp = self.raw.request("DELETE", f"/{plain}")
        self.error_doc(resp, 409, "BucketNotEmpty", "The bucket you tried to delete is not empty",
                       BucketName=plain)
        self.s3.delete_object(Bucket=plain, Key="k")
        self.assertEqual(self.raw.request("DELETE", f"/{plain}").status, 204)


if __name__ == "__main__":
    unittest.main(verbosity=2)
