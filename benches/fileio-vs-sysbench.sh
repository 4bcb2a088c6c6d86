#!/usr/bin/env bash
# spindle fileio vs sysbench fileio (and fio), side by side on the same file set, interleaved
# (A B A B …), medians of ROUNDS rounds. Three parts (PARTS, default all three):
#
# sync   For tmpfs (where the tool's own overhead shows) and a disk directory, rndrw and rndrd at
#        1 and 8 threads: requests/s (reads+writes), fsyncs per 100 requests, user CPU per
#        request (µs), peak RSS (MiB), and the ratios spindle/sysbench.
# async  --file-io-mode=async: spindle (io_uring) vs sysbench (libaio) vs fio (io_uring) at the
#        same queue depth, on tmpfs and on ext4 with O_DIRECT; rndrd and rndwr (no fsyncs, so
#        all three do the same work); 1 and 4 threads; backlog (iodepth) 1, 8 and 128. Columns:
#        requests/s; user CPU per request (µs: the tool's own work); user+system CPU per request
#        (µs: the kernel's I/O work included; io_uring's worker threads count here, libaio on a
#        buffered file does the copy inside io_submit); peak RSS; ratios spindle/sysbench and
#        spindle/fio.
# fill   spindle --file-fill=zero vs random, write-heavy modes (rndwr, seqrewr), sync and async
#        (QD 8), tmpfs and ext4 O_DIRECT; and prepare's speed with each fill.
#
# Usage: benches/fileio-vs-sysbench.sh [DISK_DIR]
#   env: PARTS ("sync async fill"), ROUNDS (5), TIME (5 s per run), TOTAL (256M), FILES (16),
#        BS (16K, async and fill parts), SPINDLE (path to binary)
# DISK_DIR must be on ext4 for the async and fill parts (O_DIRECT); when it is not and this runs
# as root, an ext4 filesystem in a loop file is made and mounted for them.
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS=${PARTS:-sync async fill}
ROUNDS=${ROUNDS:-5}
TIME=${TIME:-5}
TOTAL=${TOTAL:-256M}
FILES=${FILES:-16}
BS=${BS:-16K}
DISK_DIR=${1:-${DISK_DIR:-$PWD/target/bench-fileio}}
command -v sysbench >/dev/null || { echo "sysbench is needed: apt-get install sysbench" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed: apt-get install time" >&2; exit 2; }
if [[ $PARTS == *async* ]]; then
  command -v fio >/dev/null || { echo "fio is needed: apt-get install fio" >&2; exit 2; }
fi
if [ -z "${SPINDLE:-}" ]; then
  cargo build --release --quiet
  SPINDLE=$PWD/target/release/spindle
fi
TMPFS_DIR=$(mktemp -d /dev/shm/spindle-bench.XXXXXX)
mkdir -p "$DISK_DIR"
WORK=$(mktemp -d)
LOOP_MNT=
cleanup() {
  rm -rf "$TMPFS_DIR"
  for d in "$DISK_DIR" ${LOOP_MNT:+"$LOOP_MNT"}; do
    (cd "$d" && sysbench fileio --file-num=$FILES --file-total-size=$TOTAL cleanup >/dev/null 2>&1) || true
  done
  if [ -n "$LOOP_MNT" ]; then umount "$LOOP_MNT" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { awk -v c=$2 '{print $c}' "$WORK/$1" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b>0 ? a/b : 0)}'; }
sb_prepare() { (cd "$1" && sysbench fileio --file-num=$FILES --file-total-size=$TOTAL prepare >/dev/null); }
sb_cleanup() { (cd "$1" && sysbench fileio --file-num=$FILES --file-total-size=$TOTAL cleanup >/dev/null); }

# A directory on ext4 for O_DIRECT runs: DISK_DIR if it is on ext4, else a loop-mounted ext4.
ext4_dir() {
  if [ "$(stat -f -c %T "$DISK_DIR")" = ext2/ext3 ]; then
    echo "$DISK_DIR"
    return
  fi
  [ "$(id -u)" = 0 ] || { echo "$DISK_DIR is not on ext4 and making one needs root" >&2; exit 2; }
  LOOP_MNT=$WORK/ext4
  mkdir -p "$LOOP_MNT"
  truncate -s 2G "$WORK/ext4.img"
  mkfs.ext4 -q "$WORK/ext4.img"
  mount -o loop "$WORK/ext4.img" "$LOOP_MNT"
  echo "$LOOP_MNT"
}

# --- sync ----------------------------------------------------------------------------------------

# run_sync TOOL DIR MODE THREADS -> "reqs_per_s fsyncs_per_100 user_us_per_req rss_mib"
run_sync() {
  local tool=$1 dir=$2 mode=$3 threads=$4 out=$WORK/out.txt tm=$WORK/time.txt
  local opts=(--file-num=$FILES --file-total-size=$TOTAL --file-test-mode=$mode --threads=$threads --time=$TIME)
  if [ "$tool" = sysbench ]; then
    (cd "$dir" && /usr/bin/time -f '%U %S %M' -o "$tm" sysbench fileio "${opts[@]}" run >"$out")
  else
    /usr/bin/time -f '%U %S %M' -o "$tm" "$SPINDLE" fileio --dir="$dir" "${opts[@]}" run >"$out"
  fi
  awk -v tm="$(cat "$tm")" '
    /reads\/s:/ {r=$2} /writes\/s:/ {w=$2} /fsyncs\/s:/ {f=$2} /total time:/ {t=$3+0}
    END { split(tm, a, " "); req=(r+w)*t;
          printf "%.2f %.2f %.3f %.1f\n", r+w, (r+w>0 ? 100*f/(r+w) : 0), (req>0 ? a[1]*1e6/req : 0), a[3]/1024 }' "$out"
}

part_sync() {
  echo "== sync: spindle vs sysbench, $FILES files, $TOTAL, ${TIME}s runs, medians of $ROUNDS"
  printf '%-6s %-6s %3s | %12s %12s %6s | %8s %8s | %8s %8s %6s | %7s %7s\n' \
    place mode thr "sb req/s" "sp req/s" ratio "sb fs%" "sp fs%" "sb µs/rq" "sp µs/rq" ratio "sb MiB" "sp MiB"
  for place in tmpfs disk; do
    dir=$TMPFS_DIR; [ $place = disk ] && dir=$DISK_DIR
    sb_prepare "$dir"
    for mode in rndrw rndrd; do
      for threads in 1 8; do
        : >"$WORK/sb"; : >"$WORK/sp"
        for _ in $(seq "$ROUNDS"); do
          run_sync sysbench "$dir" $mode $threads >>"$WORK/sb"
          run_sync spindle "$dir" $mode $threads >>"$WORK/sp"
        done
        sbr=$(col sb 1); spr=$(col sp 1); sbu=$(col sb 3); spu=$(col sp 3)
        printf '%-6s %-6s %3s | %12.0f %12.0f %6s | %8.2f %8.2f | %8.3f %8.3f %6s | %7.1f %7.1f\n' \
          $place $mode $threads "$sbr" "$spr" "$(ratio "$spr" "$sbr")" "$(col sb 2)" "$(col sp 2)" \
          "$sbu" "$spu" "$(ratio "$spu" "$sbu")" "$(col sb 4)" "$(col sp 4)"
      done
    done
    sb_cleanup "$dir"
  done
}

# --- async ---------------------------------------------------------------------------------------

# The workload all three tools run: random reads or writes of BS, no fsync.
sb_async_opts() { # MODE THREADS QD DIRECT
  local o=(--file-num=$FILES --file-total-size=$TOTAL --file-block-size=$BS --file-test-mode=$1
    --threads=$2 --time=$TIME --file-io-mode=async --file-async-backlog=$3
    --file-fsync-freq=0 --file-fsync-end=off)
  [ "$4" = 1 ] && o+=(--file-extra-flags=direct)
  echo "${o[@]}"
}

# run_async TOOL DIR MODE THREADS QD DIRECT -> "reqs_per_s user_us_per_req cpu_us_per_req rss_mib"
run_async() {
  local tool=$1 dir=$2 mode=$3 threads=$4 qd=$5 direct=$6 out=$WORK/out.txt tm=$WORK/time.txt
  local opts
  read -r -a opts <<<"$(sb_async_opts $mode $threads $qd $direct)"
  case $tool in
  sysbench) (cd "$dir" && /usr/bin/time -f '%U %S %M' -o "$tm" sysbench fileio "${opts[@]}" run >"$out") ;;
  spindle) /usr/bin/time -f '%U %S %M' -o "$tm" "$SPINDLE" fileio --dir="$dir" "${opts[@]}" run >"$out" ;;
  fio)
    local files rw=randread
    [ $mode = rndwr ] && rw=randwrite
    files=$(for ((i = 0; i < FILES; i++)); do printf '%s/test_file.%d\n' "$dir" $i; done | paste -sd:)
    /usr/bin/time -f '%U %S %M' -o "$tm" fio --name=bench --ioengine=io_uring --rw=$rw --bs=$BS \
      --iodepth=$qd --numjobs=$threads --direct=$direct --filename="$files" --size=$TOTAL \
      --norandommap --randrepeat=0 --zero_buffers --time_based --runtime=$TIME \
      --group_reporting --output-format=json >"$out"
    python3 - "$out" "$(cat "$tm")" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
