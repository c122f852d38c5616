#!/usr/bin/env bash
# Two iomark builds on the same job, alternated ROUNDS times (the order swapped every
# round, so that neither always runs first), then the median and the spread of the ratios
# B/A of the job threads' CPU per I/O (cpu.workers.per_io_ns) and of the IOPS.
#
#   bench/ab.sh OLD_BINARY NEW_BINARY [iomark run options...]
#   ROUNDS=12 SECS=2 bench/ab.sh /tmp/iomark-old target/release/iomark --bs 128k --rw write
#
# Default job: the null engine, 4 KiB sequential writes at QD 1 over 1 GiB; options given
# after the two binaries replace "--rw write --bs 4k --qd 1" (the engine, the size and the
# runtime stay unless given: `--engine`, `--size` given there replace them; TARGET=PATH
# names the file or device to run on, e.g. TARGET=/dev/loop0 ... --engine io_uring
# --allow-write-device). Run it on
# a quiet machine: the ratio of two builds measured side by side is what it reports, not
# either build's speed. BUSY=N runs N busy loops (SCHED_OTHER, nice 0) beside each
# measurement, as other work on a shared machine would: BUSY=2 on a 2-CPU machine (in
# a session of their own, as work started in another terminal: see bench/vs-fio.sh).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,13p "$0" >&2; exit 2; }
A=$1 B=$2
shift 2
ROUNDS=${ROUNDS:-8}
SECS=${SECS:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
JOB=("$@")
[ ${#JOB[@]} -gt 0 ] || JOB=(--rw write --bs 4k --qd 1)
case " ${JOB[*]} " in *" --engine "*) ;; *) JOB+=(--engine null) ;; esac
case " ${JOB[*]} " in *" --size "*) ;; *) JOB+=(--size 1g) ;; esac
one() {
  local busy=()
  for _ in $(seq 1 "${BUSY:-0}"); do
    setsid sh -c 'while :; do :; done' &
    busy+=($!)
  done
  "$1" run "${JOB[@]}" --runtime "${SECS}s" --quiet -o "$TMP/r.json" --force ${TARGET:-} \
    >/dev/null 2>&1
  [ ${#busy[@]} -eq 0 ] || { kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null || true; }
  python3 - "$TMP/r.json" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))["runs"][0]["repetitions"][0]
ios = sum(rep[d]["ios"] for d in ("read", "write") if rep.get(d))
print(rep["cpu"]["workers"]["per_io_ns"], ios / rep["elapsed_s"])
EOF
}
printf '%-6s %14s %14s %12s %12s\n' round "A ns/I/O" "B ns/I/O" "A IOPS" "B IOPS"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then
    read -r ca ia < <(one "$A"); read -r cb ib < <(one "$B")
  else
    read -r cb ib < <(one "$B"); read -r ca ia < <(one "$A")
  fi
  printf '%-6s %14.1f %14.1f %12.0f %12.0f\n' "$r" "$ca" "$cb" "$ia" "$ib"
  echo "$ca $cb $ia $ib" >>"$TMP/rounds"
done
python3 - "$TMP/rounds" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
cpu = sorted(b / a for a, b, _, _ in rows)
iops = sorted(ib / ia for _, _, ia, ib in rows)
print(f"B/A CPU per I/O (workers): median {statistics.median(cpu):.3f} ({cpu[0]:.2f}-{cpu[-1]:.2f})")
print(f"B/A IOPS:                  median {statistics.median(iops):.3f} ({iops[0]:.2f}-{iops[-1]:.2f})")
EOF
