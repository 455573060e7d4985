#!/usr/bin/env bash
# One large object up and down with `aws s3 cp`, timed around the aws
# command alone.
#
#   s3_cli_transfer.sh ENDPOINT BUCKET FILE [DOWNLOADS=3]
#
# Why beside the anchors' baseline.sh, which runs the same commands: it
# times each one through its cpu.sh wrapper, whose per-process /proc reads
# and bc calls run inside the timed window and cost ~0.09 s per listed
# process on this machine (measured: 0.27 s with 1 process, 0.63 s with 6,
# 1.05 s with 10). RGW lists 6 processes, Tessera 10 and the sink 1, so
# those timings charge the servers different fixed costs. Here nothing but
# the aws CLI (its start-up included, the same for every server) is timed.
#
# Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; region,
# config and credentials files are set here. The bucket must exist. Prints
#   RESULT cli upload <MiB/s> MiB/s seconds=<s>
#   RESULT cli download <MiB/s> MiB/s seconds=<s,s,...>   (all runs' bytes / their time)
#   RESULT cli roundtrip content identical | CONTENT DIFFERS
# and exits non-zero when a command fails or the bytes differ. With
# S3_TRANSFER_NO_VERIFY=1 (bench/s3_sink stores nothing) the content is not
# compared.
set -uo pipefail
if (($# < 3)); then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
EP=$1 BUCKET=$2 FILE=$3 DOWNLOADS=${4:-3}
export AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
MIB=$(( $(stat -c %s "$FILE") / 1048576 ))
KEY=cli-$(basename "$FILE")
SCRATCH=$(mktemp -d "$(dirname "$FILE")/s3-cli-transfer.XXXXXX") || exit 1
trap 'rm -rf "$SCRATCH"' EXIT

# Seconds taken by the command given, on stdout; its own output goes to stderr.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >&2 || return 1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

up=$(timed aws --endpoint-url "$EP" s3 cp --no-progress "$FILE" "s3://$BUCKET/$KEY") || exit 1
printf 'RESULT cli upload %.1f MiB/s seconds=%.3f\n' "$(echo "$MIB / $up" | bc -l)" "$up"

runs=() total=0
for ((i = 0; i < DOWNLOADS; i++)); do
  rm -f "$SCRATCH/down.bin"
  s=$(timed aws --endpoint-url "$EP" s3 cp --no-progress "s3://$BUCKET/$KEY" "$SCRATCH/down.bin") || exit 1
  runs+=("$(printf '%.3f' "$s")")
  total=$(echo "$total + $s" | bc -l)
done
printf 'RESULT cli download %.1f MiB/s seconds=%s\n' "$(echo "$MIB * $DOWNLOADS / $total" | bc -l)" \
  "$(IFS=,; echo "${runs[*]}")"

if [[ ${S3_TRANSFER_NO_VERIFY:-0} == 1 ]]; then
  echo "RESULT cli roundtrip not checked"
  exit 0
fi
aws --endpoint-url "$EP" s3 rm --only-show-errors "s3://$BUCKET/$KEY" >&2
if cmp -s "$FILE" "$SCRATCH/down.bin"; then
  echo "RESULT cli roundtrip content identical"
else
  echo "RESULT cli roundtrip CONTENT DIFFERS"
  exit 1
fi
