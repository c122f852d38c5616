#!/usr/bin/env bash
# The same fio job files under `iomark fio` and under fio, alternating the two tools
# ROUNDS times in one invocation so both see the same machine state; prints each job's
# IOPS under both tools per round and the median ratio iomark/fio.
#
#   bench/fio-jobs.sh [ROUNDS] [SECONDS]        (defaults: 3 rounds, 3 s per job;
#                                               all 27 jobs: about 20 minutes)
#
# Job files (written to a temporary directory; the files they use go to
# $IOMARK_BENCH_DIR, default the current directory, 64 MiB each, removed afterwards):
#   sync.fio   4 KiB randread, psync, buffered (fio's defaults), 1 job
#   uring.fio  4 KiB randread, io_uring, iodepth 16, direct
#   aio.fio    128 KiB sequential write, libaio, iodepth 8, direct
#   mix.fio    4 KiB randrw 70/30, psync, direct, numjobs 2, group_reporting
# and, with libaio at iodepth 8, direct:
#   bssplit.fio  random reads of 4k/50:64k/30:256k/20 (norandommap)
#   rate.fio     4 KiB random reads capped at rate_iops=2000 (psync)
#   think.fio    4 KiB random reads, thinktime=500 (us) after every 4 (thinktime_blocks)
#   zipf.fio     4 KiB random reads, random_distribution=zipf:1.2
#   files.fio    4 KiB random writes over nrfiles=4 files, file_service_type=random
#   verify.fio   256 MiB of 16 KiB writes with verify=crc32c (size-based; the write
#                phase's IOPS: fio's read figures are its verify pass)
#   group.fio    4 KiB random reads, numjobs=4 with group_reporting
#   stonewall.fio  4 KiB random reads, then (stonewall) 4 KiB random writes
#   bsrange.fio  random reads of 4k-64k (bsrange, norandommap)
#   offset.fio   4 KiB random reads over 32 MiB from offset=16m
#   pareto.fio   4 KiB random reads, random_distribution=pareto:0.9
#   normal.fio   4 KiB random reads, random_distribution=normal:10
#   ratebw.fio   4 KiB random reads capped at rate=8m (psync)
#   fsync.fio    4 KiB random writes, fsync=32 (psync)
#   endfsync.fio 64 KiB sequential writes, end_fsync=1
#   compress.fio 64 KiB sequential writes, buffer_compress_percentage=50
#   dedupe.fio   64 KiB sequential writes, dedupe_percentage=50
#   refill.fio   4 KiB random writes, refill_buffers
#   zero.fio     128 KiB sequential writes, zero_buffers
#   pattern.fio  64 KiB sequential writes, buffer_pattern=0xdeadbeef
#   hole.fio     4 KiB sequential reads with a 16 KiB hole after each (rw=read:16k)
#   rwmix.fio    4 KiB randrw with rwmixwrite=20, iodepth 16
#   syncio.fio   4 KiB random reads, ioengine=sync, direct
#
# Every job is time based with a 1 s ramp (the think job without, see below).
# JOBS="sync uring" runs only those. Each round prints both tools' IOPS and CPU time per
# I/O; DEVSTATS=1 adds what each asked of the block device under the files
# (/sys/class/block/DEV/stat: requests, sectors per request, merges). Needs fio and
# python3. Run it on a quiet machine; it prints the machine it ran on.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
DIR=$(cd "${IOMARK_BENCH_DIR:-$PWD}" && pwd)

