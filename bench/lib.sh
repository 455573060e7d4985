# shellcheck shell=bash disable=SC2034,SC2153  # LOAD_VAL is read, TDIR/LAYOUT set, by the callers
# Shared helpers for the side-by-side benchmarks (bench/s3_vs_rgw.sh,
# bench/kv_vs_etcd.sh). Source me; not a benchmark on its own. Callers set
# OUT, and TDIR + LAYOUT before tessera_up.
#
# Knobs (environment):
#   TESSERA       tessera binary (default build/bench/src/cli/tessera)
#   ANCHORS       peer scripts (default ../shared/anchors next to the repo)
#   OUT           where raw logs go (default /var/tmp/tessera-bench.<script>.<time>)
#   LOAD_MAX      1-minute load average above which a run waits first (4)
#   WAIT_BUDGET_S total seconds a script may wait for a quiet machine (600)
#   KEEP=1        leave the Tessera cluster directory after the run

BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TESSERA=${TESSERA:-$BENCH_REPO/build/bench/src/cli/tessera}
ANCHORS=${ANCHORS:-$(cd "$BENCH_REPO/.." && pwd)/shared/anchors}
LOAD_MAX=${LOAD_MAX:-4}
WAIT_BUDGET_S=${WAIT_BUDGET_S:-600}
WAITED_S=0

# The clients must talk to plain-HTTP loopback endpoints with nothing from
# the caller's environment steering them elsewhere.
unset AWS_CA_BUNDLE AWS_PROFILE AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE \
      AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN REQUESTS_CA_BUNDLE \
      CURL_CA_BUNDLE SSL_CERT_FILE HTTP_PROXY HTTPS_PROXY http_proxy https_proxy \
      ALL_PROXY all_proxy

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
load1() { cut -d' ' -f1 /proc/loadavg; }

# Waits until the 1-minute load average is at most LOAD_MAX, spending at most
# what is left of WAIT_BUDGET_S over the whole script; sets LOAD_NOTE to one
# line for the record ("load1=X", "... after waiting Ns", "... ran anyway")
# and LOAD_VAL to the load average itself.
wait_quiet() {
  local start=$SECONDS l
  l=$(load1)
  while awk -v l="$l" -v m="$LOAD_MAX" 'BEGIN{exit !(l > m)}' &&
        ((WAITED_S + SECONDS - start < WAIT_BUDGET_S)); do
    sleep 15; l=$(load1)
  done
  local waited=$((SECONDS - start)); WAITED_S=$((WAITED_S + waited))
  LOAD_VAL=$l; LOAD_NOTE="load1=$l"
  ((waited > 0)) && LOAD_NOTE+=" after waiting ${waited}s"
  awk -v l="$l" -v m="$LOAD_MAX" 'BEGIN{exit !(l > m)}' && LOAD_NOTE+=" (above $LOAD_MAX: ran anyway)"
  return 0
}

machine_notes() {
  echo "# machine: nproc=$(nproc), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
       "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# date: $(date -u +%FT%TZ)  tessera: $TESSERA"
}

# The local layout, or a copy with every 19xxx port moved to 29xxx when the
# fixed ports are taken (someone else's dev cluster): prints the layout path.
bench_layout() {
  local layout=$BENCH_REPO/cluster/local.textproto
  if ss -ltn | awk '{print $4}' | grep -qE ':(19080|19351|19301|19101|19201)$'; then
    sed -E 's/(port: )19([0-9]{3})/\129\2/g' "$layout" > "$OUT/layout-shifted.textproto"
    log "ports 19xxx are in use (another cluster): using 29xxx ($OUT/layout-shifted.textproto)"
    layout=$OUT/layout-shifted.textproto
  fi
  echo "$layout"
}

# Port of a field of the (first) router in a layout: s3_port, http_port.
layout_port() { sed -n '/^routers/,/}/p' "$1" | sed -nE "s/.*[^_]$2: ([0-9]+).*/\1/p" | head -1; }

# Starts a fresh Tessera cluster in TDIR (set by the caller) with LAYOUT and
# the extra `cluster up` flags of the array TESSERA_UP_FLAGS (may be unset).
tessera_up() {
  [[ -x $TESSERA ]] || { log "no tessera binary at $TESSERA (build it: see docs/benchmarks.md)"; return 1; }
  rm -rf "$TDIR"; mkdir -p "$TDIR"
  TESSERA_UP=1  # also after a failed up: stop what it started
  local flags=("${TESSERA_UP_FLAGS[@]}")
  log "tessera cluster up --detach --dir $TDIR --layout $LAYOUT ${flags[*]}"
  "$TESSERA" cluster up --detach --dir "$TDIR" --layout "$LAYOUT" "${flags[@]}" > "$OUT/tessera-up.log" 2>&1 ||
    { log "tessera cluster up failed:"; tail -20 "$OUT/tessera-up.log" >&2; return 1; }
}

tessera_down() {
  [[ ${TESSERA_UP:-0} == 1 ]] || return 0
  TESSERA_UP=0
  log "tessera cluster down --dir $TDIR"
  "$TESSERA" cluster down --dir "$TDIR" --layout "$LAYOUT" >/dev/null 2>&1 || true
  # keep the logs (evidence); drop data unless KEEP=1
  [[ ${KEEP:-0} == 1 ]] || find "$TDIR" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
}

# Evidence after an error: the cluster's warning and error lines logged since
# $1 (an ISO-8601 UTC time as the logs print it; default: all).
tessera_log_evidence() {
  local since=${1:-0} f
  for f in "$TDIR"/logs/*.log; do
    [[ -f $f ]] || continue
    awk -v s="$since" '$1 >= s' "$f" | grep -iE 'error|warn|fail|crit|abort' | tail -5 |
      sed "s|^|  $(basename "$f"): |"
  done
}
