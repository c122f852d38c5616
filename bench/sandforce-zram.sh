#!/usr/bin/env bash
# The classic SandForce study on a device that compresses in real time: a private zram
# device (lz4). For each compressibility level (98, 50, 2 %), fill the device once with
# data of that level, then run sequential write, sequential read, random write and random
# read at 4 KiB, a few repetitions each, and print IOPS mean ± stddev per level and test,
# plus zram's own stored/original ratio (mm_stat) after each write pass next to iomark's
# measured lz4 figure.
#
#   bench/sandforce-zram.sh [REPEAT] [SECONDS]      (defaults: 3 repetitions of 3 s)
#
# Needs root and zram (/sys/class/zram-control). Never touches zram0: it adds its own
# device and removes it at the end, even on failure. Set IOMARK_ENGINE_ARGS to change the
# engine (default: psync with 2 jobs; io_uring punts to worker threads on zram, because
# zram does not support non-blocking submission).
set -euo pipefail
REPEAT=${1:-3}
SECS=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
ENGINE_ARGS=${IOMARK_ENGINE_ARGS:---engine psync --jobs 2}
SIZE=${IOMARK_ZRAM_SIZE:-512M}

[ "$(id -u)" = 0 ] || { echo "sandforce-zram: needs root (zram)" >&2; exit 2; }
[ -e /sys/class/zram-control/hot_add ] || { echo "sandforce-zram: no zram here (modprobe zram)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "sandforce-zram: needs python3" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet)

TMP=$(mktemp -d)
ID=""
cleanup() {
  if [ -n "$ID" ]; then
    echo 1 > /sys/block/zram$ID/reset 2>/dev/null || true
    echo "$ID" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

new_zram() {
  if [ -n "$ID" ]; then
    echo 1 > /sys/block/zram$ID/reset
  else
    ID=$(cat /sys/class/zram-control/hot_add)
    [ "$ID" != 0 ] || { echo "got zram0; refusing to use it" >&2; exit 1; }
  fi
  echo lz4 > /sys/block/zram$ID/comp_algorithm
  echo "$SIZE" > /sys/block/zram$ID/disksize
}

mm_ratio() { awk '{ if ($1 > 0) printf "%.1f", 100 * $2 / $1; else print "-" }' /sys/block/zram$ID/mm_stat; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, kernel $(uname -r)"
echo "iomark $("$IOMARK" --version | cut -d' ' -f2), zram lz4 $SIZE, 4 KiB, $ENGINE_ARGS, $REPEAT x ${SECS}s per test"

for level in 98 50 2; do
  new_zram
  dev=/dev/zram$ID
  # Fill the whole device once, so reads find data of this level.
  # shellcheck disable=SC2086
  "$IOMARK" run --rw write --bs 128k --compress "$level" --allow-write-device --quiet $ENGINE_ARGS \
    -o "$TMP/fill-$level.json" "$dev"
  echo "$level fill $(mm_ratio)" >> "$TMP/mm.txt"
  for rw in write read randwrite randread; do
    case $rw in
      *write) data="--compress $level --allow-write-device" ;;
      *) data="" ;;
    esac
    # shellcheck disable=SC2086
    "$IOMARK" run --rw $rw --bs 4k $data --quiet $ENGINE_ARGS --runtime "${SECS}s" \
      --repeat "$REPEAT" -o "$TMP/$level-$rw.json" "$dev"
    case $rw in *write) echo "$level $rw $(mm_ratio)" >> "$TMP/mm.txt" ;; esac
  done
done

python3 - "$TMP" <<'PY'
import json, os, sys
tmp = sys.argv[1]
mm = {}
for line in open(os.path.join(tmp, "mm.txt")):
    level, rw, ratio = line.split()
    mm[(level, rw)] = ratio
names = {"write": "seq write", "read": "seq read", "randwrite": "random write", "randread": "random read"}
print()
print(f"{'level':>5}  {'test':<13} {'IOPS mean':>10} {'± stddev':>9} {'MB/s':>7}   {'zram stores':>11}  {'iomark lz4':>10}")
for level in ["98", "50", "2"]:
    for rw in ["write", "read", "randwrite", "randread"]:
        d = json.load(open(os.path.join(tmp, f"{level}-{rw}.json")))
        run = d["runs"][0]
        side = "write" if "write" in rw else "read"
        s = run["summary"][side]
        zram = lz4 = ""
        if side == "write":
            zram = mm.get((level, rw), "-") + "%"
            meas = [r["data"]["lz4_pct"] for r in run["repetitions"] if r.get("data")]
            lz4 = f"{sum(meas) / len(meas):.1f}%" if meas else "-"
        print(f"{level + '%':>5}  {names[rw]:<13} {s['iops']['mean']:>10.0f} {s['iops']['stddev']:>9.0f} "
              f"{s['bw_bytes']['mean'] / 1e6:>7.1f}   {zram:>11}  {lz4:>10}")
    print()
print("zram stores: compressed/original bytes from /sys/block/zramN/mm_stat after the pass;")
print("iomark lz4: space lz4 saved on the data iomark wrote (so stores ≈ 100 − lz4).")
PY
