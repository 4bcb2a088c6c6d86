#!/usr/bin/env bash
# spindle's async fileio engine (io_uring) against fio's io_uring engine at queue depth: the
# same prepared files, the same requests (BS blocks, O_DIRECT, no fsync), interleaved pairs
# with the order alternating (spindle first, then fio first, …).
#
# For every cell (place × mode × threads × QD) it prints:
#   the median requests/s of each tool over ROUNDS pairs and the median of the per-pair ratios
#   spindle/fio (the figure to read: a pair shares the machine's moment), the pairs' ratios;
#   CPU (user+system) µs per request of both, from /usr/bin/time over the timed runs;
#   io_uring_enter calls, all system calls, futex calls (lock waits and wake-ups) and context
#   switches per request of both, counted over fixed work (COUNT_IOS requests, setup included)
#   with `perf stat` (the kernel's syscall tracepoints and its context-switch counter: the tool
#   is not stopped at each call) or, with COUNTER=strace or without perf, `strace -f -c` (no
#   context switches then).
#
# The tools:
#   spindle fileio --file-io-mode=async --file-async-backlog=QD --file-extra-flags=direct
#                  --file-fsync-freq=0 --file-fsync-end=off --threads=T
#   fio --ioengine=io_uring --iodepth=QD --direct=1 --numjobs=T (defaults otherwise: no fixed
#       buffers, no registered files, no SQ polling), over the same files (--filename=a:b:c:d).
# Sequential modes differ in one way: spindle's threads share one sequential stream (sysbench's
# rule), each fio job runs its own. Sequential writes are `seqrewr` (fio's --rw=write over the
# prepared files): spindle's `seqwr` truncates the files at the start of the run (sysbench's
# O_CREAT|O_TRUNC), so every write extends a file and ext4 allocates blocks under the inode
# lock, where fio overwrites allocated blocks: not the same work (MODES=seqwr runs it anyway).
#
# Places (PLACES): `ext4` is a directory on ext4 (DIR, default a fresh one under /var/tmp, which
# must be on ext4), FILES files of TOTAL/FILES each. `loop` is a raw block device: a loop device
# (`losetup --direct-io=on`, so its requests go to the backing file with O_DIRECT rather than
# through the page cache) over one TOTAL-byte file prepared in DIR, that is over ext4 on the same
# disk; spindle runs on it the way sysbench users point fileio at a device, through a link
# `test_file.0` -> /dev/loopN in a directory of its own (`--file-num=1`: spindle uses the device
# as it is and writes to it only because it is blank), fio with --filename=/dev/loopN. Needs root.
#
# On a disk the device's service time is what both tools measure and the pairs' noise hides
# their own cost; to see that cost, point DIR at ext4 on a RAM block device (BENCHMARKS.md:
# `echo 3G > /sys/block/zram0/disksize; mkfs.ext4 /dev/zram0; mount /dev/zram0 /mnt/zr`).
#
# Usage: benches/fileio-depth.sh [DIR]
#   env: ROUNDS (4 pairs), TIME (5 s per timed run), QDS ("1 8 32"), MODES ("rndrd rndwr seqrd
#        seqrewr"), THREADS ("1 4"), PLACES ("ext4 loop"; "ext4" without root), COUNT_IOS (20000; 0 = no counts), COUNTER (perf|strace),
#        TOTAL (1G), FILES (4), BS (16K), SPINDLE (binary; built with cargo when unset),
#        OUT (a directory to keep every run's raw output in)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-4}
TIME=${TIME:-5}
QDS=${QDS:-1 8 32}
MODES=${MODES:-rndrd rndwr seqrd seqrewr}
THREADS=${THREADS:-1 4}
if [ "$(id -u)" = 0 ]; then PLACES=${PLACES:-ext4 loop}; else PLACES=${PLACES:-ext4}; fi
COUNT_IOS=${COUNT_IOS:-20000}
TOTAL=${TOTAL:-1G}
FILES=${FILES:-4}
BS=${BS:-16K}

need() { command -v "$1" >/dev/null || { echo "$1 is needed: $2" >&2; exit 2; }; }
need fio "apt-get install fio"
need python3 "apt-get install python3"
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed: apt-get install time" >&2; exit 2; }
if [ -z "${COUNTER:-}" ]; then
  if perf stat -x, -e syscalls:sys_enter_io_uring_enter -- true >/dev/null 2>&1; then
    COUNTER=perf
  else
    COUNTER=strace
  fi
fi
[ "$COUNT_IOS" = 0 ] || need "$COUNTER" "apt-get install $COUNTER (or COUNT_IOS=0)"
if [ -z "${SPINDLE:-}" ]; then
  cargo build --release --quiet
  SPINDLE=$PWD/target/release/spindle
fi

DIR=${1:-${DIR:-}}
MADE_DIR=
if [ -z "$DIR" ]; then
  DIR=$(mktemp -d /var/tmp/spindle-depth.XXXXXX)
  MADE_DIR=$DIR