u, s, m = (float(x) for x in sys.argv[2].split())
ios = j["read"]["total_ios"] + j["write"]["total_ios"]
iops = j["read"]["iops"] + j["write"]["iops"]
n = max(ios, 1)
print(f"{iops:.2f} {u * 1e6 / n:.3f} {(u + s) * 1e6 / n:.3f} {m / 1024:.1f}")
EOF
    return
    ;;
  esac
  awk -v tm="$(cat "$tm")" '
    /reads\/s:/ {r=$2} /writes\/s:/ {w=$2} /total time:/ {t=$3+0}
    END { split(tm, a, " "); req=(r+w)*t;
          printf "%.2f %.3f %.3f %.1f\n", r+w, (req>0 ? a[1]*1e6/req : 0), (req>0 ? (a[1]+a[2])*1e6/req : 0), a[3]/1024 }' "$out"
}

part_async() {
  echo "== async: spindle (io_uring) vs sysbench (libaio) vs fio (io_uring), $FILES files, $TOTAL, $BS, no fsync, ${TIME}s runs, medians of $ROUNDS"
  printf '%-11s %-5s %3s %3s | %8s %8s %8s %5s %5s | %6s %6s %6s %5s | %6s %6s %6s %5s %5s | %4s %4s %4s\n' \
    place mode thr qd "sb rq/s" "sp rq/s" "fio IOPS" sp/sb sp/fio \
    "sb usr" "sp usr" "fiousr" sp/sb "sb cpu" "sp cpu" "fiocpu" sp/sb sp/fio sbMB spMB fioMB
  local ext4
  ext4=$(ext4_dir)
  for place in tmpfs ext4-direct; do
    dir=$TMPFS_DIR direct=0
    [ $place = ext4-direct ] && dir=$ext4 direct=1
    sb_prepare "$dir"
    for mode in rndrd rndwr; do
      for threads in 1 4; do
        for qd in 1 8 128; do
          : >"$WORK/sb"; : >"$WORK/sp"; : >"$WORK/fio"
          for _ in $(seq "$ROUNDS"); do
            run_async sysbench "$dir" $mode $threads $qd $direct >>"$WORK/sb"
            run_async spindle "$dir" $mode $threads $qd $direct >>"$WORK/sp"
            run_async fio "$dir" $mode $threads $qd $direct >>"$WORK/fio"
          done
          sbr=$(col sb 1); spr=$(col sp 1); fr=$(col fio 1)
          sbu=$(col sb 2); spu=$(col sp 2); fu=$(col fio 2)
          sbc=$(col sb 3); spc=$(col sp 3); fc=$(col fio 3)
          printf '%-11s %-5s %3s %3s | %8.0f %8.0f %8.0f %5.2f %5.2f | %6.2f %6.2f %6.2f %5.2f | %6.2f %6.2f %6.2f %5.2f %5.2f | %4.1f %4.1f %4.1f\n' \
            $place $mode $threads $qd "$sbr" "$spr" "$fr" "$(ratio "$spr" "$sbr")" "$(ratio "$spr" "$fr")" \
            "$sbu" "$spu" "$fu" "$(ratio "$spu" "$sbu")" \
            "$sbc" "$spc" "$fc" "$(ratio "$spc" "$sbc")" "$(ratio "$spc" "$fc")" \
            "$(col sb 4)" "$(col sp 4)" "$(col fio 4)"
        done
      done
    done
    sb_cleanup "$dir"
  done
}

