#!/usr/bin/env python3
"""One large object up and down through s3transfer, the engine under
`aws s3 cp`, timed around the transfers alone.

  s3_transfer.py ENDPOINT BUCKET FILE [DOWNLOADS=3]

Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; the
region is us-east-1. The transfer settings are the aws CLI's defaults
(8 MiB parts, 10 threads, multipart from 8 MiB), so the figures are the
CLI's minus its fixed cost per command (interpreter start-up and imports,
about a second on a 2-core machine), which `aws s3 cp` timings of a
256 MiB object include. The bucket must exist. Prints

  RESULT transfer upload <MiB/s> MiB/s seconds=<s>
  RESULT transfer download <MiB/s> MiB/s seconds=<s,s,...>   (all runs' bytes / their time)
  RESULT transfer download_discarded <MiB/s> MiB/s seconds=<s,s,...>
  RESULT transfer roundtrip content identical | CONTENT DIFFERS

and exits non-zero when a transfer fails or the bytes differ. The
download_discarded runs fetch the same ranges the same way but hand the
bytes to a writer that keeps nothing: the client's file writes (about 40%
of an s3transfer download's time on a 2-core VM) are left out, so that
line shows what the server delivers to this client pattern. With
S3_TRANSFER_NO_VERIFY=1 (a server that stores nothing, bench/s3_sink) the
content is not compared.
"""
import hashlib
import os
import sys
import tempfile
import time

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

MIB = 1 << 20


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(8 * MIB), b""):
            digest.update(block)
    return digest.hexdigest()


class DiscardingWriter:
    """A seekable file object that counts what it is given and keeps nothing."""

    def __init__(self):
        self.position = 0

    def write(self, data):
        self.position += len(data)
        return len(data)

    def seek(self, offset, whence=0):
        self.position = offset if whence == 0 else self.position + offset
        return self.position

    def tell(self):
        return self.position

    def seekable(self):
        return True


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    endpoint, bucket, path = sys.argv[1:4]
    downloads = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    size_mib = os.path.getsize(path) / MIB
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        config=Config(retries={"max_attempts": 3, "mode": "standard"}))
    # The aws CLI's defaults (its s3 cp; boto3's own are the same today).
    transfer = TransferConfig(multipart_threshold=8 * MIB, multipart_chunksize=8 * MIB,
                              max_concurrency=10, use_threads=True)
    key = "transfer-" + os.path.basename(path)

    start = time.monotonic()
    client.upload_file(path, bucket, key, Config=transfer)
    up_s = time.monotonic() - start
    print(f"RESULT transfer upload {size_mib / up_s:.1f} MiB/s seconds={up_s:.3f}", flush=True)

    runs = []
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(path))) as scratch:
        target = os.path.join(scratch, "down.bin")
        for _ in range(downloads):
            start = time.monotonic()
            client.download_file(bucket, key, target, Config=transfer)
            runs.append(time.monotonic() - start)
        print(f"RESULT transfer download {size_mib * len(runs) / sum(runs):.1f} MiB/s "
              f"seconds={','.join(f'{s:.3f}' for s in runs)}", flush=True)
        discarded = []
        for _ in range(downloads):
            start = time.monotonic()
            client.download_fileobj(bucket, key, DiscardingWriter(), Config=transfer)
            discarded.append(time.monotonic() - start)
        print(f"RESULT transfer download_discarded {size_mib * len(discarded) / sum(discarded):.1f} MiB/s "
              f"seconds={','.join(f'{s:.3f}' for s in discarded)}", flush=True)
        if os.environ.get("S3_TRANSFER_NO_VERIFY") == "1":
            print("RESULT transfer roundtrip not checked")
            return 0
        same = sha256_of(path) == sha256_of(target)
    client.delete_object(Bucket=bucket, Key=key)
    print("RESULT transfer roundtrip " + ("content identical" if same else "CONTENT DIFFERS"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
