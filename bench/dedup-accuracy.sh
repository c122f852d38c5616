#!/usr/bin/env bash
# The dedup figure's accuracy, build against build: each case run with seeds 1..SEEDS
# on the null engine for SECS seconds, and the lowest and highest `dedup_pct` of the
# runs printed per case (the stream's own share is the --dedup asked, within the
# spread of its generator: `iomark data` measures a stream exactly).
#
#   bench/dedup-accuracy.sh BINARY [BINARY...]
#   SEEDS=6 SECS=1 bench/dedup-accuracy.sh /tmp/iomark-old target/release/iomark
#   CASES="4k 50 10000;128k 20 -" bench/dedup-accuracy.sh target/release/iomark
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,9p "$0" >&2; exit 2; }
SEEDS=${SEEDS:-6}
SECS=${SECS:-1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# CASES="4k 50 10000;128k 20 -" runs those cases only ("BS PCT SET", - for no set).
if [ -n "${CASES:-}" ]; then
  IFS=';' read -r -a CASES <<<"$CASES"
else
  CASES=(
    "4k 50 1000" "4k 50 3000" "4k 50 10000" "4k 50 -" "4k 20 -"
    "128k 50 1000" "128k 50 3000" "128k 50 10000" "128k 50 -" "128k 20 -"
  )
fi
printf '%-22s' case
for b in "$@"; do printf ' %24s' "$(basename "$b")"; done
echo
for c in "${CASES[@]}"; do
  read -r bs pct set <<<"$c"
  opts=(--bs "$bs" --dedup "$pct")
  [ "$set" = - ] || opts+=(--dedup-set "$set")
  printf '%-22s' "$bs $pct% set $set"
  for b in "$@"; do
    vals=()
    for s in $(seq 1 "$SEEDS"); do
      "$b" run --engine null --rw write "${opts[@]}" --size 1g --runtime "${SECS}s" \
        --seed "$s" --quiet -o "$TMP/r.json" --force >/dev/null 2>&1
      vals+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["repetitions"][0]["data"]["dedup_pct"])' "$TMP/r.json")")
    done
    printf ' %24s' "$(printf '%s\n' "${vals[@]}" | sort -g | sed -n '1p;$p' | paste -sd' ' | awk '{printf "%.1f-%.1f", $1, $2}')"
  done
  echo
done