# --- fill ----------------------------------------------------------------------------------------

# run_fill DIR FILL MODE IO DIRECT -> "reqs_per_s cpu_us_per_req"
run_fill() {
  local dir=$1 fill=$2 mode=$3 io=$4 direct=$5 out=$WORK/out.txt tm=$WORK/time.txt
  local opts=(--file-num=$FILES --file-total-size=$TOTAL --file-block-size=$BS --file-test-mode=$mode
    --time=$TIME --file-fill=$fill --file-io-mode=$io --file-async-backlog=8)
  [ "$direct" = 1 ] && opts+=(--file-extra-flags=direct)
  /usr/bin/time -f '%U %S %M' -o "$tm" "$SPINDLE" fileio --dir="$dir" "${opts[@]}" run >"$out"
  awk -v tm="$(cat "$tm")" '
    /reads\/s:/ {r=$2} /writes\/s:/ {w=$2} /total time:/ {t=$3+0}
    END { split(tm, a, " "); req=(r+w)*t;
          printf "%.2f %.3f\n", r+w, (req>0 ? (a[1]+a[2])*1e6/req : 0) }' "$out"
}

# prepare_speed DIR FILL -> MiB/s of `spindle fileio prepare`
prepare_speed() {
  "$SPINDLE" fileio --dir="$1" --file-num=$FILES --file-total-size=$TOTAL --file-fill=$2 prepare |
    awk '/bytes written in/ {gsub(/[()]/, ""); print $(NF-1)}'
  "$SPINDLE" fileio --dir="$1" --file-num=$FILES --file-total-size=$TOTAL cleanup >/dev/null
}

