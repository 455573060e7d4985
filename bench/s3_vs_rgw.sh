#!/usr/bin/env bash
# S3 side by side with Ceph RGW (issue 4): the same load generator, the same
# steps, back to back in one window. RGW is started with the anchor's up.sh,
# measured with the anchor's baseline.sh (its bench user), stopped; then a
# fresh Tessera cluster is started and measured the same way (its first
# credentials), stopped. HEAD is not in baseline.sh, so both halves add
# `s3bench -o head` at concurrency 1 and 32 over the same 1,000 keys, and
# the large object once more with s3bench (one libcurl stream, PUT once,
# GET three times), which the aws CLI's own ceiling cannot hide, and with
# bench/s3_transfer.py (s3transfer, the aws CLI's engine with its defaults,
# timed around the transfers: `aws s3 cp` timings include ~1 s of CLI
# start-up per command here), and with bench/s3_cli_transfer.sh (`aws s3 cp`
# timed around the aws command alone: baseline.sh's timings include its
# cpu.sh wrapper, whose cost grows with the number of server processes it
# watches). Last, the aws CLI's and s3transfer's large-object steps against
# tessera_s3_sink give the client's own ceiling on this machine.
#
#   bench/s3_vs_rgw.sh                 # prints the comparison table (markdown)
#   DUR=10 BIG_MB=256 SKIP_RGW=1 RGW_KEEP=1 KEEP=1 bench/s3_vs_rgw.sh
#
# A peer that cannot start is reported and skipped; Tessera's half still runs.
# Raw logs: $OUT/{rgw,tessera}.log; the cluster's logs stay in $TDIR/logs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
OUT=${OUT:-/var/tmp/tessera-bench.s3.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export DUR=${DUR:-10} BIG_MB=${BIG_MB:-256}
export S3BENCH=${S3BENCH:-/var/tmp/s3bench-tessera}
TDIR=${TDIR:-/var/tmp/tessera-bench-s3.$(date +%s)}
RGW_KEY=BENCHACCESSKEY000001
RGW_SECRET=benchsecretbenchsecretbenchsecret0000001
RGW_DIR=${RGW_DIR:-/var/tmp/rgw-anchor}
SUMMARY=$OUT/summary.md

rgw_started=0; TESSERA_FAILED=0  # exit status: 1 when Tessera failed or erred
cleanup() {
  tessera_down
  if ((rgw_started)) && [[ ${RGW_KEEP:-0} != 1 ]]; then
    log "stopping RGW (rgw/down.sh)"; "$ANCHORS/rgw/down.sh" >> "$OUT/rgw-up.log" 2>&1
    rgw_started=0
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ! -x $S3BENCH || $S3BENCH -ot $ANCHORS/s3bench/s3bench.c ]]; then
  gcc -O2 -Wall -o "$S3BENCH" "$ANCHORS/s3bench/s3bench.c" -lcurl -lm ||
    { log "cannot build s3bench (apt-get install -y libcurl4-openssl-dev gcc)"; exit 1; }
fi

# "name=pid ..." of a directory of pid files, for the anchor's cpu.sh.
pids_of() {
  local f out=""
  for f in "$@"; do [[ -s $f ]] && out+="$(basename "$f" .pid)=$(cat "$f") "; done
  echo "${out% }"
}

