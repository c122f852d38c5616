#!/usr/bin/env bash
# 4 KiB random reads through io_uring on a loop device over /dev/shm, at QD 1 and 8, by
# three programs alternated ROUNDS times: fio, iomark, and the least program that reads
# this way (examples/uring_reads.rs: no statistics, no accounting). Where iomark and the
# least program agree and fio is ahead, the difference is not in iomark's code but in
# where the scheduler puts the submitting thread, the loop device's worker and the
# completions (see docs/PERFORMANCE.md, session 13). PIN=N runs all three on CPU N.
#
#   ROUNDS=3 SECS=3 bench/placement.sh
#
# Prints per round and program the IOPS and the mean latency (µs), and the machine's
# function-call and rescheduling interrupts per I/O (the wakeups sent to another CPU).
# Needs root (losetup), fio and python3.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-3}
PIN=${PIN:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
(cd "$HERE" && cargo build --release --quiet && cargo build --release --quiet --example uring_reads)
IOMARK=$HERE/target/release/iomark
LEAST=$HERE/target/release/examples/uring_reads
command -v fio >/dev/null || { echo "placement: fio is not installed (apt-get install fio)" >&2; exit 2; }
IMG=/dev/shm/iomark-placement-$$.img
LOOPDEV=""
TMP=$(mktemp -d)
cleanup() {
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null || true
  rm -rf "$TMP" "$IMG"
}
trap cleanup EXIT
truncate -s 1G "$IMG"
LOOPDEV=$(losetup --direct-io=on -f --show "$IMG")
dd if=/dev/urandom of="$LOOPDEV" bs=1M count=1024 oflag=direct status=none
TASKSET=()
[ -n "$PIN" ] && TASKSET=(taskset -c "$PIN")

ipis() { awk '/^ *(CAL|RES):/{for(i=2;i<=NF&&$i~/^[0-9]+$/;i++) s+=$i} END{print s}' /proc/interrupts; }
# one PROGRAM QD: prints "iops mean_us ipis_per_io"
one() {
  local prog=$1 qd=$2 a b
  a=$(ipis)
  case $prog in
    fio)
      "${TASKSET[@]}" fio --name=p --filename="$LOOPDEV" --direct=1 --ioengine=io_uring \
        --registerfiles=1 --fixedbufs=1 --rw=randread --bs=4k --iodepth="$qd" \
        --time_based --runtime="$SECS" --output-format=json > "$TMP/o.json" 2>/dev/null
      b=$(ipis)
      python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['jobs'][0]['read']; n=r['total_ios']; print(f\"{r['iops']:.0f} {r['lat_ns']['mean']/1000:.2f} {($b-$a)/max(n,1):.3f}\")" "$TMP/o.json" ;;
    iomark)
      "${TASKSET[@]}" "$IOMARK" run --engine io_uring --rw randread --bs 4k --qd "$qd" --direct \
        --runtime "${SECS}s" --quiet --json "$LOOPDEV" > "$TMP/o.json"
      b=$(ipis)
      python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]['repetitions'][0]['read']; n=r['ios']; print(f\"{r['iops']:.0f} {r['lat_ns']['mean']/1000:.2f} {($b-$a)/max(n,1):.3f}\")" "$TMP/o.json" ;;
    least)
      "${TASKSET[@]}" "$LEAST" "$LOOPDEV" "$qd" "$SECS" > "$TMP/o.txt"
      b=$(ipis)
      python3 -c "import sys; w=open(sys.argv[1]).read().split(); n=int(w[1]); print(f\"{float(w[3]):.0f} {float(w[5]):.2f} {($b-$a)/max(n,1):.3f}\")" "$TMP/o.txt" ;;
  esac
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, kernel $(uname -r), cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)${PIN:+, pinned to CPU $PIN}"
printf "%-5s %-4s %-7s %10s %9s %9s\n" round qd program IOPS "mean µs" "IPIs/I/O"
for r in $(seq 1 "$ROUNDS"); do
  for qd in 1 8; do
    for p in fio iomark least; do
      read -r iops lat ipi < <(one $p "$qd")
      printf "%-5s %-4s %-7s %10s %9s %9s\n" "$r" "$qd" "$p" "$iops" "$lat" "$ipi"
    done
  done
done