part_fill() {
  echo "== fill: spindle --file-fill=zero vs random, $FILES files, $TOTAL, $BS, ${TIME}s runs (periodic fsync on), medians of $ROUNDS"
  printf '%-11s %-8s %-5s | %10s %10s %6s | %8s %8s %6s\n' \
    place mode io "zero rq/s" "rand rq/s" ratio "zero µs" "rand µs" ratio
  local ext4
  ext4=$(ext4_dir)
  for place in tmpfs ext4-direct; do
    dir=$TMPFS_DIR direct=0
    [ $place = ext4-direct ] && dir=$ext4 direct=1
    : >"$WORK/pz"; : >"$WORK/pr"
    for _ in $(seq "$ROUNDS"); do
      prepare_speed "$dir" zero >>"$WORK/pz"
      prepare_speed "$dir" random >>"$WORK/pr"
    done
    printf '%-11s %-8s %-5s | %10.1f %10.1f %6s |   (prepare, MiB/s)\n' $place prepare sync \
      "$(col pz 1)" "$(col pr 1)" "$(ratio "$(col pr 1)" "$(col pz 1)")"
    sb_prepare "$dir"
    for mode in rndwr seqrewr; do
      for io in sync async; do
        : >"$WORK/z"; : >"$WORK/r"
        for _ in $(seq "$ROUNDS"); do
          run_fill "$dir" zero $mode $io $direct >>"$WORK/z"
          run_fill "$dir" random $mode $io $direct >>"$WORK/r"
        done
        zr=$(col z 1); rr=$(col r 1); zc=$(col z 2); rc=$(col r 2)
        printf '%-11s %-8s %-5s | %10.0f %10.0f %6s | %8.2f %8.2f %6s\n' $place $mode $io \
          "$zr" "$rr" "$(ratio "$rr" "$zr")" "$zc" "$rc" "$(ratio "$rc" "$zc")"
      done
    done
    sb_cleanup "$dir"
  done
}

for part in $PARTS; do
  "part_$part"
done
