#!/usr/bin/env bash
# Instructions per I/O of iomark's job thread on the null engine, counted by valgrind's
# callgrind: the same count for the same binary and job whatever else the machine does,
# so that two builds can be compared on a noisy machine where timing cannot
# (bench/ab.sh's spreads reach ±30% on a shared guest). Each binary runs the job twice,
# over IO_A and IO_B bytes (--io-size, one pass, no runtime), and the difference of the
# busiest thread's counts over the difference of its I/Os is what a further I/O costs:
# the set-up (pool, threads, the sampler's first allowance) cancels out.
#
#   bench/instructions.sh BINARY [BINARY...] [-- iomark run options...]
#   bench/instructions.sh /tmp/iomark-old target/release/iomark -- --rw write --bs 128k --qd 8
#   bench/instructions.sh target/release/iomark fio -- --rw randread
#
# "fio" as a binary counts fio's job thread on the same job (--ioengine=null --thread,
# the job's --rw, --bs and --qd as rw, bs and iodepth; other options are not translated).
#
# Default job: 4 KiB sequential writes at QD 1 (--rw write --bs 4k --qd 1); IO_A=4g,
# IO_B=12g (the job's --size is 16g: the null engine opens nothing). A count is not a
# time: a cache miss costs one instruction here and hundreds of cycles on the machine, so
# a build that removes instructions may gain nothing where the job is memory-bound (128 KiB
# writes stamp one cold line of the pool per unit); confirm with bench/ab.sh.
set -euo pipefail
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#bins[@]} -gt 0 ] || { sed -n 2,21p "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
JOB=("$@")
[ ${#JOB[@]} -gt 0 ] || JOB=(--rw write --bs 4k --qd 1)
IO_A=${IO_A:-4g}
IO_B=${IO_B:-12g}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The job in fio's words (rw, bs, iodepth).
FIO_JOB=(--rw=write --bs=4k --iodepth=1)
set -- "${JOB[@]}"
while [ $# -gt 0 ]; do
  case $1 in
    --rw) FIO_JOB[0]=--rw=$2; shift ;;
    --bs) FIO_JOB[1]=--bs=$2; shift ;;
    --qd) FIO_JOB[2]=--iodepth=$2; shift ;;
    *) FIO_JOB+=("?$1") ;;
  esac
  shift
done

# The busiest thread's instruction count and the run's I/Os, for one --io-size.
count() {
  local bin=$1 io=$2
  rm -f "$TMP"/cg*
  local cmd=("$bin" run --engine null --size 16g --io-size "$io" --time-based=0 "${JOB[@]}"
    -q -o "$TMP/r.json" --force)
  if [ "$bin" = fio ]; then
    case " ${FIO_JOB[*]} " in *" ?"*) echo "instructions: fio is given only --rw, --bs and --qd" >&2; exit 2 ;; esac
    cmd=(fio --name=count --ioengine=null --thread --size="$io" "${FIO_JOB[@]}"
      --output-format=json --output="$TMP/f.json")
  fi
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg" \
    "${cmd[@]}" >/dev/null 2>"$TMP/err" ||
    { echo "instructions: $bin failed:" >&2; tail -3 "$TMP/err" >&2; exit 1; }
  local most
  most=$(for f in "$TMP"/cg-*; do awk '/^summary:/ {print $2}' "$f"; done | sort -n | tail -1)
  python3 - "$TMP" "$most" "$bin" <<'EOF'
import json, sys
tmp, most, tool = sys.argv[1:]
if tool == "fio":
    job = json.load(open(f"{tmp}/f.json"))["jobs"][0]
    ios = sum(job[d]["total_ios"] for d in ("read", "write"))
else:
    rep = json.load(open(f"{tmp}/r.json"))["runs"][0]["repetitions"][0]
    ios = sum(rep[d]["ios"] for d in ("read", "write") if rep.get(d))
print(most, ios)
EOF
}

printf '%-40s %16s\n' binary "instructions/I/O"
for b in "${bins[@]}"; do
  read -r ia na < <(count "$b" "$IO_A")
  read -r ib nb < <(count "$b" "$IO_B")
  python3 -c "import sys; print(f'{sys.argv[1]:40s} {(int(sys.argv[3])-int(sys.argv[2]))/(int(sys.argv[5])-int(sys.argv[4])):16.1f}')" \
    "$b" "$ia" "$ib" "$na" "$nb"
done
