#!/usr/bin/env bash
# Runs failure-injection experiments (docs/experiments.md) one after the
# other and stops at the first that fails, printing its seed and the command
# that replays it. `make experiments` calls it.
#   scripts/run-experiments.sh TESSERA                 every experiments/*.textproto
#   scripts/run-experiments.sh TESSERA --soak N        N runs of
#                                     experiments/random-faults.textproto
#   --seed S   the seed of every run (default: a new random seed per run)
#   --out DIR  where result directories go (default: build/experiments)
# Exit 0 when every run passed; otherwise the failing run's exit code
# (1 a checker failed, 2 bad input, 3 the run could not be carried out).
set -uo pipefail

usage() { echo "usage: $0 TESSERA [--soak N] [--seed S] [--out DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
tessera=$1; shift
soak=0 seed="" out=build/experiments
while [ $# -gt 0 ]; do
  case $1 in
    --soak) [ $# -ge 2 ] || usage; soak=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ $soak =~ ^[0-9]+$ ]] || { echo "$0: --soak $soak: not a count" >&2; exit 2; }
[ -z "$seed" ] || [[ $seed =~ ^[0-9]+$ ]] || { echo "$0: --seed $seed: not a number" >&2; exit 2; }
[ -x "$tessera" ] || { echo "$0: $tessera: not an executable (make build first)" >&2; exit 2; }
# Paths given relative to the caller's directory, before moving to the
# repository (experiments/ and the default build/experiments are there).
tessera=$(realpath "$tessera")
[ "$out" = build/experiments ] || { mkdir -p "$out" && out=$(realpath "$out"); } || exit 2
cd "$(dirname "$0")/.."
mkdir -p "$out"

# A seed below a million, as `tessera experiment run` draws its own.
random_seed() { echo $(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 )); }

files=()
if [ "$soak" -gt 0 ]; then
  for _ in $(seq "$soak"); do files+=(experiments/random-faults.textproto); done
else
  files=(experiments/*.textproto)
fi

run=0
for file in "${files[@]}"; do
  run=$((run + 1))
  name=$(basename "$file" .textproto)
  s=${seed:-$(random_seed)}
  dir="$out/$name-$s"
  rm -rf "$dir"
  echo "== [$run/${#files[@]}] $file seed $s -> $dir"
  "$tessera" experiment run "$file" --seed "$s" --out "$dir"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo
    echo "FAILED: $file seed $s (exit $rc); results and report.html in $dir"
    echo "rerun: $tessera experiment run $file --seed $s"
    exit $rc
  fi
done
echo "all ${#files[@]} runs passed"