fi
mkdir -p "$DIR"
[ "$(stat -f -c %T "$DIR")" = ext2/ext3 ] || { echo "$DIR is not on ext4" >&2; exit 2; }
WORK=${OUT:-$(mktemp -d)}
mkdir -p "$WORK"
LOOPDEV= LOOPDIR=
cleanup() {
  [ -z "$LOOPDEV" ] || losetup -d "$LOOPDEV" || true
  [ -z "$LOOPDIR" ] || rm -rf "$LOOPDIR"
  if [ -d "$DIR/loop-backing" ]; then
    "$SPINDLE" fileio --dir="$DIR/loop-backing" --file-num=1 --file-total-size="$TOTAL" cleanup >/dev/null 2>&1 || true
    rmdir "$DIR/loop-backing" 2>/dev/null || true
  fi
  "$SPINDLE" fileio --dir="$DIR" --file-num="$FILES" --file-total-size="$TOTAL" cleanup >/dev/null 2>&1 || true
  [ -z "$MADE_DIR" ] || rmdir "$MADE_DIR" 2>/dev/null || true
  [ -n "${OUT:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print 0}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b>0 ? a/b : 0)}'; }
bytes() { numfmt --from=iec "$1"; }

fio_rw() { case $1 in rndrd) echo randread ;; rndwr) echo randwrite ;; seqrd) echo read ;; seqwr | seqrewr) echo write ;; esac; }
# The place being measured: spindle's directory and file count, fio's --filename.
place() { # ext4|loop
  if [ "$1" = ext4 ]; then
    PDIR=$DIR PFILES=$FILES
    PFIO=$(for ((i = 0; i < FILES; i++)); do printf '%s/test_file.%d\n' "$DIR" $i; done | paste -sd:)
  else
    PDIR=$LOOPDIR PFILES=1 PFIO=$LOOPDEV
  fi
}

# The command line of one run. LIMIT: "time" (TIME seconds) or a number of requests in all.
spindle_cmd() { # MODE THREADS QD LIMIT
  local lim=(--time="$TIME")
  [ "$4" = time ] || lim=(--time=0 --events="$4")
  echo "$SPINDLE" fileio --dir="$PDIR" --file-num="$PFILES" --file-total-size="$TOTAL" \
    --file-block-size="$BS" --file-test-mode="$1" --threads="$2" --file-io-mode=async \
    --file-async-backlog="$3" --file-extra-flags=direct --file-fsync-freq=0 --file-fsync-end=off \
    "${lim[@]}" run
}
fio_cmd() { # MODE THREADS QD LIMIT
  local lim=(--time_based --runtime="$TIME")
  # Fixed work: each of the THREADS jobs moves its share of the requests.
  [ "$4" = time ] || lim=(--io_size=$(($4 / $2 * $(bytes "$BS"))))
  echo fio --name=depth --ioengine=io_uring --rw="$(fio_rw "$1")" --bs="$BS" --iodepth="$3" \
    --numjobs="$2" --direct=1 --filename="$PFIO" --size="$TOTAL" --norandommap \
    --randrepeat=0 --zero_buffers "${lim[@]}" --group_reporting --output-format=json
}

# Requests and requests/s from a run's output: "requests reqs_per_s".
parse() { # TOOL OUTPUT
  if [ "$1" = fio ]; then
    python3 - "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["total_ios"] + j["write"]["total_ios"], j["read"]["iops"] + j["write"]["iops"])
EOF
  else
    awk '/reads\/s:/ {r=$2} /writes\/s:/ {w=$2} /total number of events:/ {n=$NF}
         END {printf "%d %.2f\n", n, r+w}' "$2"
  fi
}

# timed TOOL MODE THREADS QD -> "reqs_per_s cpu_us_per_req"
timed() {
  local out=$WORK/$1-$2-$3-$4-$(date +%s%N).out tm=$WORK/time.txt cmd
  read -r -a cmd <<<"$("${1}_cmd" "$2" "$3" "$4" time)"
  /usr/bin/time -f '%U %S' -o "$tm" "${cmd[@]}" >"$out"
  read -r n rate <<<"$(parse "$1" "$out")"
  awk -v n="$n" -v r="$rate" -v tm="$(cat "$tm")" \
    'BEGIN {split(tm, a, " "); printf "%.2f %.3f\n", r, (n>0 ? (a[1]+a[2])*1e6/n : 0)}'
}