command -v fio >/dev/null || { echo "fio-jobs: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "fio-jobs: python3 is needed to read the JSON" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet)

TMP=$(mktemp -d)
cleanup() { rm -rf "$TMP" "$DIR"/fiojobs-*; }
trap cleanup EXIT

common="directory=$DIR
size=64m
runtime=$SECS
time_based
ramp_time=1"
printf '[global]\n%s\n[fiojobs-sync]\nrw=randread\nbs=4k\n' "$common" >"$TMP/sync.fio"
printf '[global]\n%s\n[fiojobs-uring]\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=16\ndirect=1\n' "$common" >"$TMP/uring.fio"
printf '[global]\n%s\n[fiojobs-aio]\nrw=write\nbs=128k\nioengine=libaio\niodepth=8\ndirect=1\n' "$common" >"$TMP/aio.fio"
printf '[global]\n%s\n[fiojobs-mix]\nrw=randrw\nrwmixread=70\nbs=4k\ndirect=1\nnumjobs=2\nfilename=fiojobs-mix.0.0\ngroup_reporting\n' "$common" >"$TMP/mix.fio"
direct="ioengine=libaio
iodepth=8
direct=1"
printf '[global]\n%s\n%s\n[fiojobs-bssplit]\nrw=randread\nbssplit=4k/50:64k/30:256k/20\nnorandommap\n' "$common" "$direct" >"$TMP/bssplit.fio"
printf '[global]\n%s\n[fiojobs-rate]\nrw=randread\nbs=4k\ndirect=1\nrate_iops=2000\n' "$common" >"$TMP/rate.fio"
# No ramp for the think job: fio before 3.35 forgets its think-time count at the end of a
# ramp and issues without pauses until the count catches up (fio commit cfc4ad2e).
printf '[global]\n%s\n%s\n[fiojobs-think]\nrw=randread\nbs=4k\nthinktime=500\nthinktime_blocks=4\nramp_time=0\n' "$common" "$direct" >"$TMP/think.fio"
printf '[global]\n%s\n%s\n[fiojobs-zipf]\nrw=randread\nbs=4k\nrandom_distribution=zipf:1.2\n' "$common" "$direct" >"$TMP/zipf.fio"
printf '[global]\n%s\n%s\n[fiojobs-files]\nrw=randwrite\nbs=4k\nnrfiles=4\nfile_service_type=random\n' "$common" "$direct" >"$TMP/files.fio"
printf '[global]\ndirectory=%s\nsize=256m\n%s\n[fiojobs-verify]\nrw=write\nbs=16k\nverify=crc32c\n' "$DIR" "$direct" >"$TMP/verify.fio"
printf '[global]\n%s\n%s\nbs=4k\nnumjobs=4\ngroup_reporting\n[fiojobs-group]\nrw=randread\n' "$common" "$direct" >"$TMP/group.fio"
printf '[global]\n%s\n%s\nbs=4k\n[fiojobs-first]\nrw=randread\n[fiojobs-second]\nstonewall\nrw=randwrite\n' "$common" "$direct" >"$TMP/stonewall.fio"
# One more job file per option of the issue's list: NAME and the job's own lines.
more() { printf '[global]\n%s\n%s\n[fiojobs-%s]\n%b\n' "$common" "$direct" "$1" "$2" >"$TMP/$1.fio"; }
more bsrange 'rw=randread\nbsrange=4k-64k\nnorandommap'
more offset 'rw=randread\nbs=4k\noffset=16m\nsize=32m'
more pareto 'rw=randread\nbs=4k\nrandom_distribution=pareto:0.9'
more normal 'rw=randread\nbs=4k\nrandom_distribution=normal:10'
more ratebw 'rw=randread\nbs=4k\nioengine=psync\niodepth=1\nrate=8m'
more fsync 'rw=randwrite\nbs=4k\nioengine=psync\niodepth=1\nfsync=32'
more endfsync 'rw=write\nbs=64k\nend_fsync=1'
more compress 'rw=write\nbs=64k\nbuffer_compress_percentage=50'
more dedupe 'rw=write\nbs=64k\ndedupe_percentage=50'
more refill 'rw=randwrite\nbs=4k\nrefill_buffers'
more zero 'rw=write\nbs=128k\nzero_buffers'
more pattern 'rw=write\nbs=64k\nbuffer_pattern=0xdeadbeef'
more hole 'rw=read:16k\nbs=4k'
more rwmix 'rw=randrw\nrwmixwrite=20\nbs=4k\niodepth=16'
more syncio 'rw=randread\nbs=4k\nioengine=sync\niodepth=1'

# IOPS (reads + writes) of the jobs in a result file, and CPU microseconds per I/O
# (iomark: each job's threads over the measured window; fio: each job's usr+sys share of
# its runtime, ramp included).
iops() {
  python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
tool, path, job = sys.argv[1], sys.argv[2], sys.argv[3]
# A verify job: the write phase (fio's read figures are its verify pass).
dirs = ["write"] if job == "verify" else ["read", "write"]
text = open(path).read()
d = json.loads(text[text.index("{"):])
if tool == "iomark":
    reps = [r["repetitions"][0] for r in d["runs"] if r.get("repetitions")]
    iops = sum(r[k]["iops"] for r in reps for k in dirs)
    ios = sum(r[k]["ios"] for r in reps for k in dirs)
    # Each run's own threads (the process's CPU is its group's).
    cpu = sum(r["cpu"]["workers"]["user_s"] + r["cpu"]["workers"]["sys_s"] for r in reps)
else:
    jobs = d["jobs"]
    iops = sum(j[k]["iops"] for j in jobs for k in dirs)
    ios = sum(j[k]["total_ios"] for j in jobs for k in dirs)
    cpu = sum((j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000 for j in jobs)
print(iops, cpu * 1e6 / max(ios, 1))
PY
}

# The block device under $DIR and its counters (reads, read merges, read sectors, writes,
# write merges, write sectors), to show what each tool asked of the device.
DEV=$(basename "$(df --output=source "$DIR" | tail -1)")
STAT=/sys/class/block/$DEV/stat
devstat() { [ -r "$STAT" ] && awk '{print $1, $2, $3, $5, $6, $7}' "$STAT" || echo "0 0 0 0 0 0"; }
devdelta() {
  python3 -c "
a=list(map(int,'$1'.split())); b=list(map(int,'$2'.split())); r,rm,rs,w,wm,ws=[y-x for x,y in zip(a,b)]
print(f'{r} reads ({rs/max(r,1):.1f} sectors, {rm} merged), {w} writes ({ws/max(w,1):.1f} sectors, {wm} merged)')"
}

echo "machine: $(uname -r), $(nproc) CPUs, files in $DIR ($(df -T "$DIR" | awk 'NR==2 {print $2}'))"
echo "iomark: $("$IOMARK" --version), $(fio --version)"
ALL="sync uring aio mix bssplit rate think zipf files verify group stonewall bsrange offset pareto normal ratebw fsync endfsync compress dedupe refill zero pattern hole rwmix syncio"
for job in ${JOBS:-$ALL}; do
  ratios=()
  for round in $(seq 1 "$ROUNDS"); do
    s0=$(devstat)
    "$IOMARK" fio "$TMP/$job.fio" --quiet --json >"$TMP/$job-iomark.json"
    s1=$(devstat)
    # In $TMP: a verify job leaves its verify state file in the current directory.
    (cd "$TMP" && fio --output-format=json "$TMP/$job.fio" >"$TMP/$job-fio.json")
    s2=$(devstat)
    rm -f "$DIR"/fiojobs-*
    read -r a acpu < <(iops iomark "$TMP/$job-iomark.json" "$job")
    read -r b bcpu < <(iops fio "$TMP/$job-fio.json" "$job")
    r=$(python3 -c "print(f'{$a / $b:.3f}')")
    ratios+=("$r")
    printf '%-8s round %d: iomark %10.0f IOPS %6.1f us CPU/IO  fio %10.0f IOPS %6.1f us CPU/IO  ratio %s\n' "$job" "$round" "$a" "$acpu" "$b" "$bcpu" "$r"
    if [ -n "${DEVSTATS:-}" ]; then
      echo "    $DEV under iomark: $(devdelta "$s0" "$s1")"
      echo "    $DEV under fio:    $(devdelta "$s1" "$s2")"
    fi
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c "import sys; v=[float(x) for x in sys.stdin]; print(v[len(v)//2])")
  echo "$job: median IOPS ratio iomark/fio $median"
done
