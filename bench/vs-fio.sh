#!/usr/bin/env bash
# iomark against fio on the same jobs, alternating them ROUNDS times in one invocation so
# both see the same machine state, then printing per device a table of the ratios
# iomark/fio of IOPS and of CPU time per I/O: the median over rounds, the spread
# (lowest-highest round), in how many rounds iomark was ahead (k/n) and whether the
# rounds tell the tools apart (ahead, level, behind: a 95% interval of the ratio, see
# `spread`), then the rows where iomark is behind by that measure.
#
#   ROUNDS=5 SECS=5 bench/vs-fio.sh           (defaults: 3 rounds, 5 s per tool and job)
#   bench/vs-fio.sh [ROUNDS] [SECONDS]        (the same, as arguments)
#
# Devices (DEVICES="null loop zram disk" picks them; default all):
#   null  no I/O at all (fio --ioengine=null vs iomark --engine null); latency recorded
#         per I/O in both; at one job and QD 1 the IOPS are ops/s per core
#   loop  a 1 GiB loop device over /dev/shm with direct I/O (root, losetup)
#   zram  a private 1 GiB zram device from /sys/class/zram-control (root; removed after)
#   disk  a 1 GiB file on the filesystem of $IOMARK_BENCH_DIR (default: the current
#         directory), e.g. the root disk. Its large transfers also measure where the
#         buffers lie: iomark's (I/O buffers of 64 KiB slots and more, data pools of
#         1 MiB and more) are in 2 MiB pages, one segment per request; fio's are in
#         4 KiB pages unless --iomem=shmhuge (on the session-24 guest's virtio disk,
#         128 KiB writes at QD 8: fio 3.8-7.2k IOPS, with shmhuge 12-17k)
#
# Jobs (JOBS="rr4k-qd1 aio-rr4k-qd32" picks them; default all but rw4k-qd1-p1m). On null: null-r4k,
# null-w4k, null-w128k. On each device, O_DIRECT:
#   rr4k-qd1      4 KiB randread, QD 1, psync
#   rr4k-qd8      4 KiB randread, QD 8, io_uring
#   rr4k-qd32     4 KiB randread, QD 32, io_uring
#   rr4k-qd128    4 KiB randread, QD 128, io_uring
#   rr4k-qd32-j2  4 KiB randread, QD 32, 2 jobs, io_uring
#   rw4k-qd1      4 KiB randwrite, QD 1, psync
#   rw4k-qd1-p1m  the same with iomark's --data-pool 1m (not in the default list: asked
#                 for by name, like the pool's price at QD 1)
#   rw4k-qd32     4 KiB randwrite, QD 32, io_uring
#   w128k-qd8     128 KiB sequential write, QD 8, io_uring
#   w128k-qd8-p1m the same with iomark's --data-pool 1m: unit bytes recur every 1 MiB,
#                 as fio's reused buffers do (shows what the 16 MiB default costs where
#                 the device copies every write with the CPU: loop, zram)
#   r1m-qd8       1 MiB sequential read, QD 8, io_uring
#   mix70-qd16    70/30 randrw 4 KiB, QD 16, io_uring
#   aio-rr4k-qd1  4 KiB randread, QD 1, libaio (iomark's libaio against fio's)
#   aio-rr4k-qd32 4 KiB randread, QD 32, libaio
#   aio-rw4k-qd32 4 KiB randwrite, QD 32, libaio
#   aio-w128k-qd8 128 KiB sequential write, QD 8, libaio
#
# PIN=N pins the job threads of both tools to CPU N (iomark --cpus N, fio
# --cpus_allowed=N), so that neither gets a better placement by chance beside the kernel
# threads that complete its I/O (the loop device's worker, io_uring's); default: unpinned.
# PIN_KERNEL=1 (with PIN=N) also confines the kernel's unbound workqueues, where the loop
# device's worker runs, to CPU N (/sys/devices/virtual/workqueue/cpumask, root; the mask
# is put back at exit): submitter and device worker then share one CPU in both tools, no
# wakeup crosses CPUs, and a loop row compares the tools' code rather than where the
# scheduler happened to put three threads (session 19 in docs/PERFORMANCE.md).
#
# CPU per I/O is that of the threads doing the I/O: iomark's job threads (cpu.workers in
# its results; io_uring's kernel workers and the main thread are reported apart, as fio
# does not count them either) against fio's jobs (usr_cpu + sys_cpu, summed over jobs).
# iomark's process-wide figure is printed beside it in the per-round lines.
#
# FIO_HUGE=1 gives fio its buffers in 2 MiB pages as iomark's are (--iomem=shmhuge, with
# huge pages reserved for the run and the count put back at exit; root): where a device
# takes a physically contiguous transfer faster (a virtio disk's 128 KiB writes and 1 MiB
# reads), the rows then compare the tools' code rather than their buffers' placement.
#
# FIO_BATCH=1 runs fio under `chrt -b 0` (SCHED_BATCH, as iomark's job threads run with
# `--sched-policy batch`; neither tool sets a policy by default): give iomark
# IOMARK_ARGS="--sched-policy batch" too to compare the two under it.
#
# IOMARK_ARGS="..." adds options to every iomark run.
#
# BUSY=N runs N busy loops (sh, SCHED_OTHER, nice 0) beside every run of either tool, as
# other work on a shared machine would (BUSY=2 on 2 CPUs): how each tool's figures hold
# up when it does not have the machine to itself (session 34 in docs/PERFORMANCE.md). The
# loops run in a session of their own (setsid), as work started in another terminal
# would: with the kernel's autogroups (sched_autogroup_enabled) each session shares the
# CPUs as one, and fio's job processes make sessions of their own, so loops in this
# script's session would take their share from iomark alone (zram 4 KiB psync reads
# beside two such loops: iomark 0.75x fio's IOPS, 1.10x with autogroups off).
#
# IPIs per I/O (the machine's function-call and rescheduling interrupts over a run, per
# I/O) are printed per round and their medians per job: where the two tools' differ, the
# scheduler placed their threads differently, and on a guest of few CPUs that moves the
# IOPS of a device served by a kernel thread (loop) more than either tool does (session
# 13 in docs/PERFORMANCE.md; bench/placement.sh shows it on its own).
#
# Needs fio and python3. Run it on a quiet machine; it prints the machine it ran on.
set -euo pipefail
ROUNDS=${ROUNDS:-${1:-3}}
SECS=${SECS:-${2:-5}}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
DIR=${IOMARK_BENCH_DIR:-$PWD}
DEVICES=${DEVICES:-null loop zram disk}
PIN=${PIN:-}
PIN_KERNEL=${PIN_KERNEL:-}
PIN_IOMARK=""; PIN_FIO=""
if [ -n "$PIN" ]; then PIN_IOMARK="--cpus $PIN"; PIN_FIO="--cpus_allowed=$PIN"; fi
FIO_HUGE=${FIO_HUGE:-}
FIO_CMD=(fio)
if [ -n "${FIO_BATCH:-}" ]; then FIO_CMD=(chrt -b 0 fio); fi
HUGE_NR=/proc/sys/vm/nr_hugepages
WQ_MASK=/sys/devices/virtual/workqueue/cpumask
if [ -n "$PIN_KERNEL" ]; then
  case "$PIN" in
    ''|*[!0-9]*) echo "vs-fio: PIN_KERNEL=1 needs PIN=N, one CPU number (PIN=1 PIN_KERNEL=1)" >&2; exit 2;;
  esac
  [ -w "$WQ_MASK" ] || { echo "vs-fio: PIN_KERNEL=1 needs root and $WQ_MASK" >&2; exit 2; }
