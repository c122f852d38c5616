#!/usr/bin/env bash
# iomark against fio on the same jobs, alternating them ROUNDS times in one invocation so
# both see the same machine state, then printing the ratio iomark/fio of IOPS and of CPU
# time per I/O (per round and the median).
#
#   bench/vs-fio.sh [ROUNDS] [SECONDS]        (defaults: 3 rounds, 5 s per job)
#
# Jobs:
#   null      4 KiB randread, 1 job, QD 1, no I/O at all (fio --ioengine=null vs iomark
#             --engine null), latency recorded per I/O in both; the figure is I/Os per
#             second per CPU-second (ops/s per core)
#   loop      4 KiB randread, QD 32, O_DIRECT, io_uring, on a loop device over /dev/shm
#             (needs root and losetup; skipped otherwise)
#   disk      4 KiB randread, QD 32, O_DIRECT, io_uring, on a 1 GiB file on the
#             filesystem of $IOMARK_BENCH_DIR (default: the current directory)
#   nullw4k   4 KiB writes, null engines, default data (iomark: unique data, measured)
#   nullw128k 128 KiB writes, null engines, default data
#   loopw128k 128 KiB sequential writes, QD 8, O_DIRECT, io_uring, loop device over /dev/shm
#
# JOBS="null loop" picks jobs (default: all). CPU per I/O is that of the threads doing
# the I/O: iomark's job threads (cpu.workers in its results; io_uring's kernel workers
# and the main thread are reported apart, as fio does not count them either) against
# fio's job (usr_cpu + sys_cpu). iomark's process-wide figure is printed beside it.
#
# Needs fio and python3. Run it on a quiet machine; it prints the machine it ran on.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
DIR=${IOMARK_BENCH_DIR:-$PWD}

command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "vs-fio: python3 is needed to read the JSON" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet)

TMP=$(mktemp -d)
LOOPDEV=""
cleanup() {
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null || true
  rm -rf "$TMP" /dev/shm/iomark-vsfio-$$.img "$DIR/.iomark-vsfio-$$.dat"
}
trap cleanup EXIT

# Prints "iops cpu_per_io_ns" for a result file of the given tool.
figures() {
  python3 - "$1" "$2" <<'PY'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
if tool == "iomark":
    rep = d["runs"][0]["repetitions"][0]
    ios = rep["read"]["ios"] + rep["write"]["ios"]
    iops = ios / rep["elapsed_s"]
    c = rep["cpu"]
    w = c.get("workers")
    cpu = w["user_s"] + w["sys_s"] if w else c["user_s"] + c["sys_s"]
    proc = c["user_s"] + c["sys_s"]
else:
    j = d["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    rt = j["read"]["runtime"] / 1000.0 or j["write"]["runtime"] / 1000.0
    iops = ios / rt
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * rt
    proc = cpu
print(f"{iops:.0f} {cpu * 1e9 / max(ios, 1):.1f} {proc * 1e9 / max(ios, 1):.1f}")
PY
}

# shellcheck disable=SC2086
run_iomark() { "$IOMARK" run $1 --runtime "${SECS}s" --json --quiet > "$TMP/i.json"; }
# shellcheck disable=SC2086
run_fio() { fio --name=vsfio $1 --time_based --runtime="$SECS" --output-format=json > "$TMP/f.json" 2>/dev/null; }

# run_pair NAME "iomark args" "fio args"
declare -A RATIO_IOPS RATIO_CPU
run_pair() {
  local name=$1 iargs=$2 fargs=$3 r
  printf '\n%s\n' "== $name"
  printf '%-6s %-7s %14s %14s %16s\n' round tool IOPS "CPU ns/I/O" "process ns/I/O"
  for r in $(seq 1 "$ROUNDS"); do
    # Alternate which tool goes first, so neither always runs on a warmer machine.
    if [ $((r % 2)) = 1 ]; then
      run_iomark "$iargs"; run_fio "$fargs"
    else
      run_fio "$fargs"; run_iomark "$iargs"
    fi
    read -r ii ic ip < <(figures iomark "$TMP/i.json")
    read -r fi fc fp < <(figures fio "$TMP/f.json")
    printf '%-6s %-7s %14s %14s %16s\n' "$r" iomark "$ii" "$ic" "$ip"
    printf '%-6s %-7s %14s %14s %16s\n' "$r" fio "$fi" "$fc" "$fp"
    RATIO_IOPS[$name]+="$(python3 -c "print($ii/$fi)") "
    RATIO_CPU[$name]+="$(python3 -c "print($ic/$fc if $fc else 0)") "
  done
}

median() { python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, kernel $(uname -r)"
echo "iomark: $("$IOMARK" --version), $(fio --version); $ROUNDS rounds of ${SECS}s per tool and job"

JOBS=${JOBS:-null nullw4k nullw128k loop loopw128k disk}
want() { case " $JOBS " in *" $1 "*) return 0;; esac; return 1; }

want null && run_pair null \
  "--engine null --size 1g --rw randread --bs 4k --qd 1" \
  "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=1"

want nullw4k && run_pair nullw4k \
  "--engine null --size 1g --rw write --bs 4k --qd 1" \
  "--ioengine=null --size=1g --rw=write --bs=4k --iodepth=1"
want nullw128k && run_pair nullw128k \
  "--engine null --size 1g --rw write --bs 128k --qd 1" \
  "--ioengine=null --size=1g --rw=write --bs=128k --iodepth=1"

if ! want loop && ! want loopw128k; then
  :
elif [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
  truncate -s 1G /dev/shm/iomark-vsfio-$$.img
  LOOPDEV=$(losetup --direct-io=on -f --show /dev/shm/iomark-vsfio-$$.img)
  # Fill it once so reads hit allocated shm pages, not holes.
  dd if=/dev/urandom of="$LOOPDEV" bs=1M count=1024 oflag=direct status=none
  want loop && run_pair loop \
    "--engine io_uring --rw randread --bs 4k --qd 32 --direct $LOOPDEV" \
    "--ioengine=io_uring --filename=$LOOPDEV --rw=randread --bs=4k --iodepth=32 --direct=1 --registerfiles=1 --fixedbufs=1"
  want loopw128k && run_pair loopw128k \
    "--engine io_uring --rw write --bs 128k --qd 8 --direct --allow-write-device $LOOPDEV" \
    "--ioengine=io_uring --filename=$LOOPDEV --rw=write --bs=128k --iodepth=8 --direct=1 --registerfiles=1 --fixedbufs=1"
else
  echo "== loop: skipped (needs root and losetup)"
fi

if want disk; then
  F="$DIR/.iomark-vsfio-$$.dat"
  "$IOMARK" run --rw write --bs 1m --size 1g --keep --quiet "$F" >/dev/null
  run_pair disk \
    "--engine io_uring --rw randread --bs 4k --qd 32 --direct $F" \
    "--ioengine=io_uring --filename=$F --size=1g --rw=randread --bs=4k --iodepth=32 --direct=1 --registerfiles=1 --fixedbufs=1"
fi

printf '\n%-9s %22s %26s\n' job "IOPS iomark/fio" "CPU per I/O iomark/fio"
for name in null nullw4k nullw128k loop loopw128k disk; do
  [ -n "${RATIO_IOPS[$name]:-}" ] || continue
  # shellcheck disable=SC2086
  printf '%-9s %22s %26s\n' "$name" "$(median ${RATIO_IOPS[$name]})" "$(median ${RATIO_CPU[$name]})"
done
echo "(medians over rounds; for null, IOPS of one job at QD 1 is its ops/s on one core)"