# One half: baseline.sh (large objects, then small ones, so the load average
# is noted before each), then HEAD at concurrency 1 and 32 over its list- keys.
# $1 name, $2 endpoint, $3 access key, $4 secret key, $5 "name=pid ..." for cpu.sh.
measure() {
  local name=$1 ep=$2 log=$OUT/$1.log rc=0 c bucket part skip t0
  t0=$(date -u +%FT%T)
  : > "$log"
  for part in big small; do
    skip=SKIP_SMALL; [[ $part == small ]] && skip=SKIP_BIG
    wait_quiet
    echo "LOAD $name $part: $LOAD_NOTE" | tee -a "$SUMMARY" >> "$log"
    echo "\$ $skip=1 DUR=$DUR BIG_MB=$BIG_MB AWS_ACCESS_KEY_ID=$3 $ANCHORS/s3bench/baseline.sh $ep" >> "$log"
    env "$skip=1" AWS_ACCESS_KEY_ID="$3" AWS_SECRET_ACCESS_KEY="$4" AWS_DEFAULT_REGION=us-east-1 \
      PIDS="$5" "$ANCHORS/s3bench/baseline.sh" "$ep" >> "$log" 2>&1 || rc=1
  done
  bucket=$(sed -n 's/.*bucket=\([^ ]*\).*/\1/p' "$log" | tail -1)
  # The large object again with s3bench (libcurl, one stream, body
  # discarded): the server's rate where the aws CLI's own ceiling hides it.
  for op in put get; do
    local ops=1; [[ $op == get ]] && ops=3
    wait_quiet
    echo "LOAD $name big $op s3bench: $LOAD_NOTE" | tee -a "$SUMMARY" >> "$log"
    echo "\$ $S3BENCH -e $ep -b $bucket -o $op -z ${BIG_MB}M -p big- -n 1 -N $ops -c 1" >> "$log"
    AWS_ACCESS_KEY_ID=$3 AWS_SECRET_ACCESS_KEY=$4 "$ANCHORS/s3bench/cpu.sh" "${5:-self=$$}" -- \
      "$S3BENCH" -e "$ep" -b "$bucket" -o "$op" -z "${BIG_MB}M" -p big- -n 1 -N "$ops" -c 1 >> "$log" 2>&1 ||
      rc=1
    echo >> "$log"
  done
  big_transfer "$name" "$ep" "$bucket" "$3" "$4" "$5" "$log" || rc=1
  cli_transfer "$name" "$ep" "$bucket" "$3" "$4" "$log" || rc=1
  for c in 1 32; do
    wait_quiet
    echo "LOAD $name head c=$c: $LOAD_NOTE" | tee -a "$SUMMARY" >> "$log"
    echo "\$ $S3BENCH -e $ep -b $bucket -o head -z 4K -p list- -n 1000 -c $c -d $DUR" >> "$log"
    AWS_ACCESS_KEY_ID=$3 AWS_SECRET_ACCESS_KEY=$4 "$ANCHORS/s3bench/cpu.sh" "${5:-self=$$}" -- \
      "$S3BENCH" -e "$ep" -b "$bucket" -o head -z 4K -p list- -n 1000 -c "$c" -d "$DUR" >> "$log" 2>&1 ||
      rc=1
    echo >> "$log"
  done
  ((rc == 0)) || report_failure "$name" "$log" "$3" "$4" "$t0"
}

# One client step of the large object: waits for a quiet machine, notes
# the load and the command in the log, runs the command with the keys (and
# no config or credentials files). $1 name, $2 label, $3 log, $4 access
# key, $5 secret key, $6 "name=pid ..." to time it through cpu.sh, or ""
# to time nothing but the command; the command follows.
large_object_step() {
  local name=$1 label=$2 log=$3 ak=$4 sk=$5 cpu=$6
  shift 6
  local wrap=()
  [[ -n $cpu ]] && wrap=("$ANCHORS/s3bench/cpu.sh" "$cpu" --)
  wait_quiet
  echo "LOAD $name big $label: $LOAD_NOTE" | tee -a "$SUMMARY" >> "$log"
  echo "\$ $*" >> "$log"
  AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk AWS_CONFIG_FILE=/dev/null \
    AWS_SHARED_CREDENTIALS_FILE=/dev/null "${wrap[@]}" "$@" >> "$log" 2>&1
  local rc=$?
  echo >> "$log"
  return $rc
}

# The large object through s3transfer (bench/s3_transfer.py): up once, down
# three times. $1 name, $2 endpoint, $3 bucket, $4 access key, $5 secret
# key, $6 "name=pid ..." for cpu.sh, $7 log.
big_transfer() {
  large_object_step "$1" s3transfer "$7" "$4" "$5" "${6:-self=$$}" \
    python3 "$HERE/s3_transfer.py" "$2" "$3" "/var/tmp/s3b-${BIG_MB}M.bin" 3
}

# The large object with `aws s3 cp`, timed around the aws command alone
# (bench/s3_cli_transfer.sh: baseline.sh's timings include its cpu.sh
# wrapper, ~0.09 s per listed process): up once, down three times. $1 name,
# $2 endpoint, $3 bucket, $4 access key, $5 secret key, $6 log.
cli_transfer() {
  large_object_step "$1" "aws cli alone" "$6" "$4" "$5" "" \
    "$HERE/s3_cli_transfer.sh" "$2" "$3" "/var/tmp/s3b-${BIG_MB}M.bin" 3
}

# Evidence for a failed half: the blocks whose requests failed (or the log's
# tail), one short verbose rerun of the first failing s3bench command (its
# first error responses), and for Tessera the cluster's warning/error lines.
# $1 name, $2 log, $3 access key, $4 secret key, $5 start of the half (UTC).
report_failure() {
  local name=$1 log=$2 bad cmd
  echo "ERROR $name: a step exited non-zero (s3bench exits 1 when any request fails):" | tee -a "$SUMMARY"
  bad=$(awk '/^\$ /{blk=""} {blk=blk $0 "\n"} /errors=[1-9]/{bad=bad blk} END{printf "%s", bad}' "$log")
  [[ -n $bad ]] || bad=$(tail -15 "$log")
  echo "$bad" | head -30 | sed 's/^/    /' | tee -a "$SUMMARY"
  cmd=$(echo "$bad" | grep -o "$S3BENCH .*" | head -1)
  if [[ -n $cmd ]]; then
    cmd=$(echo "$cmd" | sed -E 's/ -d [0-9]+//; s/$/ -d 3 -v/')
    echo "  rerun with -v: $cmd" | tee -a "$SUMMARY"
    # shellcheck disable=SC2086  # the command line is split on purpose
    AWS_ACCESS_KEY_ID=$3 AWS_SECRET_ACCESS_KEY=$4 $cmd 2>&1 | head -12 | sed 's/^/    /' | tee -a "$SUMMARY"
  fi
  if [[ $name == tessera ]]; then TESSERA_FAILED=1; tessera_log_evidence "$5" | tee -a "$SUMMARY"; fi
}

