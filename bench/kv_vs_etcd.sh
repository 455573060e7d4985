#!/usr/bin/env bash
# KV side by side with etcd (issue 3): the anchor's wrk harness (kv/wrk/run.sh
# + kv.lua) drives etcd's JSON gateway and Tessera's HTTP/JSON KV API in the
# same window, interleaved run by run: 100-byte values, 16-byte keys uniform
# over 100k preloaded keys, 1, 16 and 64 connections, writes and strongly
# consistent reads (etcd: linearizable range; Tessera: GET, a leader-lease
# read). Then leader failover: bench/failover.py for Tessera (5 trials) and
# the anchor's etcd/failover.sh (5 trials). Tessera's kv table has `cluster
# up`'s six even ranges of the byte space, so every "k..." key of the
# harness falls into one partition; KV_SPLIT=1 splits it at the sixths of
# the key space instead (measured slower on two cores: docs/benchmarks.md).
#
#   bench/kv_vs_etcd.sh                # prints the comparison table (markdown)
#   DUR=10 CONNS="1 16 64" ROUNDS=3 TRIALS=5 SKIP_ETCD=1 SKIP_FAILOVER=1 KV_SPLIT=1 bench/kv_vs_etcd.sh
#
# ROUNDS=N repeats the whole interleaved series N times (etcd, Tessera, etcd,
# ... at every point, then again); the table then shows each system's median
# figures and the median of the N per-round ratios, with their range, since
# on a shared VM one 10 s point moves by tens of percent from run to run.
#
# A peer that cannot start is reported and skipped; Tessera's half still runs.
# Raw lines: $OUT/kv.raw; wrk reports: $OUT/wrk-*.txt; cluster logs: $TDIR/logs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
OUT=${OUT:-/var/tmp/tessera-bench.kv.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
DUR=${DUR:-10}; CONNS=${CONNS:-"1 16 64"}; ROUNDS=${ROUNDS:-1}; TRIALS=${TRIALS:-5}; KEYSPACE=${KV_KEYSPACE:-100000}
export KV_KEYSPACE=$KEYSPACE KV_VALLEN=100
TDIR=${TDIR:-/var/tmp/tessera-bench-kv.$(date +%s)}
ETCD_DIR=${ETCD_DIR:-/var/tmp/tessera-bench-etcd.$(date +%s)}
ETCD=$ANCHORS/kv/etcd
WRK=$ANCHORS/kv/wrk/run.sh
RAW=$OUT/kv.raw; SUMMARY=$OUT/summary.md
: > "$RAW"
# The load generator both halves share; without it no row can be measured.
command -v wrk > /dev/null ||
  { echo "bench/kv_vs_etcd.sh: wrk is not installed (scripts/install-deps.sh --bench, or make bench)" >&2; exit 1; }

etcd_started=0; TESSERA_FAILED=0  # exit status: 1 when Tessera failed or erred
cleanup() {
  tessera_down
  if ((etcd_started)); then log "stopping etcd"; DIR=$ETCD_DIR "$ETCD/down.sh" --wipe >/dev/null 2>&1; fi
  etcd_started=0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{ machine_notes; echo "# DUR=${DUR}s CONNS=\"$CONNS\" ROUNDS=$ROUNDS keyspace=$KEYSPACE out=$OUT"; } | tee "$SUMMARY"

# ---- start both, preload both
etcd_url=""
if [[ ${SKIP_ETCD:-0} == 1 ]]; then
  echo "SKIP etcd: SKIP_ETCD=1" | tee -a "$SUMMARY"
elif log "starting etcd ($ETCD/up.sh, DIR=$ETCD_DIR)" && DIR=$ETCD_DIR "$ETCD/up.sh" > "$OUT/etcd-up.log" 2>&1; then
  etcd_started=1
  etcd_url=$(DIR=$ETCD_DIR bash -c ". '$ETCD/env.sh'; client_url \$(leader_idx)")
  log "preloading $KEYSPACE keys into etcd at $etcd_url (leader)"
  python3 "$ETCD/preload.py" "$etcd_url" "$KEYSPACE" >> "$OUT/etcd-up.log" 2>&1 ||
    { echo "SKIP etcd: preload failed (see $OUT/etcd-up.log)" | tee -a "$SUMMARY"; etcd_url=""; }
else
  echo "SKIP etcd: etcd/up.sh failed (see $OUT/etcd-up.log):" | tee -a "$SUMMARY"
  tail -5 "$OUT/etcd-up.log" | sed 's/^/    /' | tee -a "$SUMMARY"
fi

LAYOUT=$(bench_layout)
# KV_SPLIT=1: the kv table split at the sixths of the key space the harness
# draws from ("k" + 15 digits), so that six partitions (leaders on
# different nodes) share the load.
TESSERA_UP_FLAGS=()
FAILOVER_KEYS=(--group 1001 --key-prefix A)  # group 1001: [*\xaa, UU) of the even ranges
if [[ ${KV_SPLIT:-0} == 1 ]]; then
  for i in 1 2 3 4 5; do TESSERA_UP_FLAGS+=(--kv-split "$(printf 'k%015d' $((KEYSPACE * i / 6)))"); done
  FAILOVER_KEYS=(--group 1001 --key-prefix "$(printf 'k%015d' $((KEYSPACE / 4)))")  # the second sixth
fi
echo "# tessera kv table: ${TESSERA_UP_FLAGS[*]:-six even ranges of the byte space (KV_SPLIT=0)}" | tee -a "$SUMMARY"
tessera_url=""; token=""
if tessera_up; then
  tessera_url=http://127.0.0.1:$(layout_port "$LAYOUT" http_port)
  token=$("$TESSERA" kv token --dir "$TDIR" --layout "$LAYOUT" --ttl 7200)
  log "preloading $KEYSPACE keys into Tessera at $tessera_url"
  python3 "$HERE/kv_preload.py" "$tessera_url" "$token" "$KEYSPACE" 2>&1 | tee -a "$SUMMARY" ||
    { echo "ERROR tessera: preload incomplete (reads of missing keys count as non-2xx)" | tee -a "$SUMMARY"
      TESSERA_FAILED=1; }
else
  echo "ERROR tessera: cluster up failed (see $OUT/tessera-up.log)" | tee -a "$SUMMARY"; TESSERA_FAILED=1
fi

# One wrk run; appends "system=.. mode=.. conns=.. load1=.. <RESULT fields>" to RAW.
run_one() {
  local sys=$1 mode=$2 c=$3 round=$4 txt=$OUT/wrk-$1-$2-$3-r$4.txt res t0
  wait_quiet
  t0=$(date -u +%FT%T)
  {
    echo "# $LOAD_NOTE"
    if [[ $sys == etcd ]]; then
      echo "\$ KV_SERIALIZABLE=0 $WRK $etcd_url $mode $c $DUR"
      KV_SERIALIZABLE=0 "$WRK" "$etcd_url" "$mode" "$c" "$DUR"
    else
      local method=PUT body='{"value":"{VALUE}"}'
      [[ $mode == get ]] && { method=GET; body=''; }
      echo "\$ KV_METHOD=$method KV_PATH='/kv/kv/{KEY}' KV_BODY='$body' KV_ENCODING=raw" \
           "KV_HEADER='Authorization: Bearer <kv token>' $WRK $tessera_url $mode $c $DUR"
      KV_METHOD=$method KV_PATH='/kv/kv/{KEY}' KV_BODY=$body KV_ENCODING=raw \
        KV_HEADER="Authorization: Bearer $token" "$WRK" "$tessera_url" "$mode" "$c" "$DUR"
    fi
  } > "$txt" 2>&1
  echo "LOAD $sys $mode c=$c: $LOAD_NOTE" >> "$SUMMARY"
  res=$(grep '^RESULT' "$txt" | tail -1)
  if [[ -z $res ]]; then
    echo "ERROR $sys $mode c=$c: no RESULT line (see $txt)" | tee -a "$SUMMARY"
    [[ $sys == tessera ]] && TESSERA_FAILED=1  # a Tessera row without figures fails the run
    return
  fi
  echo "system=$sys mode=$mode conns=$c round=$round load1=$LOAD_VAL ${res#RESULT }" | tee -a "$RAW" >&2
  if [[ $sys == tessera ]] && ! grep -q 'err_status=0 err_sock=0' <<< "$res"; then
    tessera_failure "$mode" "$c" "$res" "$t0"
  fi
}

# Evidence for Tessera errors under load: one request of the same shape, its
# status and body, and the cluster's warning/error log lines since $4.
tessera_failure() {
  echo "ERROR tessera $1 c=$2: $3" | tee -a "$SUMMARY"; TESSERA_FAILED=1
  local key=k000000000000042
  if [[ $1 == put ]]; then
    curl -s -o /dev/stderr -w '  probe PUT status=%{http_code}\n' -X PUT -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/json' -d '{"value":"probe"}' "$tessera_url/kv/kv/$key" 2>&1
  else
    curl -s -o /dev/stderr -w '  probe GET status=%{http_code}\n' -H "Authorization: Bearer $token" \
      "$tessera_url/kv/kv/$key" 2>&1
  fi | tee -a "$SUMMARY"
  tessera_log_evidence "$4" | tee -a "$SUMMARY"
}

for ((round = 1; round <= ROUNDS; round++)); do
  for c in $CONNS; do
    for mode in put get; do
      [[ -n $etcd_url ]] && run_one etcd "$mode" "$c" "$round"
      [[ -n $tessera_url ]] && run_one tessera "$mode" "$c" "$round"
    done
  done
done

# ---- failover, Tessera then etcd
if [[ ${SKIP_FAILOVER:-0} != 1 ]]; then
  if [[ -n $tessera_url ]]; then
    wait_quiet; echo "LOAD tessera failover: $LOAD_NOTE" | tee -a "$SUMMARY"
    echo "\$ bench/failover.py --tessera $TESSERA --dir $TDIR --layout $LAYOUT --trials $TRIALS" \
         "--router ${tessera_url#http://} ${FAILOVER_KEYS[*]}" | tee -a "$SUMMARY"
    python3 "$HERE/failover.py" --tessera "$TESSERA" --dir "$TDIR" --layout "$LAYOUT" \
      --trials "$TRIALS" --router "${tessera_url#http://}" "${FAILOVER_KEYS[@]}" 2>&1 |
      sed 's/^/failover tessera /' |
      tee -a "$RAW" >&2
  fi
  if [[ -n $etcd_url ]]; then
    wait_quiet; echo "LOAD etcd failover: $LOAD_NOTE" | tee -a "$SUMMARY"
    echo "\$ DIR=$ETCD_DIR $ETCD/failover.sh $TRIALS" | tee -a "$SUMMARY"
    DIR=$ETCD_DIR "$ETCD/failover.sh" "$TRIALS" 2>&1 | sed 's/^/failover etcd /' | tee -a "$RAW" >&2
  fi
fi
cleanup

echo | tee -a "$SUMMARY"
python3 "$HERE/compare.py" kv "$RAW" | tee -a "$SUMMARY"
log "raw lines in $RAW"
exit "$TESSERA_FAILED"