fi
JOBS=${JOBS:-null-r4k null-w4k null-w128k rr4k-qd1 rr4k-qd8 rr4k-qd32 rr4k-qd128 rr4k-qd32-j2 rw4k-qd1 rw4k-qd32 w128k-qd8 w128k-qd8-p1m r1m-qd8 mix70-qd16 aio-rr4k-qd1 aio-rr4k-qd32 aio-rw4k-qd32 aio-w128k-qd8}

command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "vs-fio: python3 is needed to read the JSON" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet)

TMP=$(mktemp -d)
LOOPDEV=""
ZRAM=""
WQ_BEFORE=""
HUGE_BEFORE=""
cleanup() {
  busy_stop 2>/dev/null || true
  [ -n "$WQ_BEFORE" ] && echo "$WQ_BEFORE" > "$WQ_MASK" 2>/dev/null || true
  [ -n "$HUGE_BEFORE" ] && echo "$HUGE_BEFORE" > "$HUGE_NR" 2>/dev/null || true
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null || true
  [ -n "$ZRAM" ] && echo "$ZRAM" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  rm -rf "$TMP" /dev/shm/iomark-vsfio-$$.img "$DIR/.iomark-vsfio-$$.dat"
}
trap cleanup EXIT
if [ -n "$FIO_HUGE" ]; then
  # 128 pages (256 MiB) hold the largest fio job here (2 jobs x QD 32 x 4 KiB, or QD 8 x
  # 1 MiB: a few pages each) many times over.
  HUGE_BEFORE=$(cat "$HUGE_NR")
  echo $((HUGE_BEFORE + 128)) > "$HUGE_NR" || { echo "vs-fio: cannot reserve huge pages for FIO_HUGE (root)" >&2; exit 1; }
  PIN_FIO="$PIN_FIO --iomem=shmhuge"
