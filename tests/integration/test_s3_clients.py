#!/usr/bin/env python3
"""S3 integration tests with real clients: aws CLI, boto3, curl, s3cmd, rclone.

Goal: prove that the clients users run against S3 work unchanged against a
whole local Tessera cluster (6 nodes in 3 AZs, 3 meta replicas, 1 router),
over HTTP (signed payload + x-amz-checksum-crc32 header) and HTTPS
(STREAMING-UNSIGNED-PAYLOAD-TRAILER bodies), with default checksum settings:
  1. boto3 and the aws CLI put/get/head/delete 0 B, 1 B, 15 KiB, 1 MiB and
     7 MiB objects byte-identically; stored checksums come back when asked,
     never on a 206;
  2. keys with spaces, '+', '%', '//', unicode round-trip through PUT, LIST
     (encoding-type=url) and GET;
  3. `aws s3 sync` of 1,000 small files up and back is byte-identical, a
     second sync uploads nothing; `aws s3 ls --recursive`, `aws s3 rm
     --recursive`;
  4. list_objects_v2 / list_objects paginators with small pages return
     exactly the one-page listing;
  5. presigned GET and PUT, SigV4 and SigV2, work with curl;
  6. s3cmd (put, get, ls, info, del --recursive) and rclone (copy, sync,
     check, delete) work.
Objects stay at most 7 MiB and every client is forced to single-part
uploads (multipart is part 2). One cluster for the whole file.
"""

import hashlib
import os
import random
import re
import shutil
import sys
import tempfile
import time
import unittest

import s3_harness as h

CLUSTER = None
SIZES = {"0B": 0, "1B": 1, "15KiB": 15 << 10, "1MiB": 1 << 20, "7MiB": 7 << 20}
SPECIAL_KEYS = [
    "with space/and more spaces.txt",
    "plus+sign+",
    "percent%20literal%",
    "double//slash//",
    "/leading-slash",
    "unicode/ünïcødé/ключ/鍵/😀",
    "tricky chars !$&'()*,;=:@[]~",
    "query?like#fragment",
]


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("s3-clients")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


def payload(n, seed):
    return random.Random(seed).randbytes(n)


