#!/usr/bin/env bash
# The same fio job files under `iomark fio` and under fio, alternating the two tools
# ROUNDS times in one invocation so both see the same machine state; prints each job's
# IOPS under both tools per round and the median ratio iomark/fio.
#
#   bench/fio-jobs.sh [ROUNDS] [SECONDS]        (defaults: 3 rounds, 3 s per job)
#
# Job files (written to a temporary directory; the files they use go to
# $IOMARK_BENCH_DIR, default the current directory, 64 MiB each, removed afterwards):
#   sync.fio   4 KiB randread, psync, buffered (fio's defaults), 1 job
#   uring.fio  4 KiB randread, io_uring, iodepth 16, direct
#   aio.fio    128 KiB sequential write, libaio, iodepth 8, direct
#   mix.fio    4 KiB randrw 70/30, psync, direct, numjobs 2, group_reporting
#
# Every job is time based with a 1 s ramp. Needs fio and python3. Run it on a quiet
# machine; it prints the machine it ran on.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOMARK=${IOMARK:-$HERE/target/release/iomark}
DIR=${IOMARK_BENCH_DIR:-$PWD}

command -v fio >/dev/null || { echo "fio-jobs: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "fio-jobs: python3 is needed to read the JSON" >&2; exit 2; }
[ -x "$IOMARK" ] || (cd "$HERE" && cargo build --release --quiet)

TMP=$(mktemp -d)
cleanup() { rm -rf "$TMP" "$DIR"/fiojobs-*.0.0 "$DIR"/fiojobs-*.1.0; }
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

# IOPS (reads + writes) of the one job in a result file.
iops() {
  python3 - "$1" "$2" <<'PY'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
text = open(path).read()
d = json.loads(text[text.index("{"):])
if tool == "iomark":
    rep = d["runs"][0]["repetitions"][0]
    print(rep["read"]["iops"] + rep["write"]["iops"])
else:
    print(sum(j["read"]["iops"] + j["write"]["iops"] for j in d["jobs"]))
PY
}

echo "machine: $(uname -r), $(nproc) CPUs, files in $DIR ($(df -T "$DIR" | awk 'NR==2 {print $2}'))"
echo "iomark: $("$IOMARK" --version), $(fio --version)"
for job in ${JOBS:-sync uring aio mix}; do
  ratios=()
  for round in $(seq 1 "$ROUNDS"); do
    "$IOMARK" fio "$TMP/$job.fio" --quiet --json >"$TMP/$job-iomark.json"
    fio --output-format=json "$TMP/$job.fio" >"$TMP/$job-fio.json"
    rm -f "$DIR"/fiojobs-*.0.0 "$DIR"/fiojobs-*.1.0
    a=$(iops iomark "$TMP/$job-iomark.json")
    b=$(iops fio "$TMP/$job-fio.json")
    r=$(python3 -c "print(f'{$a / $b:.3f}')")
    ratios+=("$r")
    printf '%-6s round %d: iomark %10.0f IOPS  fio %10.0f IOPS  ratio %s\n' "$job" "$round" "$a" "$b" "$r"
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c "import sys; v=[float(x) for x in sys.stdin]; print(v[len(v)//2])")
  echo "$job: median IOPS ratio iomark/fio $median"
done
