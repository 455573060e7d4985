#!/usr/bin/env python3
"""`tessera s3 client-config`: S3 clients run with exactly what it prints.

Goal: prove that each printed configuration works as is, over HTTP and
HTTPS, with nothing taken from the environment (no AWS_*, CA bundle or
proxy variable; HOME in the temp dir; h.S3Cluster.plain_env):
  1. s3cmd -c FILE and rclone --config FILE, FILE holding exactly the
     printed text, make a bucket, put, list and get an object (rclone over
     HTTPS trusts the CA through the SSL_CERT_FILE the text names);
  2. the aws CLI with AWS_CONFIG_FILE=FILE and the printed profile;
  3. the boto3 snippet, run as printed followed by calls on its client;
  4. --user NAME prints that user's keys (its bucket is owned by NAME);
     an unknown user is refused by name.
One cluster for the whole file.
"""

import os
import re
import subprocess
import sys
import unittest

import s3_harness as h

CLUSTER = None


def setUpModule():
    global CLUSTER
    h.require_binary()
    CLUSTER = h.S3Cluster("client-config")
    unittest.addModuleCleanup(CLUSTER.down)
    CLUSTER.up()


class ClientConfigTest(h.ClusterTestCase):
    def printed(self, client, *flags, name=None):
        """The config `client-config CLIENT FLAGS` prints, saved to a file:
        (text, path)."""
        text = self.c.cli("s3", "client-config", client, *flags).stdout
        path = os.path.join(self.tmp, name or client + ".conf")
        with open(path, "w") as f:
            f.write(text)
        return text, path

    def payload_file(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def check_s3cmd(self, https):
        text, path = self.printed("s3cmd", *(["--https"] if https else []))
        self.assertIn("use_https = True" if https else "use_https = False", text)
        if https:
            self.assertIn(f"ca_certs_file = {self.c.ca_bundle}\n", text)
        bucket = f"cc-s3cmd-{'https' if https else 'http'}"
        data = b"s3cmd with the printed config\n" * 100
        src = self.payload_file("src.bin", data)
        dst = os.path.join(self.tmp, "dst.bin")
        env = self.c.plain_env()
        s3cmd = lambda *args: self.c.run(["s3cmd", "-c", path, *args], env=env)
        s3cmd("mb", f"s3://{bucket}")
        s3cmd("put", src, f"s3://{bucket}/dir/object.bin")
        _, out, _ = s3cmd("ls", f"s3://{bucket}/dir/")
        self.assertIn(f"s3://{bucket}/dir/object.bin", out)
        s3cmd("get", f"s3://{bucket}/dir/object.bin", dst)
        with open(dst, "rb") as f:
            self.assertEqual(f.read(), data)

    def test_s3cmd_http(self):
        self.check_s3cmd(https=False)

    def test_s3cmd_https(self):
        self.check_s3cmd(https=True)

    def check_rclone(self, https):
        text, path = self.printed("rclone", *(["--https"] if https else []))
        remote = re.search(r"^\[([^\]]+)\]$", text, re.M).group(1)
        env = self.c.plain_env()
        if https:
            # rclone takes the CA only from the variable the text names.
            ca = re.search(r"SSL_CERT_FILE=(\S+)", text).group(1)
            self.assertEqual(ca, self.c.ca_bundle)
            env["SSL_CERT_FILE"] = ca
        else:
            self.assertNotIn("SSL_CERT_FILE", text)
        bucket = f"cc-rclone-{'https' if https else 'http'}"
        data = b"rclone with the printed remote\n" * 100
        src = self.payload_file("src.bin", data)
        rclone = lambda *args: self.c.run(["rclone", "--config", path, "--retries", "1",
                                           "--low-level-retries", "3", *args], env=env)
        rclone("mkdir", f"{remote}:{bucket}")
        rclone("copyto", src, f"{remote}:{bucket}/dir/object.bin")
        _, out, _ = rclone("lsf", "-R", f"{remote}:{bucket}")
        self.assertIn("dir/object.bin", out.split("\n"))
        p = subprocess.run(["rclone", "--config", path, "cat", f"{remote}:{bucket}/dir/object.bin"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, data)

    def test_rclone_http(self):
        self.check_rclone(https=False)

    def test_rclone_https(self):
        self.check_rclone(https=True)

    def check_aws(self, https):
        text, path = self.printed("aws", *(["--https"] if https else []))
        profile = re.search(r"^\[profile ([^\]]+)\]$", text, re.M).group(1)
        env = self.c.plain_env()
        env.update({"AWS_CONFIG_FILE": path, "AWS_SHARED_CREDENTIALS_FILE": os.devnull})
        bucket = f"cc-aws-{'https' if https else 'http'}"
        src = self.payload_file("src.bin", b"aws with the printed profile\n")
        aws = lambda *args: self.c.run(["aws", "--profile", profile, *args], env=env)
        aws("s3", "mb", f"s3://{bucket}")
        aws("s3", "cp", src, f"s3://{bucket}/object.bin")
        _, out, _ = aws("s3api", "list-objects-v2", "--bucket", bucket)
        self.assertIn('"Key": "object.bin"', out)

    def test_aws_http(self):
        self.check_aws(https=False)

    def test_aws_https(self):
        self.check_aws(https=True)

    def check_boto3(self, https):
        text, _ = self.printed("boto3", *(["--https"] if https else []))
        bucket = f"cc-boto3-{'https' if https else 'http'}"
        script = text + (f"\ns3.create_bucket(Bucket={bucket!r})\n"
                         f"s3.put_object(Bucket={bucket!r}, Key='k', Body=b'boto3 snippet')\n"
                         f"print(s3.get_object(Bucket={bucket!r}, Key='k')['Body'].read().decode())\n")
        p = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=self.c.plain_env(), timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "boto3 snippet\n")

    def test_boto3_http(self):
        self.check_boto3(https=False)

    def test_boto3_https(self):
        self.check_boto3(https=True)

    def test_user_keys_are_that_users(self):
        access_key, secret_key = self.c.create_user("carol")
        text, path = self.printed("s3cmd", "--user", "carol")
        self.assertIn(f"access_key = {access_key}\n", text)
        self.assertIn(f"secret_key = {secret_key}\n", text)
        self.c.run(["s3cmd", "-c", path, "mb", "s3://cc-carol"], env=self.c.plain_env())
        self.assertRegex(self.c.cli("s3", "buckets").stdout, r"(?m)^cc-carol id=\d+ owner=carol ")
        unknown = self.c.cli("s3", "client-config", "aws", "--user", "nobody", check=False)
        self.assertEqual(unknown.returncode, 3)
        self.assertIn("no S3 user nobody", unknown.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