def tree(root):
    """{relative path: bytes} of every file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for name in files:
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def write_tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


class ClientTestCase(h.ClusterTestCase):
    def ls_recursive(self, url, https=False):
        """`aws s3 ls --recursive` -> {key: size}."""
        _, out, _ = self.c.aws("s3", "ls", "--recursive", url, https=https)
        listing = {}
        for line in out.splitlines():
            m = re.match(r"^\S+ \S+\s+(\d+) (.*)$", line)
            self.assertIsNotNone(m, line)
            listing[m.group(2)] = int(m.group(1))
        return listing


class Boto3Test(ClientTestCase):
    def check_sizes(self, https):
        import botocore.exceptions
        s3 = self.c.boto3_client(https=https)
        bucket = f"boto-sizes-{'https' if https else 'http'}"
        s3.create_bucket(Bucket=bucket)
        for name, n in SIZES.items():
            with self.subTest(size=name, https=https):
                data = payload(n, name)
                key = f"sizes/{name}"
                put = s3.put_object(Bucket=bucket, Key=key, Body=data)
                md5 = hashlib.md5(data).hexdigest()
                self.assertEqual(put["ETag"], f'"{md5}"')
                head = s3.head_object(Bucket=bucket, Key=key)
                self.assertEqual((head["ContentLength"], head["ETag"]), (n, f'"{md5}"'))
                got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
                self.assertEqual(got["Body"].read(), data)
                # Default checksum settings send CRC32 (header over HTTP,
                # trailer over HTTPS): stored and returned when asked.
                self.assertEqual(got.get("ChecksumCRC32"), h.crc32_b64(data), got["ResponseMetadata"])
                if n:
                    part = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={n // 2}-",
                                         ChecksumMode="ENABLED")
                    self.assertEqual(part["ResponseMetadata"]["HTTPStatusCode"], 206)
                    self.assertEqual(part["Body"].read(), data[n // 2:])
                    self.assertNotIn("ChecksumCRC32", part, "whole-object checksum on a 206")
                    suffix = s3.get_object(Bucket=bucket, Key=key, Range="bytes=-1")
                    self.assertEqual(suffix["Body"].read(), data[-1:])
                s3.delete_object(Bucket=bucket, Key=key)
                with self.assertRaises(botocore.exceptions.ClientError) as e:
                    s3.head_object(Bucket=bucket, Key=key)
                self.assertEqual(e.exception.response["Error"]["Code"], "404")
        # The transfer manager, forced to one part.
        from boto3.s3.transfer import TransferConfig
        import io
        data = payload(SIZES["7MiB"], "transfer")
        s3.upload_fileobj(io.BytesIO(data), bucket, "transfer/7MiB",
                          Config=TransferConfig(multipart_threshold=64 << 20))
        out = io.BytesIO()
        s3.download_fileobj(bucket, "transfer/7MiB", out,
                            Config=TransferConfig(multipart_threshold=64 << 20))
        self.assertEqual(out.getvalue(), data)
        s3.delete_object(Bucket=bucket, Key="transfer/7MiB")
        self.assertEqual(s3.list_objects_v2(Bucket=bucket)["KeyCount"], 0)
        s3.delete_bucket(Bucket=bucket)

    def test_object_sizes_http(self):
        self.check_sizes(https=False)

    def test_object_sizes_https(self):
        self.check_sizes(https=True)

    def check_special_keys(self, https):
        s3 = self.c.boto3_client(https=https)
        bucket = f"boto-keys-{'https' if https else 'http'}"
        s3.create_bucket(Bucket=bucket)
        for key in SPECIAL_KEYS:
            with self.subTest(key=key):
                s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
                self.assertEqual(s3.get_object(Bucket=bucket, Key=key)["Body"].read(), key.encode())
                self.assertEqual(s3.head_object(Bucket=bucket, Key=key)["ContentLength"],
                                 len(key.encode()))
        listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
        self.assertEqual(listed, sorted(SPECIAL_KEYS, key=lambda k: k.encode()))
        listed_v1 = [o["Key"] for o in s3.list_objects(Bucket=bucket)["Contents"]]
        self.assertEqual(listed_v1, listed)
        # The '//' key is not the same as the one with a single slash.
        self.assertNotIn("double/slash/", listed)
        for key in SPECIAL_KEYS:
            s3.delete_object(Bucket=bucket, Key=key)
        self.assertEqual(s3.list_objects_v2(Bucket=bucket)["KeyCount"], 0)
        s3.delete_bucket(Bucket=bucket)

    def test_special_keys_http(self):
        self.check_special_keys(https=False)

    def test_special_keys_https(self):
        self.check_special_keys(https=True)

    def test_bucket_level_operations(self):
        import botocore.exceptions
        s3 = self.c.boto3_client()
        s3.create_bucket(Bucket="boto-bucket-ops")
        head = s3.head_bucket(Bucket="boto-bucket-ops")
        self.assertEqual(head["ResponseMetadata"]["HTTPHeaders"].get("x-amz-bucket-region"),
                         h.REGION)
        self.assertIn("boto-bucket-ops", [b["Name"] for b in s3.list_buckets()["Buckets"]])
        self.assertIsNone(s3.get_bucket_location(Bucket="boto-bucket-ops")["LocationConstraint"])
        self.assertNotIn("Status", s3.get_bucket_versioning(Bucket="boto-bucket-ops"))
        self.assertEqual(len(s3.get_bucket_acl(Bucket="boto-bucket-ops")["Grants"]), 1)
        for call, code in ((s3.get_bucket_policy, "NoSuchBucketPolicy"),
                           (s3.get_bucket_cors, "NoSuchCORSConfiguration"),
                           (s3.get_bucket_tagging, "NoSuchTagSet"),
                           (s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration")):
            with self.assertRaises(botocore.exceptions.ClientError) as e:
                call(Bucket="boto-bucket-ops")
            self.assertEqual(e.exception.response["Error"]["Code"], code)
        # rclone and others re-create buckets they own: 200 in us-east-1
        # (AWS's legacy answer; BucketAlreadyOwnedByYou in other regions).
        s3.create_bucket(Bucket="boto-bucket-ops")
        s3.delete_bucket(Bucket="boto-bucket-ops")
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            s3.head_bucket(Bucket="boto-bucket-ops")
        self.assertEqual(e.exception.response["Error"]["Code"], "404")

    def test_metadata_round_trip_https(self):
        s3 = self.c.boto3_client(https=True)
        s3.create_bucket(Bucket="boto-meta")
        s3.put_object(Bucket="boto-meta", Key="m", Body=b"{}", ContentType="application/json",
                      ContentEncoding="identity", ContentDisposition='attachment; filename="m.json"',
                      CacheControl="max-age=60", Metadata={"color": "blue", "n": "1"})
        head = s3.head_object(Bucket="boto-meta", Key="m")
        self.assertEqual(head["ContentType"], "application/json")
        # aws-chunked (the transfer coding of the HTTPS upload) is not stored.
        self.assertEqual(head.get("ContentEncoding"), "identity")
        self.assertEqual(head["ContentDisposition"], 'attachment; filename="m.json"')
        self.assertEqual(head["CacheControl"], "max-age=60")
        self.assertEqual(head["Metadata"], {"color": "blue", "n": "1"})
        got = s3.get_object(Bucket="boto-meta", Key="m", ResponseContentType="text/plain")
        self.assertEqual(got["ContentType"], "text/plain")
        s3.delete_object(Bucket="boto-meta", Key="m")
        s3.delete_bucket(Bucket="boto-meta")

    def test_paginators_with_small_pages(self):
        s3 = self.c.boto3_client()
        bucket = "boto-pages"
        s3.create_bucket(Bucket=bucket)
        keys = sorted({f"p{i % 3}/d{i % 5}/k{i:03d}" for i in range(150)} | {"top-a", "top-b"})
        for key in keys:
            s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
        one_page = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
        self.assertEqual(one_page, keys)

        def walk(method, page_size, **kw):
            pages = list(s3.get_paginator(method).paginate(
                Bucket=bucket, PaginationConfig={"PageSize": page_size}, **kw))
            got = [o["Key"] for p in pages for o in p.get("Contents", [])]
            prefixes = [c["Prefix"] for p in pages for c in p.get("CommonPrefixes", [])]
            for p in pages:
                self.assertLessEqual(len(p.get("Contents", [])) + len(p.get("CommonPrefixes", [])),
                                     page_size)
            return got, prefixes, len(pages)

        got, _, pages = walk("list_objects_v2", 7)
        self.assertEqual(got, keys)
        self.assertEqual(pages, -(-len(keys) // 7))
        got, _, _ = walk("list_objects", 10)
        self.assertEqual(got, keys)
        got, _, _ = walk("list_objects_v2", 4, Prefix="p1/")
        self.assertEqual(got, [k for k in keys if k.startswith("p1/")])
        got, prefixes, _ = walk("list_objects_v2", 2, Delimiter="/")
        self.assertEqual(got, ["top-a", "top-b"])
        self.assertEqual(prefixes, ["p0/", "p1/", "p2/"])
        got, prefixes, _ = walk("list_objects", 3, Prefix="p2/", Delimiter="/")
        self.assertEqual((got, prefixes), ([], [f"p2/d{i}/" for i in range(5)]))
        got, _, _ = walk("list_objects_v2", 9, StartAfter="p1/d4/k149")
        self.assertEqual(got, [k for k in keys if k > "p1/d4/k149"])
        for key in keys:  # one by one: batch delete comes with part 2
            s3.delete_object(Bucket=bucket, Key=key)
        s3.delete_bucket(Bucket=bucket)

    # BUG (src/http stream server, Expect handling): botocore adds
    # `Expect: 100-continue` to every PutObject with a file body, even an
    # empty one. For Content-Length: 0 the router answers 200 without a
    # 100 Continue and keeps the connection open; botocore then keeps the
    # stale status line for the next Expect request on that pooled
    # connection (boto/botocore#3755), misparses its response and waits
    # for its read timeout (60 s in the aws CLI) before retrying. S3 (and
    # Ceph RGW since ceph/ceph#50714) do not trigger it: answer an Expect
    # request with 100 Continue even for an empty body, or close the
    # connection after a final answer given without one (the router
    # already closes after refusing an Expect request, which is why error
    # answers do not trigger it).
    def test_empty_put_keeps_the_connection_usable(self):
        import io
        s3 = self.c.boto3_client(retries=1, read_timeout=5)
        s3.create_bucket(Bucket="expect-empty")

        def cleanup():
            for key in ("e", "f"):
                s3.delete_object(Bucket="expect-empty", Key=key)
            s3.delete_bucket(Bucket="expect-empty")
        self.addCleanup(cleanup)

        class File(io.BytesIO):  # a file-like body: botocore adds Expect
            pass
        s3.put_object(Bucket="expect-empty", Key="e", Body=File(b""))
        started = time.monotonic()
        s3.put_object(Bucket="expect-empty", Key="f", Body=File(b"x"))  # stalls 5 s today
        self.assertLess(time.monotonic() - started, 2)

    def test_listing_across_partitions(self):
        # The issue asks for a bucket spanning 8+ partitions: that needs its
        # own cluster (`cluster up --s3-split`), in test_s3_partitions.py.
        self.skipTest("covered by test_s3_partitions.py (a cluster with --s3-split)")

    def test_presigned_urls_with_curl(self):
        creator = self.c.boto3_client()
        creator.create_bucket(Bucket="presigned")
        for signature, https in (("s3v4", False), ("s3v4", True), ("s3", False), ("s3", True)):
            with self.subTest(signature=signature, https=https):
                s3 = self.c.boto3_client(https=https, signature=signature)
                key = f"pre signed/{signature}-{https}-ü+%.bin"
                data = payload(1 << 20 | 123, key)  # > 1 MiB: curl sends Expect: 100-continue
                src = os.path.join(self.tmp, f"up-{signature}-{https}")
                with open(src, "wb") as f:
                    f.write(data)
                put_url = s3.generate_presigned_url(
                    "put_object", Params={"Bucket": "presigned", "Key": key}, ExpiresIn=300)
                self.assertIn("Signature=" if signature == "s3" else "X-Amz-Signature=", put_url)
                _, out, _ = self.c.curl("-f", "-o", "/dev/null", "-w", "%{http_code}",
                                        "-H", "Expect: 100-continue", "-T", src, put_url, https=https)
                self.assertEqual(out, "200")
                get_url = s3.generate_presigned_url(
                    "get_object", Params={"Bucket": "presigned", "Key": key}, ExpiresIn=300)
                dst = src + ".back"
                self.c.curl("-f", "-o", dst, get_url, https=https)
                with open(dst, "rb") as f:
                    self.assertEqual(f.read(), data)
                # A presigned URL signs one method: PUT with a GET URL is refused.
                _, out, _ = self.c.curl("-o", "/dev/null", "-w", "%{http_code}", "-T", src, get_url,
                                        https=https, check=False)
                self.assertEqual(out, "403")
                self.assertEqual(creator.head_object(Bucket="presigned", Key=key)["ContentLength"],
                                 len(data))
                creator.delete_object(Bucket="presigned", Key=key)
        creator.delete_bucket(Bucket="presigned")

    def test_sigv2_header_auth_objects(self):
        creator = self.c.boto3_client()
        creator.create_bucket(Bucket="sigv2-objects")
        s3 = self.c.boto3_client(signature="s3")
        s3.put_object(Bucket="sigv2-objects", Key="k ü+%", Body=b"v2")
        self.assertEqual(s3.get_object(Bucket="sigv2-objects", Key="k ü+%")["Body"].read(), b"v2")
        s3.delete_object(Bucket="sigv2-objects", Key="k ü+%")
        creator.delete_bucket(Bucket="sigv2-objects")

    # botocore's SigV2 (HmacV1Auth) signs a path-style bucket request
    # `PUT /bucket` with the resource "/bucket/" (as S3 computes it).
    def test_sigv2_header_auth_bucket_operations(self):
        s3 = self.c.boto3_client(signature="s3", retries=1)
        s3.create_bucket(Bucket="sigv2-bucket")
        s3.head_bucket(Bucket="sigv2-bucket")
        s3.list_objects(Bucket="sigv2-bucket")
        s3.delete_bucket(Bucket="sigv2-bucket")


class AwsCliTest(ClientTestCase):
    def check_cp(self, https):
        c = self.c
        bucket = f"cli-cp-{'https' if https else 'http'}"
        c.aws("s3", "mb", f"s3://{bucket}", https=https)
        files = {f"{name} ü+%.bin": payload(n, "cli" + name) for name, n in SIZES.items()}
        src, dst = os.path.join(self.tmp, "src"), os.path.join(self.tmp, "dst")
        write_tree(src, files)
        # The empty file goes alone, in its own process: see
        # test_empty_put_keeps_the_connection_usable for why.
        empty = "0B ü+%.bin"
        os.rename(os.path.join(src, empty), os.path.join(self.tmp, empty))
        c.aws("s3", "cp", "--only-show-errors", os.path.join(self.tmp, empty),
              f"s3://{bucket}/up/{empty}", https=https)
        c.aws("s3", "cp", "--recursive", "--only-show-errors", src, f"s3://{bucket}/up/",
              https=https)
        self.assertEqual(self.ls_recursive(f"s3://{bucket}/", https),
                         {f"up/{k}": len(v) for k, v in files.items()})
        _, out, _ = c.aws("s3api", "head-object", "--bucket", bucket, "--key", "up/7MiB ü+%.bin",
                          https=https)
        self.assertIn('"ContentLength": 7340032', out)
        self.assertIn(hashlib.md5(files["7MiB ü+%.bin"]).hexdigest(), out)
        c.aws("s3", "cp", "--recursive", "--only-show-errors", f"s3://{bucket}/up/", dst,
              https=https)
        self.assertEqual(tree(dst), files)
        # A '//' key cannot come from a file name: copy one file to it.
        one = os.path.join(src, "1B ü+%.bin")
        c.aws("s3", "cp", "--only-show-errors", one, f"s3://{bucket}/a//b", https=https)
        back = os.path.join(self.tmp, "a-b")
        c.aws("s3", "cp", "--only-show-errors", f"s3://{bucket}/a//b", back, https=https)
        with open(back, "rb") as f:
            self.assertEqual(f.read(), files["1B ü+%.bin"])
        self.assertIn("a//b", self.ls_recursive(f"s3://{bucket}/", https))
        c.aws("s3", "rm", "--recursive", "--only-show-errors", f"s3://{bucket}/", https=https)
        self.assertEqual(self.ls_recursive(f"s3://{bucket}/", https), {})
        c.aws("s3", "rb", f"s3://{bucket}", https=https)

    def test_cp_sizes_http(self):
        self.check_cp(https=False)

    def test_cp_sizes_https(self):
        self.check_cp(https=True)

    def test_sync_1000_files_up_and_back(self):
        c = self.c
        bucket = "cli-sync"
        c.aws("s3", "mb", f"s3://{bucket}")
        rnd = random.Random(1000)
        files = {f"d{i % 10}/sub {i % 3}/f{i:04d}.bin": rnd.randbytes(rnd.randrange(0, 3000))
                 for i in range(1000)}
        src, dst = os.path.join(self.tmp, "src"), os.path.join(self.tmp, "dst")
        write_tree(src, files)
        # Up over HTTPS (aws-chunked with a CRC32 trailer), back over HTTP.
        c.aws("s3", "sync", "--only-show-errors", src, f"s3://{bucket}/tree", https=True)
        _, out, err = c.aws("s3", "sync", src, f"s3://{bucket}/tree", https=True)
        self.assertNotIn("upload:", out + err, "the second sync uploaded again")
        listing = self.ls_recursive(f"s3://{bucket}/")
        self.assertEqual(listing, {f"tree/{k}": len(v) for k, v in files.items()})
        c.aws("s3", "sync", "--only-show-errors", f"s3://{bucket}/tree", dst)
        self.assertEqual(tree(dst), files)
        c.aws("s3", "rm", "--recursive", "--only-show-errors", f"s3://{bucket}/tree/d3")
        self.assertEqual(len(self.ls_recursive(f"s3://{bucket}/")), 900)
        c.aws("s3", "rm", "--recursive", "--only-show-errors", f"s3://{bucket}/")
        self.assertEqual(self.ls_recursive(f"s3://{bucket}/"), {})
        c.aws("s3", "rb", f"s3://{bucket}")


class S3cmdTest(ClientTestCase):
    def check_s3cmd(self, https):
        c = self.c
        bucket = f"s3cmd-{'https' if https else 'http'}"
        c.s3cmd("mb", f"s3://{bucket}", https=https)
        files = {"one.bin": payload(15 << 10, "s3cmd1"), "dir/two ü.bin": payload(1 << 20, "s3cmd2"),
                 "dir/sub/three.txt": b"three\n", "dir/empty": b""}
        src = os.path.join(self.tmp, "src")
        write_tree(src, files)
        c.s3cmd("put", os.path.join(src, "one.bin"), f"s3://{bucket}/one.bin", https=https)
        c.s3cmd("put", "--recursive", os.path.join(src, "dir"), f"s3://{bucket}/", https=https)
        _, out, _ = c.s3cmd("ls", "--recursive", f"s3://{bucket}", https=https)
        listed = sorted(line.split(f"s3://{bucket}/", 1)[1] for line in out.splitlines() if "s3://" in line)
        self.assertEqual(listed, sorted(files), out)
        _, out, _ = c.s3cmd("ls", https=https)
        self.assertIn(f"s3://{bucket}", out)
        _, out, _ = c.s3cmd("info", f"s3://{bucket}", https=https)
        self.assertIn("Location:", out)
        _, out, _ = c.s3cmd("info", f"s3://{bucket}/one.bin", https=https)
        self.assertIn(hashlib.md5(files["one.bin"]).hexdigest(), out)
        dst = os.path.join(self.tmp, "dst")
        os.makedirs(dst)
        c.s3cmd("get", "--recursive", f"s3://{bucket}/", dst + "/", https=https)
        self.assertEqual(tree(dst), files)
        c.s3cmd("del", *(f"s3://{bucket}/{k}" for k in files), https=https)
        _, out, _ = c.s3cmd("ls", "--recursive", f"s3://{bucket}", https=https)
        self.assertEqual(out.strip(), "")
        c.s3cmd("rb", f"s3://{bucket}", https=https)

    def test_s3cmd_http(self):
        self.check_s3cmd(https=False)

    def test_s3cmd_https(self):
        self.check_s3cmd(https=True)

    # s3cmd 2.3 always deletes recursively with DeleteObjects (POST
    # /bucket?delete).
    def test_s3cmd_del_recursive(self):
        c = self.c
        c.s3cmd("mb", "s3://s3cmd-del")
        src = os.path.join(self.tmp, "src")
        write_tree(src, {"a/1": b"1", "a/2": b"2", "b": b"3"})
        c.s3cmd("put", "--recursive", src + "/", "s3://s3cmd-del/")
        c.s3cmd("del", "--recursive", "--force", "s3://s3cmd-del/")
        _, out, _ = c.s3cmd("ls", "--recursive", "s3://s3cmd-del")
        self.assertEqual(out.strip(), "")
        c.s3cmd("rb", "s3://s3cmd-del")


class RcloneTest(ClientTestCase):
    def check_rclone(self, https):
        c = self.c
        remote = "tss" if https else "ts"
        bucket = f"rclone-{'https' if https else 'http'}"
        rnd = random.Random(bucket)
        files = {f"r{i % 4}/file {i:03d}.bin": rnd.randbytes(rnd.randrange(0, 40 << 10))
                 for i in range(60)}
        files["big/7MiB.bin"] = payload(SIZES["7MiB"], "rclone")
        src = os.path.join(self.tmp, "src")
        write_tree(src, files)
        c.rclone("copy", src, f"{remote}:{bucket}/data", https=https)
        c.rclone("check", src, f"{remote}:{bucket}/data", https=https)
        # Change the source: one file removed, one rewritten, one added.
        os.remove(os.path.join(src, "r0/file 000.bin"))
        files.pop("r0/file 000.bin")
        files["r1/file 001.bin"] = b"rewritten"
        files["new/added.bin"] = b"added"
        write_tree(src, {k: files[k] for k in ("r1/file 001.bin", "new/added.bin")})
        c.rclone("sync", src, f"{remote}:{bucket}/data", https=https)
        c.rclone("check", "--download", src, f"{remote}:{bucket}/data", https=https)
        _, out, _ = c.rclone("lsf", "-R", "--files-only", f"{remote}:{bucket}/data", https=https)
        self.assertEqual(sorted(out.split("\n")[:-1]), sorted(files))
        c.rclone("delete", f"{remote}:{bucket}/data", https=https)
        _, out, _ = c.rclone("lsf", "-R", f"{remote}:{bucket}", https=https)
        self.assertEqual(out.strip(), "")
        c.rclone("rmdir", f"{remote}:{bucket}", https=https)

    def test_rclone_http(self):
        self.check_rclone(https=False)

    def test_rclone_https(self):
        self.check_rclone(https=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
