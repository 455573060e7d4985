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
  RESULT transfer download <MiB/s> MiB/s seconds=<s,s,...> client_sys=<s,s,...>
  RESULT transfer download_discarded <MiB/s> MiB/s seconds=<s,s,...> client_sys=<s,s,...>
  RESULT transfer roundtrip content identical | CONTENT DIFFERS

(MiB/s is all runs' bytes over their time; client_sys is this process's
kernel CPU seconds in each run) and exits non-zero when a transfer fails
or the bytes differ. The download_discarded runs fetch the same ranges the
same way but hand the bytes to a writer that keeps nothing: the client's
file writes are left out, so that line shows what the server delivers to
this client pattern. With S3_TRANSFER_NO_VERIFY=1 (a server that stores
nothing, bench/s3_sink) the content is not compared.

Each file download starts with the previous copy deleted, as
bench/s3_cli_transfer.sh does before each `aws s3 cp`. s3transfer writes
into a temporary file and renames it over the target, so with the old copy
kept until then every download needs 256 MiB of memory nobody freed
recently; on a VM whose host takes back free guest pages (Firecracker's
free page reporting) that memory faults in at about 1 ms per MiB (a
256 MiB page-cache write: 0.26-0.31 s, against 0.04 s into memory freed
seconds before), paid by the client for every server alike and hidden
only behind a slow one. Deleting the old copy first hands its pages to the
next download, as in a client that fetches the same object repeatedly.
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


def timed(transfer):
    """(wall seconds, this process's kernel CPU seconds) of one call."""
    start, before = time.monotonic(), os.times()
    transfer()
    return time.monotonic() - start, os.times().system - before.system


def report(label, size_mib, runs):
    seconds = [wall for wall, _ in runs]
    print(f"RESULT transfer {label} {size_mib * len(runs) / sum(seconds):.1f} MiB/s "
          f"seconds={','.join(f'{s:.3f}' for s in seconds)} "
          f"client_sys={','.join(f'{sys_s:.2f}' for _, sys_s in runs)}", flush=True)


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

    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(path))) as scratch:
        target = os.path.join(scratch, "down.bin")

        def to_file():
            if os.path.exists(target):
                os.unlink(target)
            client.download_file(bucket, key, target, Config=transfer)

        def to_nothing():
            client.download_fileobj(bucket, key, DiscardingWriter(), Config=transfer)

        report("download", size_mib, [timed(to_file) for _ in range(downloads)])
        report("download_discarded", size_mib, [timed(to_nothing) for _ in range(downloads)])
        if os.environ.get("S3_TRANSFER_NO_VERIFY") == "1":
            print("RESULT transfer roundtrip not checked")
            return 0
        same = sha256_of(path) == sha256_of(target)
    client.delete_object(Bucket=bucket, Key=key)
    print("RESULT transfer roundtrip " + ("content identical" if same else "CONTENT DIFFERS"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
