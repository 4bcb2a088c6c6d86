#!/usr/bin/env bash
# spindle fileio vs sysbench fileio, side by side on the same file set, interleaved (A B A B).
#
# For each place (tmpfs, where the tool's own overhead shows, and a real disk directory), each
# mode (rndrw, rndrd) and thread count (1, 8) it runs both tools ROUNDS times with the same
# options and prints medians of: requests/s (reads+writes), fsyncs per 100 requests, user CPU
# per request (µs), and peak RSS (MiB), plus the ratio spindle/sysbench.
#
# Usage: benches/fileio-vs-sysbench.sh [DISK_DIR]
#   env: ROUNDS (5), TIME (5 s per run), TOTAL (256M), FILES (16), SPINDLE (path to binary)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
TIME=${TIME:-5}
TOTAL=${TOTAL:-256M}
FILES=${FILES:-16}
DISK_DIR=${1:-${DISK_DIR:-$PWD/target/bench-fileio}}
command -v sysbench >/dev/null || { echo "sysbench is needed: apt-get install sysbench" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed: apt-get install time" >&2; exit 2; }
if [ -z "${SPINDLE:-}" ]; then
  cargo build --release --quiet
  SPINDLE=$PWD/target/release/spindle
fi
TMPFS_DIR=$(mktemp -d /dev/shm/spindle-bench.XXXXXX)
mkdir -p "$DISK_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$TMPFS_DIR" "$WORK"; (cd "$DISK_DIR" && sysbench fileio --file-num=$FILES --file-total-size=$TOTAL cleanup >/dev/null 2>&1) || true' EXIT

# run_one TOOL DIR MODE THREADS -> prints "reqs_per_s fsyncs_per_100 user_us_per_req rss_mib"
run_one() {
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

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-6s %-6s %3s | %12s %12s %6s | %8s %8s | %8s %8s %6s | %7s %7s\n' \
  place mode thr "sb req/s" "sp req/s" ratio "sb fs%" "sp fs%" "sb µs/rq" "sp µs/rq" ratio "sb MiB" "sp MiB"
for place in tmpfs disk; do
  dir=$TMPFS_DIR; [ $place = disk ] && dir=$DISK_DIR
  (cd "$dir" && sysbench fileio --file-num=$FILES --file-total-size=$TOTAL prepare >/dev/null)
  for mode in rndrw rndrd; do
    for threads in 1 8; do
      : >"$WORK/sb"; : >"$WORK/sp"
      for _ in $(seq "$ROUNDS"); do
        run_one sysbench "$dir" $mode $threads >>"$WORK/sb"
        run_one spindle "$dir" $mode $threads >>"$WORK/sp"
      done
      col() { awk -v c=$2 '{print $c}' "$WORK/$1" | median; }
      sbr=$(col sb 1); spr=$(col sp 1); sbf=$(col sb 2); spf=$(col sp 2)
      sbu=$(col sb 3); spu=$(col sp 3); sbm=$(col sb 4); spm=$(col sp 4)
      printf '%-6s %-6s %3s | %12.0f %12.0f %6.3f | %8.2f %8.2f | %8.3f %8.3f %6.3f | %7.1f %7.1f\n' \
        $place $mode $threads "$sbr" "$spr" "$(awk -v a="$spr" -v b="$sbr" 'BEGIN{print (b>0 ? a/b : 0)}')" "$sbf" "$spf" \
        "$sbu" "$spu" "$(awk -v a="$spu" -v b="$sbu" 'BEGIN{print (b>0 ? a/b : 0)}')" "$sbm" "$spm"
    done
  done
done
