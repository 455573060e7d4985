#!/usr/bin/env bash
# Multipart uploads side by side with Ceph RGW (issue 5), back to back in one
# window, the same boto3 driver on both sides:
#   1. throughput: a BIG_MB (1024) MiB object uploaded with
#      TransferConfig(multipart_chunksize=8 MiB, max_concurrency=10), TRIALS
#      times, then downloaded the same way (ETag and size checked);
#   2. CompleteMultipartUpload latency for PARTS ("100 1000 10000") parts:
#      the parts are uploaded at concurrency 10 (untimed but reported), then
#      the single Complete request is timed (ETag "-N" and size checked).
#      Parts of SMALL_PART_BYTES (32 KiB, above Tessera's 16 KiB inline
#      limit) need a lower minimum part size on both sides: Tessera gets
#      `router_settings { s3_min_part_bytes }` in a copy of its layout (or
#      `cluster up --s3-min-part-bytes`), RGW `ceph config set client.rgw.a
#      rgw_multipart_min_part_size` (runtime, through the anchor's monitor;
#      removed again at the end). A binary that takes neither: both sides use
#      5 MiB parts and only 100 parts (said in the output).
# RGW is started with the anchor's up.sh, measured, stopped; then a fresh
# Tessera cluster is started, measured, stopped.
#
#   bench/s3_multipart_vs_rgw.sh             # prints the comparison table (markdown)
#   TRIALS=1 PARTS="100 1000" SKIP_RGW=1 KEEP=1 bench/s3_multipart_vs_rgw.sh
#   STEPS=complete bench/s3_multipart_vs_rgw.sh   # only the Complete latencies
#
# A peer that cannot start is reported and skipped; Tessera's half still runs.
# Raw lines: $OUT/results.txt; logs: $OUT/*.log; the cluster's logs stay in $TDIR/logs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
OUT=${OUT:-/var/tmp/tessera-bench.multipart.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
BIG_MB=${BIG_MB:-1024}
TRIALS=${TRIALS:-2}
PARTS=${PARTS:-"100 1000 10000"}
CONC=${CONC:-10}
SMALL_PART_BYTES=${SMALL_PART_BYTES:-32768}
STEPS=${STEPS:-"throughput complete"}
TDIR=${TDIR:-/var/tmp/tessera-bench-multipart.$(date +%s)}
RGW_KEY=BENCHACCESSKEY000001
RGW_SECRET=benchsecretbenchsecretbenchsecret0000001
RGW_DIR=${RGW_DIR:-/var/tmp/rgw-anchor}
RGW_CONF=$RGW_DIR/ceph.conf
BIG_FILE=${BIG_FILE:-/var/tmp/tessera-mp-${BIG_MB}M.bin}
RESULTS=$OUT/results.txt
SUMMARY=$OUT/summary.md
DRIVER=$OUT/mp_driver.py

rgw_started=0; rgw_min_set=0; TESSERA_FAILED=0
cleanup() {
  tessera_down
  if ((rgw_min_set)); then
    ceph -c "$RGW_CONF" --connect-timeout 10 config rm client.rgw.a rgw_multipart_min_part_size \
      >> "$OUT/rgw-up.log" 2>&1; rgw_min_set=0
  fi
  if ((rgw_started)) && [[ ${RGW_KEEP:-0} != 1 ]]; then
    log "stopping RGW (rgw/down.sh)"; "$ANCHORS/rgw/down.sh" >> "$OUT/rgw-up.log" 2>&1
    rgw_started=0
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the driver (boto3), written out so both halves run the same code
cat > "$DRIVER" <<'PY'
"""mp_driver.py throughput|complete|table ... (see s3_multipart_vs_rgw.sh)."""
import argparse, concurrent.futures, hashlib, os, sys, time
MiB = 1 << 20


def client(args, conc):
    import boto3
    from botocore.config import Config
    cfg = Config(region_name="us-east-1", signature_version="s3v4",
                 s3={"addressing_style": "path"}, max_pool_connections=conc + 4,
                 retries={"max_attempts": 3, "mode": "standard"}, read_timeout=600)
    return boto3.client("s3", endpoint_url=args.endpoint, config=cfg)


def result(args, **kw):
    print("RESULT side=%s %s" % (args.side, " ".join(f"{k}={v}" for k, v in kw.items())),
          flush=True)


def multipart_etag(path, part):
    md5s = []
    with open(path, "rb") as f:
        while block := f.read(part):
            md5s.append(hashlib.md5(block).digest())
    return f'"{hashlib.md5(b"".join(md5s)).hexdigest()}-{len(md5s)}"'


def throughput(args):
    from boto3.s3.transfer import TransferConfig
    s3, size = client(args, args.conc), os.path.getsize(args.file)
    part = args.part_mb * MiB
    want = multipart_etag(args.file, part)
    cfg = TransferConfig(multipart_threshold=part, multipart_chunksize=part,
                         max_concurrency=args.conc)
    ok = True
    for trial in range(1, args.trials + 1):
        key = f"big-{trial}"
        t0 = time.monotonic()
        s3.upload_file(args.file, args.bucket, key, Config=cfg)
        up = time.monotonic() - t0
        head = s3.head_object(Bucket=args.bucket, Key=key)
        good = head["ETag"] == want and head["ContentLength"] == size
        ok &= good
        result(args, op="upload", trial=trial, mib=size // MiB, part_mib=args.part_mb,
               conc=args.conc, seconds=f"{up:.2f}", mibps=f"{size / MiB / up:.1f}",
               check="ok" if good else f"BAD(etag={head['ETag']},want={want})")
        dst = args.file + ".down"
        t0 = time.monotonic()
        s3.download_file(args.bucket, key, dst, Config=cfg)
        down = time.monotonic() - t0
        good = os.path.getsize(dst) == size
        os.unlink(dst)
        ok &= good
        result(args, op="download", trial=trial, mib=size // MiB, part_mib=args.part_mb,
               conc=args.conc, seconds=f"{down:.2f}", mibps=f"{size / MiB / down:.1f}",
               check="ok" if good else "BAD(size)")
        s3.delete_object(Bucket=args.bucket, Key=key)
    return ok


def complete(args):
    s3 = client(args, args.conc)
    body = os.urandom(args.part_bytes)
    etag = f'"{hashlib.md5(body).hexdigest()}"'
    want = f'"{hashlib.md5(hashlib.md5(body).digest() * args.parts).hexdigest()}-{args.parts}"'
    ok = True
    for trial in range(1, args.trials + 1):
        key = f"complete-{args.parts}-{trial}"
        uid = s3.create_multipart_upload(Bucket=args.bucket, Key=key)["UploadId"]
        try:
            def put(n):
                r = s3.upload_part(Bucket=args.bucket, Key=key, UploadId=uid, PartNumber=n,
                                   Body=body)
                assert r["ETag"] == etag, (n, r["ETag"], etag)
            t0 = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.conc) as pool:
                list(pool.map(put, range(1, args.parts + 1)))
            parts_s = time.monotonic() - t0
            listing = {"Parts": [{"PartNumber": n, "ETag": etag}
                                 for n in range(1, args.parts + 1)]}
            t0 = time.monotonic()
            r = s3.complete_multipart_upload(Bucket=args.bucket, Key=key, UploadId=uid,
                                             MultipartUpload=listing)
            ms = (time.monotonic() - t0) * 1000
            uid = None
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            print(f"ERROR side={args.side} op=complete parts={args.parts} trial={trial}: {e!r}",
                  flush=True)
            ok = False
            if uid:
                try:
                    s3.abort_multipart_upload(Bucket=args.bucket, Key=key, UploadId=uid)
                except Exception:  # noqa: BLE001
                    pass
            continue
        # The stored object is checked by HEAD; the Complete answer's own
        # ETag is only reported (RGW 16.2's reaches boto3 empty).
        head = s3.head_object(Bucket=args.bucket, Key=key)
        good = (head["ETag"], head["ContentLength"]) == (want, args.parts * args.part_bytes)
        ok &= good
        result(args, op="complete", trial=trial, parts=args.parts, part_bytes=args.part_bytes,
               min_part_bytes=args.min_part_bytes, complete_ms=f"{ms:.1f}",
               parts_per_s=f"{args.parts / parts_s:.0f}",
               complete_etag="ok" if r.get("ETag") == want else f"{r.get('ETag')!r}",
               check="ok" if good else
               f"BAD(etag={head['ETag']},size={head['ContentLength']},want={want})")
        s3.delete_object(Bucket=args.bucket, Key=key)
    return ok


def table(path):
    rows = {}
    notes = []
    for line in open(path):
        if line.startswith("NOTE "):
            notes.append(line[5:].strip())
        if not line.startswith("RESULT "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if f["op"] in ("upload", "download"):
            k = (f"{f['mib']} MiB {f['op']} ({f['part_mib']} MiB parts, c={f['conc']})", "MiB/s")
            v = float(f["mibps"])
        else:
            k = (f"CompleteMultipartUpload, {int(f['parts']):,} parts of "
                 f"{int(f['part_bytes']) // 1024} KiB", "ms")
            v = float(f["complete_ms"])
        rows.setdefault(k, {}).setdefault(f["side"], []).append(v)
    print("| measure | RGW (trials) | Tessera (trials) | Tessera / RGW (medians) |")
    print("|---|---|---|---|")
    import statistics
    for (name, unit), sides in rows.items():
        med = {s: statistics.median(v) for s, v in sides.items()}
        cell = lambda s: ("-" if s not in sides else
                          f"{med[s]:,.1f} {unit} ({', '.join(f'{x:,.1f}' for x in sides[s])})")
        r = (f"{med['tessera'] / med['rgw']:.2f}×" if "rgw" in med and "tessera" in med
             and med["rgw"] else "-")
        if unit == "ms" and r != "-":
            r += " (lower is better)"
        print(f"| {name} | {cell('rgw')} | {cell('tessera')} | {r} |")
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("throughput", "complete", "table"))
    p.add_argument("--endpoint"); p.add_argument("--side"); p.add_argument("--bucket")
    p.add_argument("--file"); p.add_argument("--trials", type=int, default=1)
    p.add_argument("--conc", type=int, default=10); p.add_argument("--part-mb", type=int, default=8)
    p.add_argument("--parts", type=int); p.add_argument("--part-bytes", type=int)
    p.add_argument("--min-part-bytes", type=int); p.add_argument("--results")
    a = p.parse_args()
    if a.mode == "table":
        table(a.results)
        sys.exit(0)
    sys.exit(0 if (throughput if a.mode == "throughput" else complete)(a) else 1)
PY

# "name=pid ..." of pid files, for the anchor's cpu.sh.
pids_of() {
  local f out=""
  for f in "$@"; do [[ -s $f ]] && out+="$(basename "$f" .pid)=$(cat "$f") "; done
  echo "${out% }"
}

# One half. $1 side, $2 endpoint, $3 access key, $4 secret key, $5 pids for cpu.sh,
# $6 part bytes for the Complete runs, $7 the minimum part size that side enforces.
measure() {
  local side=$1 ep=$2 log=$OUT/$1.log rc=0 n trials bucket parts
  bucket=mpbench-$(date +%s)
  export AWS_ACCESS_KEY_ID=$3 AWS_SECRET_ACCESS_KEY=$4 AWS_DEFAULT_REGION=us-east-1 \
         AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
  python3 -c "import boto3,sys; boto3.client('s3', endpoint_url=sys.argv[1]).create_bucket(Bucket=sys.argv[2])" \
    "$ep" "$bucket" >> "$log" 2>&1 || { echo "ERROR $side: create bucket failed (see $log)" | tee -a "$SUMMARY"; return 1; }
  if [[ " $STEPS " == *" throughput "* ]]; then
    wait_quiet
    echo "NOTE $side throughput: $LOAD_NOTE, $(uptime | sed 's/.*load average/load average/')" |
      tee -a "$RESULTS" "$SUMMARY"
    "$ANCHORS/s3bench/cpu.sh" "${5:-self=$$}" -- python3 "$DRIVER" throughput --endpoint "$ep" \
      --side "$side" --bucket "$bucket" --file "$BIG_FILE" --trials "$TRIALS" --conc "$CONC" \
      --part-mb 8 2>> "$log" | tee -a "$log" | grep -E '^(RESULT|ERROR|cpu%)' |
      sed -E "s/^cpu%/NOTE $side upload+download cpu%/" | tee -a "$RESULTS"
    ((PIPESTATUS[0] == 0)) || rc=1
  fi
  parts=$PARTS; [[ " $STEPS " == *" complete "* ]] || parts=""
  for n in $parts; do
    trials=$TRIALS; ((n >= 10000)) && trials=1
    wait_quiet
    echo "NOTE $side complete $n parts: $LOAD_NOTE" | tee -a "$RESULTS" "$SUMMARY"
    python3 "$DRIVER" complete --endpoint "$ep" --side "$side" --bucket "$bucket" --parts "$n" \
      --part-bytes "$6" --min-part-bytes "$7" --trials "$trials" --conc "$CONC" 2>> "$log" |
      tee -a "$log" | grep -E '^(RESULT|ERROR)' | tee -a "$RESULTS"
    ((PIPESTATUS[0] == 0)) || rc=1
  done
  python3 -c "import boto3,sys; boto3.client('s3', endpoint_url=sys.argv[1]).delete_bucket(Bucket=sys.argv[2])" \
    "$ep" "$bucket" >> "$log" 2>&1
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
  ((rc == 0)) || echo "ERROR $side: a step failed or a check did not hold (see $log)" | tee -a "$SUMMARY"
  return $rc
}

{ machine_notes; echo "# STEPS=\"$STEPS\" BIG_MB=$BIG_MB TRIALS=$TRIALS PARTS=\"$PARTS\" CONC=$CONC out=$OUT"; } |
  tee "$SUMMARY"
: > "$RESULTS"

if [[ " $STEPS " == *" throughput "* ]] && [[ ! -f $BIG_FILE || $(stat -c %s "$BIG_FILE") != $((BIG_MB << 20)) ]]; then
  log "writing $BIG_FILE ($BIG_MB MiB of /dev/urandom)"
  head -c $((BIG_MB << 20)) /dev/urandom > "$BIG_FILE"
fi

# The minimum part size both sides use for the Complete runs. Tessera takes
# it from its layout (router_settings { s3_min_part_bytes }), or from
# `cluster up --s3-min-part-bytes` in builds that have that flag.
LAYOUT=$(bench_layout)
MIN_PART=$((5 << 20)); TESSERA_UP_ARGS=()
if [[ -x $TESSERA ]]; then
  small_layout=$OUT/layout-multipart.textproto
  { cat "$LAYOUT"; echo "router_settings { s3_min_part_bytes: $SMALL_PART_BYTES }"; } > "$small_layout"
  if "$TESSERA" cluster plan --layout "$small_layout" > /dev/null 2>&1; then
    LAYOUT=$small_layout; MIN_PART=$SMALL_PART_BYTES
  elif "$TESSERA" cluster up --help 2>&1 | grep -q -- --s3-min-part-bytes; then
    MIN_PART=$SMALL_PART_BYTES; TESSERA_UP_ARGS=(--s3-min-part-bytes "$MIN_PART")
  fi
fi
PART=$MIN_PART
if ((MIN_PART != SMALL_PART_BYTES)); then
  PARTS=$(for n in $PARTS; do ((n <= 100)) && echo -n "$n "; done); PARTS=${PARTS:-100}
  echo "NOTE $TESSERA takes no minimum part size (layout or flag): 5 MiB parts, only ${PARTS% } parts" |
    tee -a "$RESULTS" "$SUMMARY"
fi

# ---- RGW half
if [[ ${SKIP_RGW:-0} == 1 ]]; then
  echo "SKIP rgw: SKIP_RGW=1" | tee -a "$SUMMARY"
elif log "starting RGW ($ANCHORS/rgw/up.sh, ~40 s fresh)" && "$ANCHORS/rgw/up.sh" > "$OUT/rgw-up.log" 2>&1; then
  rgw_started=1
  rgw_min=$((5 << 20))
  if ((MIN_PART != rgw_min)); then
    ceph -c "$RGW_CONF" --connect-timeout 30 config set client.rgw.a rgw_multipart_min_part_size "$MIN_PART" \
      >> "$OUT/rgw-up.log" 2>&1 && rgw_min_set=1
    for _ in $(seq 20); do
      got=$(ceph -c "$RGW_CONF" --admin-daemon "$RGW_DIR/run/client.rgw.a.asok" config get \
            rgw_multipart_min_part_size 2>/dev/null | sed -nE 's/.*"([0-9]+)".*/\1/p')
      [[ $got == "$MIN_PART" ]] && { rgw_min=$got; break; }
      sleep 0.5
    done
  fi
  echo "NOTE RGW rgw_multipart_min_part_size=$rgw_min (running radosgw, admin socket); Tessera min part=$MIN_PART" |
    tee -a "$RESULTS" "$SUMMARY"
  measure rgw http://127.0.0.1:7480 "$RGW_KEY" "$RGW_SECRET" "$(pids_of "$RGW_DIR"/run/*.pid)" \
    "$PART" "$rgw_min"
  cleanup  # frees the machine for Tessera's half
else
  echo "SKIP rgw: rgw/up.sh failed (see $OUT/rgw-up.log):" | tee -a "$SUMMARY"
  tail -5 "$OUT/rgw-up.log" | sed 's/^/    /' | tee -a "$SUMMARY"
fi

# ---- Tessera half (lib.sh's tessera_up, plus the minimum part size)
[[ -x $TESSERA ]] || { log "no tessera binary at $TESSERA (build it: see docs/benchmarks.md)"; exit 1; }
rm -rf "$TDIR"; mkdir -p "$TDIR"
# shellcheck disable=SC2034  # read by lib.sh's tessera_down
TESSERA_UP=1
log "tessera cluster up --detach --dir $TDIR --layout $LAYOUT ${TESSERA_UP_ARGS[*]}"
if "$TESSERA" cluster up --detach --dir "$TDIR" --layout "$LAYOUT" "${TESSERA_UP_ARGS[@]}" \
     > "$OUT/tessera-up.log" 2>&1; then
  read -r ak sk < <(grep -v '^[[:space:]]*#' "$TDIR/credentials" | grep -v '^[[:space:]]*$' | head -1)
  ep=http://127.0.0.1:$(layout_port "$LAYOUT" s3_port)
  t0=$(date -u +%FT%T)
  measure tessera "$ep" "$ak" "$sk" "$(pids_of "$TDIR"/pids/*.pid "$TDIR"/run/*.pid)" "$PART" "$MIN_PART" ||
    { TESSERA_FAILED=1; tessera_log_evidence "$t0" | tee -a "$SUMMARY"; }
  tessera_down
else
  echo "ERROR tessera: cluster up failed (see $OUT/tessera-up.log)" | tee -a "$SUMMARY"
  tail -5 "$OUT/tessera-up.log" | sed 's/^/    /' | tee -a "$SUMMARY"; TESSERA_FAILED=1
fi

echo | tee -a "$SUMMARY"
python3 "$DRIVER" table --results "$RESULTS" | tee -a "$SUMMARY"
log "raw lines in $RESULTS, logs in $OUT"
exit "$TESSERA_FAILED"