fi
if [ -n "$PIN_KERNEL" ]; then
  WQ_BEFORE=$(cat "$WQ_MASK")
  printf '%x\n' $((1 << PIN)) > "$WQ_MASK" || { echo "vs-fio: cannot confine the workqueues to CPU $PIN" >&2; exit 1; }
fi

# Prints "iops cpu_per_io_ns process_cpu_per_io_ns ipis_per_io" for a result file of the
# given tool: the job threads' CPU, and the whole process's (iomark's only: fio's JSON
# has its job threads' alone, so fio's column says "-").
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
    ios, cpu, rt = 0, 0.0, 0.0
    for j in d["jobs"]:
        ios += j["read"]["total_ios"] + j["write"]["total_ios"]
        r = max(j["read"]["runtime"], j["write"]["runtime"]) / 1000.0
        rt = max(rt, r)
        cpu += (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * r
    iops = ios / rt
    proc = None
ipis = int(open(path + ".ipis").read())
proc = "-" if proc is None else f"{proc * 1e9 / max(ios, 1):.1f}"
print(f"{iops:.0f} {cpu * 1e9 / max(ios, 1):.1f} {proc} {ipis / max(ios, 1):.3f}")
PY
}

# The machine's function-call and rescheduling interrupts so far (on every CPU): the
# wakeups and completions sent from one CPU to another.
ipis() { awk '/^ *(CAL|RES):/{for(i=2;i<=NF&&$i~/^[0-9]+$/;i++) s+=$i} END{print s+0}' /proc/interrupts; }