# counted TOOL MODE THREADS QD -> "enters_per_req syscalls_per_req futex_per_req cs_per_req"
# over COUNT_IOS requests (futex calls: lock waits and wake-ups; cs: context switches, perf only)
counted() {
  local out=$WORK/$1-$2-$3-$4-count.out cnt=$WORK/count.txt cmd enters calls futex cs=0
  read -r -a cmd <<<"$("${1}_cmd" "$2" "$3" "$4" "$COUNT_IOS")"
  if [ "$COUNTER" = perf ]; then
    perf stat -x, -o "$cnt" -e syscalls:sys_enter_io_uring_enter,raw_syscalls:sys_enter \
      -e syscalls:sys_enter_futex,context-switches -- "${cmd[@]}" >"$out"
    enters=$(awk -F, '/sys_enter_io_uring_enter/ {print $1}' "$cnt")
    calls=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$cnt")
    futex=$(awk -F, '/sys_enter_futex/ {print $1}' "$cnt")
    cs=$(awk -F, '/context-switches/ {print $1}' "$cnt")
  else
    strace -f -c -o "$cnt" "${cmd[@]}" >"$out"
    enters=$(awk '$NF == "io_uring_enter" {print $4}' "$cnt")
    calls=$(awk '$NF == "total" {print $3}' "$cnt")
    futex=$(awk '$NF == "futex" {print $4}' "$cnt")
  fi
  read -r n _ <<<"$(parse "$1" "$out")"
  awk -v e="${enters:-0}" -v c="${calls:-0}" -v f="${futex:-0}" -v s="${cs:-0}" -v n="$n" \
    'BEGIN {if (n == 0) n = -1; printf "%.3f %.3f %.4f %.3f\n", e/n, c/n, f/n, s/n}'
}

echo "== spindle async vs fio io_uring, $FILES files, $TOTAL, $BS, O_DIRECT, no fsync, ${TIME}s runs, $ROUNDS alternating pairs"
echo "== $(date -u '+%F %T UTC'), $(nproc) CPUs, $(uname -r), $DIR on $(df --output=source "$DIR" | tail -1)"
"$SPINDLE" fileio --dir="$DIR" --file-num="$FILES" --file-total-size="$TOTAL" prepare >/dev/null
if [[ " $PLACES " == *" loop "* ]]; then
  # The loop device's backing file: TOTAL bytes written (zeros) on ext4 by spindle's prepare.
  mkdir -p "$DIR/loop-backing"
  "$SPINDLE" fileio --dir="$DIR/loop-backing" --file-num=1 --file-total-size="$TOTAL" prepare >/dev/null
  LOOPDEV=$(losetup --direct-io=on --find --show "$DIR/loop-backing/test_file.0")
  LOOPDIR=$(mktemp -d)
  ln -s "$LOOPDEV" "$LOOPDIR/test_file.0"
  echo "== loop: $LOOPDEV over $DIR/loop-backing/test_file.0, direct I/O $(cat /sys/block/"${LOOPDEV#/dev/}"/loop/dio)"
fi
printf '%-5s %-5s %3s %3s | %9s %9s %6s | %-36s | %6s %6s | %6s %6s | %6s %6s | %6s %6s | %6s %6s\n' \
  place mode thr qd "sp rq/s" "fio rq/s" ratio "pair ratios" "sp µs" "fio µs" "sp ent" "fioent" \
  "sp sys" "fiosys" "sp ftx" "fioftx" "sp cs" "fio cs"
for pl in $PLACES; do
place "$pl"
for mode in $MODES; do
  for threads in $THREADS; do
    for qd in $QDS; do
      : >"$WORK/sp"; : >"$WORK/fio"; : >"$WORK/ratios"
      for ((k = 0; k < ROUNDS; k++)); do
        if ((k % 2 == 0)); then
          sp=$(timed spindle $mode $threads $qd); f=$(timed fio $mode $threads $qd)
        else
          f=$(timed fio $mode $threads $qd); sp=$(timed spindle $mode $threads $qd)
        fi
        echo "$sp" >>"$WORK/sp"; echo "$f" >>"$WORK/fio"
        ratio "${sp%% *}" "${f%% *}" >>"$WORK/ratios"; echo >>"$WORK/ratios"
      done
      spc="0 0 0 0" fc="0 0 0 0"
      if [ "$COUNT_IOS" != 0 ]; then
        spc=$(counted spindle $mode $threads $qd); fc=$(counted fio $mode $threads $qd)
      fi
      read -r spe sps spf spx <<<"$spc"; read -r fe fs ff fx <<<"$fc"
      printf '%-5s %-5s %3s %3s | %9.0f %9.0f %6.3f | %-36s | %6.2f %6.2f | %6.3f %6.3f | %6.3f %6.3f | %6.4f %6.4f | %6.3f %6.3f\n' \
        "$pl" $mode $threads $qd \
        "$(awk '{print $1}' "$WORK/sp" | median)" "$(awk '{print $1}' "$WORK/fio" | median)" \
        "$(median <"$WORK/ratios")" "$(paste -sd' ' "$WORK/ratios")" \
        "$(awk '{print $2}' "$WORK/sp" | median)" "$(awk '{print $2}' "$WORK/fio" | median)" \
        "$spe" "$fe" "$sps" "$fs" "$spf" "$ff" "$spx" "$fx"
    done
  done
done
done