{ machine_notes; echo "# DUR=${DUR}s BIG_MB=$BIG_MB out=$OUT"; } | tee "$SUMMARY"

# ---- RGW half
if [[ ${SKIP_RGW:-0} == 1 ]]; then
  echo "SKIP rgw: SKIP_RGW=1" | tee -a "$SUMMARY"
elif log "starting RGW ($ANCHORS/rgw/up.sh, ~40 s fresh)" && "$ANCHORS/rgw/up.sh" > "$OUT/rgw-up.log" 2>&1; then
  rgw_started=1
  measure rgw http://127.0.0.1:7480 "$RGW_KEY" "$RGW_SECRET" "$(pids_of "$RGW_DIR"/run/*.pid)"
  if [[ ${RGW_KEEP:-0} != 1 ]]; then
    log "stopping RGW (rgw/down.sh) to free the machine"
    "$ANCHORS/rgw/down.sh" >> "$OUT/rgw-up.log" 2>&1; rgw_started=0
  fi
else
  echo "SKIP rgw: rgw/up.sh failed (see $OUT/rgw-up.log):" | tee -a "$SUMMARY"
  tail -5 "$OUT/rgw-up.log" | sed 's/^/    /' | tee -a "$SUMMARY"
fi

# ---- Tessera half
LAYOUT=$(bench_layout)
if tessera_up; then
  read -r ak sk < <(grep -v '^[[:space:]]*#' "$TDIR/credentials" | grep -v '^[[:space:]]*$' | head -1)
  ep=http://127.0.0.1:$(layout_port "$LAYOUT" s3_port)
  measure tessera "$ep" "$ak" "$sk" "$(pids_of "$TDIR"/pids/*.pid "$TDIR"/run/*.pid)"
  tessera_down
else
  echo "ERROR tessera: cluster up failed (see $OUT/tessera-up.log)" | tee -a "$SUMMARY"; TESSERA_FAILED=1
fi

# ---- The client's ceiling: the same aws CLI steps for large objects against
# tessera_s3_sink (bench/s3_sink.cc: stores nothing, objects read back as
# zeros), the most any server can get from this client on this machine.
SINK=${S3SINK:-$(dirname "$TESSERA")/../../bench/tessera_s3_sink}
if [[ -x $SINK ]] && [[ ${SKIP_SINK:-0} != 1 ]]; then
  sink_port=$(free_port)
  "$SINK" --port "$sink_port" --object-bytes $((BIG_MB * 1048576)) > "$OUT/sink-up.log" 2>&1 &
  sink_pid=$!
  sleep 0.5
  wait_quiet
  echo "LOAD sink big: $LOAD_NOTE" | tee -a "$SUMMARY" > "$OUT/sink.log"
  SKIP_SMALL=1 AWS_ACCESS_KEY_ID=SINKACCESSKEY AWS_SECRET_ACCESS_KEY=sinksecret \
    AWS_DEFAULT_REGION=us-east-1 "$ANCHORS/s3bench/baseline.sh" "http://127.0.0.1:$sink_port" \
    >> "$OUT/sink.log" 2>&1
  S3_TRANSFER_NO_VERIFY=1 big_transfer sink "http://127.0.0.1:$sink_port" sink-bucket \
    SINKACCESSKEY sinksecret "self=$$" "$OUT/sink.log"
  S3_TRANSFER_NO_VERIFY=1 cli_transfer sink "http://127.0.0.1:$sink_port" sink-bucket \
    SINKACCESSKEY sinksecret "$OUT/sink.log"
  kill "$sink_pid" 2>/dev/null; wait "$sink_pid" 2>/dev/null
else
  echo "SKIP sink: no $SINK (cmake --build ... --target tessera_s3_sink) or SKIP_SINK=1" | tee -a "$SUMMARY"
fi

echo | tee -a "$SUMMARY"
python3 "$HERE/compare.py" s3 "$OUT/rgw.log" "$OUT/tessera.log" "$OUT/sink.log" | tee -a "$SUMMARY"
log "raw logs in $OUT"
exit "$TESSERA_FAILED"