# BUSY=N: N busy loops started (busy_start) and stopped (busy_stop) around each run.
BUSY_PIDS=()
busy_start() {
  BUSY_PIDS=()
  for _ in $(seq 1 "${BUSY:-0}"); do
    setsid sh -c 'while :; do :; done' &
    BUSY_PIDS+=($!)
  done
}
busy_stop() {
  [ ${#BUSY_PIDS[@]} -eq 0 ] && return 0
  kill "${BUSY_PIDS[@]}" 2>/dev/null || true
  wait "${BUSY_PIDS[@]}" 2>/dev/null || true
  BUSY_PIDS=()
}

# shellcheck disable=SC2086
run_iomark() {
  local a; a=$(ipis)
  busy_start
  "$IOMARK" run $1 $PIN_IOMARK ${IOMARK_ARGS:-} --runtime "${SECS}s" --json --quiet > "$TMP/i.json"
  busy_stop
  echo $(($(ipis) - a)) > "$TMP/i.json.ipis"
}
# shellcheck disable=SC2086
run_fio() {
  local a; a=$(ipis)
  busy_start
  "${FIO_CMD[@]}" --name=vsfio $1 $PIN_FIO --time_based --runtime="$SECS" --output-format=json > "$TMP/f.json" 2>/dev/null
  busy_stop
  echo $(($(ipis) - a)) > "$TMP/f.json.ipis"
}

# run_pair DEVICE JOB "iomark args" "fio args"
declare -A RATIO_IOPS RATIO_CPU IPIS_IOMARK IPIS_FIO
ORDER=()
run_pair() {
  local dev=$1 name=$2 iargs=$3 fargs=$4 r key="$1 $2"
  want "$name" || return 0
  ORDER+=("$key")
  printf '\n%s\n' "== $dev: $name"
  printf '%-6s %-7s %14s %14s %16s %10s\n' round tool IOPS "CPU ns/I/O" "process ns/I/O" "IPIs/I/O"
  for r in $(seq 1 "$ROUNDS"); do
    # Alternate which tool goes first, so neither always runs on a warmer machine.
    if [ $((r % 2)) = 1 ]; then
      run_iomark "$iargs"; run_fio "$fargs"
    else
      run_fio "$fargs"; run_iomark "$iargs"
    fi
    read -r ii ic ip iq < <(figures iomark "$TMP/i.json")
    read -r fi fc fp fq < <(figures fio "$TMP/f.json")
    printf '%-6s %-7s %14s %14s %16s %10s\n' "$r" iomark "$ii" "$ic" "$ip" "$iq"
    printf '%-6s %-7s %14s %14s %16s %10s\n' "$r" fio "$fi" "$fc" "$fp" "$fq"
    IPIS_IOMARK[$key]+="$iq "
    IPIS_FIO[$key]+="$fq "
    RATIO_IOPS[$key]+="$(python3 -c "print($ii/$fi if $fi else 0)") "
    RATIO_CPU[$key]+="$(python3 -c "print($ic/$fc if $fc else 0)") "
  done
}

median() { python3 -c "import statistics, sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.3f}')" "$@"; }

# "median (lowest-highest) k/n verdict" of the ratios given: k the rounds in iomark's
# favour (above 1 with "above", below 1 with "below"). With rounds this noisy, a median
# under 1 whose rounds are mostly in iomark's favour, or the reverse, is not a
# difference: the verdict says which are. From the rounds' log ratios, a 95% t interval
# of the geometric mean ratio (the rounds are pairs run back to back): "ahead" or
# "behind" when the whole interval lies on that side of 1, "level" when it takes in 1
# (the tools could not be told apart in these rounds); fewer than 3 rounds: "-".
spread() {
  python3 -c "
import math, statistics, sys
side, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
k = sum(1 for x in v if (x > 1 if side == 'above' else x < 1))
logs = [math.log(x) for x in v if x > 0]
verdict = '-'
if len(logs) >= 3 and len(logs) == len(v):
    t = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
         2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
    df = len(logs) - 1
    h = (t[df - 1] if df <= len(t) else 1.96) * statistics.stdev(logs) / math.sqrt(len(logs))
    lo, hi = math.exp(statistics.mean(logs) - h), math.exp(statistics.mean(logs) + h)
    good, bad = (lo > 1, hi < 1) if side == 'above' else (hi < 1, lo > 1)
    verdict = 'ahead' if good else 'behind' if bad else 'level'
print(f'{statistics.median(v):.3f} ({min(v):.2f}-{max(v):.2f}) {k}/{len(v)} {verdict}')" "$@"
}

want() { case " $JOBS " in *" $1 "*) return 0;; esac; return 1; }
has_device() { case " $DEVICES " in *" $1 "*) return 0;; esac; return 1; }

