#!/usr/bin/env bash
# Scaling over 1..4 targets on one host, two ways: one iomark process with N targets
# (`iomark run T1 … TN`) and N MPI ranks with a target each (`mpirun -np N iomark run
# DIR/dev{rank}`), on loop devices over /dev/shm (direct I/O) and on private zram devices
# (lz4). Prints the aggregate IOPS, the slowest and fastest target or rank, and the
# aggregate p99 for each N.
#
#   bench/scale-out.sh [SECONDS] [RW] [BS]       (defaults: 3 s of randread at 4k)
#
# Needs root, losetup, zram, mpirun (openmpi-bin) and python3, and an iomark built with
# `cargo build --release --features mpi`. Removes every device and file it makes, even on
# failure. Never touches zram0.
set -euo pipefail
SECS=${1:-3}
RW=${2:-randread}
BS=${3:-4k}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

[ "$(id -u)" = 0 ] || { echo "scale-out: needs root" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "scale-out: needs mpirun (openmpi-bin)" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet --features mpi)

TMP=$(mktemp -d)
LOOPS=()
ZRAMS=()
cleanup() {
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  for z in "${ZRAMS[@]}"; do
    echo 1 > "/sys/block/zram$z/reset" 2>/dev/null || true
    echo "$z" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  done
  rm -f /dev/shm/iomark-scale-out-*
  rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/loop" "$TMP/zram"
for i in 0 1 2 3; do
  f=/dev/shm/iomark-scale-out-$$-$i
  truncate -s 256M "$f"
  l=$(losetup --direct-io=on -f --show "$f")
  LOOPS+=("$l")
  ln -s "$l" "$TMP/loop/dev$i"
  z=$(cat /sys/class/zram-control/hot_add)
  ZRAMS+=("$z")
  echo lz4 > "/sys/block/zram$z/comp_algorithm"
  echo 256M > "/sys/block/zram$z/disksize"
  ln -s "/dev/zram$z" "$TMP/zram/dev$i"
done
# Fill the zram devices so reads read stored data, not zero pages.
for z in "${ZRAMS[@]}"; do
  "$IOMARK" run --rw write --bs 1m --engine psync --allow-write-device -q "/dev/zram$z" >/dev/null
done

summary() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
rep = r["repetitions"][0]
parts = rep.get("ranks") or rep.get("targets") or []
dirn = "read" if rep["read"]["ios"] else "write"
rates = [p[dirn]["iops"] for p in parts] or [rep[dirn]["iops"]]
print(f"{sys.argv[2]:<28} {rep[dirn]['iops']:>10.0f} {min(rates):>10.0f} {max(rates):>10.0f} {rep[dirn]['lat_ns']['p99']/1e3:>9.1f}")
EOF
}

echo "host: $(hostname), $(nproc) CPUs, $(uname -r); $RW $BS QD1 psync, ${SECS}s after 1s ramp"
printf '%-28s %10s %10s %10s %9s\n' "what" "IOPS" "min part" "max part" "p99 µs"
for kind in loop zram; do
  for n in 1 2 3 4; do
    targets=()
    for i in $(seq 0 $((n - 1))); do targets+=("$TMP/$kind/dev$i"); done
    "$IOMARK" run --rw "$RW" --bs "$BS" --engine psync --runtime "$SECS" --ramp 1s \
      --allow-write-device -q -o "$TMP/one.json" "${targets[@]}" >/dev/null
    summary "$TMP/one.json" "$kind: 1 process, $n target(s)"
    mpirun -np "$n" "$IOMARK" run --rw "$RW" --bs "$BS" --engine psync --runtime "$SECS" \
      --ramp 1s --allow-write-device -q -o "$TMP/mpi.json" "$TMP/$kind/dev{rank}" >/dev/null
    summary "$TMP/mpi.json" "$kind: $n MPI rank(s)"
  done
done