# device_jobs DEVICE TARGET "extra iomark args" "extra fio args"
device_jobs() {
  local d=$1 t=$2 ix=$3 fx=$4
  local uring="--ioengine=io_uring --registerfiles=1 --fixedbufs=1"
  local f="--filename=$t --direct=1 $fx"
  local i="--direct $ix $t"
  run_pair "$d" rr4k-qd1 "--engine psync --rw randread --bs 4k --qd 1 $i" \
    "$f --ioengine=psync --rw=randread --bs=4k --iodepth=1"
  for qd in 8 32 128; do
    run_pair "$d" "rr4k-qd$qd" "--engine io_uring --rw randread --bs 4k --qd $qd $i" \
      "$f $uring --rw=randread --bs=4k --iodepth=$qd"
  done
  run_pair "$d" rr4k-qd32-j2 "--engine io_uring --rw randread --bs 4k --qd 32 --jobs 2 $i" \
    "$f $uring --rw=randread --bs=4k --iodepth=32 --numjobs=2"
  local w="--allow-write-device"
  # The disk file is iomark's, but fio has written it since: overwriting it is meant.
  [ "$d" = disk ] && w="--overwrite"
  run_pair "$d" rw4k-qd1 "--engine psync --rw randwrite --bs 4k --qd 1 $w $i" \
    "$f --ioengine=psync --rw=randwrite --bs=4k --iodepth=1"
  run_pair "$d" rw4k-qd1-p1m "--engine psync --rw randwrite --bs 4k --qd 1 --data-pool 1m $w $i" \
    "$f --ioengine=psync --rw=randwrite --bs=4k --iodepth=1"
  run_pair "$d" rw4k-qd32 "--engine io_uring --rw randwrite --bs 4k --qd 32 $w $i" \
    "$f $uring --rw=randwrite --bs=4k --iodepth=32"
  run_pair "$d" w128k-qd8 "--engine io_uring --rw write --bs 128k --qd 8 $w $i" \
    "$f $uring --rw=write --bs=128k --iodepth=8"
  run_pair "$d" w128k-qd8-p1m "--engine io_uring --rw write --bs 128k --qd 8 --data-pool 1m $w $i" \
    "$f $uring --rw=write --bs=128k --iodepth=8"
  run_pair "$d" r1m-qd8 "--engine io_uring --rw read --bs 1m --qd 8 $i" \
    "$f $uring --rw=read --bs=1m --iodepth=8"
  run_pair "$d" mix70-qd16 "--engine io_uring --rw randrw --rwmixread 70 --bs 4k --qd 16 $w $i" \
    "$f $uring --rw=randrw --rwmixread=70 --bs=4k --iodepth=16"
  run_pair "$d" aio-rr4k-qd1 "--engine libaio --rw randread --bs 4k --qd 1 $i" \
    "$f --ioengine=libaio --rw=randread --bs=4k --iodepth=1"
  run_pair "$d" aio-rr4k-qd32 "--engine libaio --rw randread --bs 4k --qd 32 $i" \
    "$f --ioengine=libaio --rw=randread --bs=4k --iodepth=32"
  run_pair "$d" aio-rw4k-qd32 "--engine libaio --rw randwrite --bs 4k --qd 32 $w $i" \
    "$f --ioengine=libaio --rw=randwrite --bs=4k --iodepth=32"
  run_pair "$d" aio-w128k-qd8 "--engine libaio --rw write --bs 128k --qd 8 $w $i" \
    "$f --ioengine=libaio --rw=write --bs=128k --iodepth=8"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, kernel $(uname -r)"
echo "iomark: $("$IOMARK" --version), $(fio --version); $ROUNDS rounds of ${SECS}s per tool and job${PIN:+; job threads pinned to CPU $PIN}${PIN_KERNEL:+, unbound kernel workqueues too}${FIO_BATCH:+; fio under chrt -b 0 (SCHED_BATCH)}"

if has_device null; then
  run_pair null null-r4k "--engine null --size 1g --rw randread --bs 4k --qd 1" \
    "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=1"
  run_pair null null-w4k "--engine null --size 1g --rw write --bs 4k --qd 1" \
    "--ioengine=null --size=1g --rw=write --bs=4k --iodepth=1"
  run_pair null null-w128k "--engine null --size 1g --rw write --bs 128k --qd 1" \
    "--ioengine=null --size=1g --rw=write --bs=128k --iodepth=1"
fi

root=$([ "$(id -u)" = 0 ] && echo yes || echo no)
if has_device loop; then
  if [ "$root" = yes ] && command -v losetup >/dev/null; then
    truncate -s 1G /dev/shm/iomark-vsfio-$$.img
    LOOPDEV=$(losetup --direct-io=on -f --show /dev/shm/iomark-vsfio-$$.img)
    # Fill it once so reads hit allocated shm pages, not holes.
    dd if=/dev/urandom of="$LOOPDEV" bs=1M count=1024 oflag=direct status=none
    device_jobs loop "$LOOPDEV" "" ""
  else
    echo "== loop: skipped (needs root and losetup)"
  fi
fi

if has_device zram; then
  if [ "$root" = yes ] && [ -w /sys/class/zram-control/hot_add ]; then
    n=$(cat /sys/class/zram-control/hot_add)
    ZRAM=$n
    echo 1G > "/sys/block/zram$n/disksize"
    dd if=/dev/urandom of="/dev/zram$n" bs=1M count=1024 oflag=direct status=none
    device_jobs zram "/dev/zram$n" "" ""
  else
    echo "== zram: skipped (needs root and the zram module: modprobe zram)"
  fi
fi

if has_device disk; then
  F="$DIR/.iomark-vsfio-$$.dat"
  "$IOMARK" run --rw write --bs 1m --size 1g --keep --quiet "$F" >/dev/null
  device_jobs disk "$F" "" "--size=1g"
fi

BEHIND_IOPS=() BEHIND_CPU=()
for dev in null loop zram disk; do
  printed=no
  for key in "${ORDER[@]}"; do
    [ "${key%% *}" = "$dev" ] || continue
    if [ $printed = no ]; then
      printf '\n%s\n%-14s %35s %35s %18s\n' "$dev: iomark/fio, median (lowest-highest) over $ROUNDS rounds" \
        job "IOPS" "CPU per I/O (workers)" "IPIs/I/O i / f"
      printed=yes
    fi
    # shellcheck disable=SC2086
    iops=$(spread above ${RATIO_IOPS[$key]})
    # shellcheck disable=SC2086
    cpu=$(spread below ${RATIO_CPU[$key]})
    [ "${iops##* }" = behind ] && BEHIND_IOPS+=("$key")
    [ "${cpu##* }" = behind ] && BEHIND_CPU+=("$key")
    printf '%-14s %35s %35s %18s\n' "${key#* }" "$iops" "$cpu" \
      "$(median ${IPIS_IOMARK[$key]}) / $(median ${IPIS_FIO[$key]})"
  done
done
echo
echo "behind fio (95% interval of the ratio wholly on fio's side): IOPS: ${BEHIND_IOPS[*]:-none}; CPU per I/O: ${BEHIND_CPU[*]:-none}"
echo "(IOPS above 1 and CPU per I/O below 1 favour iomark; k/n: the rounds that did; ahead/level/behind: whether a 95% t interval of the rounds' geometric mean ratio lies above, across or below 1 (- under 3 rounds); for null at QD 1, IOPS is ops/s on one core)"
echo "(IPIs/I/O: the machine's function-call and rescheduling interrupts per I/O, medians for iomark / fio: the wakeups sent to another CPU. On a guest of few CPUs a device worked by a kernel thread (loop) runs fastest when the submitter, that thread and the completions share one CPU; rounds whose tools differ here measured the scheduler's placement, not the tools: bench/placement.sh; PIN=1 PIN_KERNEL=1 puts the submitter and the loop device's worker on one CPU in both tools)"
