#!/usr/bin/env bash
# Client CPU per query: spindle oltp (each --client-io mode) vs sysbench 1.0 OLTP, counted over
# fixed work (--events=N --time=0), so the numbers do not move with the machine's load.
#
# Starts one private server with `spindle mysqld`, prepares TABLES x TABLE_SIZE rows, then for
# every workload, thread count and client (spindle per mode in MODES, sysbench):
#  * user instructions per query, marginal: `valgrind --tool=cachegrind --cache-sim=no` counts
#    the instructions the client executes in user space (every thread), at CG_QUERIES queries
#    and at 3 x CG_QUERIES; the difference divided by the difference in queries leaves out the start-up
#    (connecting, preparing, sysbench's Lua). Exact and repeatable, but user space only.
#  * with perf stat (REPS runs at QUERIES queries, the median of each count): task-clock, user
#    and system time (µs per query), context switches and system calls per query; and, where
#    the CPU's counters are reachable (not in most VMs), instructions:u and instructions:k.
#    These include the start-up: keep QUERIES large.
# Prints one table; BENCHMARKS.md holds measured ones.
#
# Environment:
#   THREADS="1 4"  WORKLOADS="point_select read_write"  MODES="direct direct-epoll reactor"
#   CG_QUERIES=4000      cachegrind's smaller run (queries; the larger is 3x)
#   QUERIES=40000 REPS=3 perf stat runs (events = QUERIES / queries per event)
#   TABLES=4 TABLE_SIZE=100000 BUFFER_POOL=1G
#   VALGRIND=1|0         count user instructions with cachegrind (default: when installed)
#   SPINDLE=target/release/spindle   (built with `cargo build --release` when missing)
#   KEEP=1               keep the work directory (server stopped anyway)
set -euo pipefail

THREADS=${THREADS:-"1 4"}
WORKLOADS=${WORKLOADS:-"point_select read_write"}
MODES=${MODES:-"direct direct-epoll reactor"}
CG_QUERIES=${CG_QUERIES:-4000}
QUERIES=${QUERIES:-40000}
REPS=${REPS:-3}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
BUFFER_POOL=${BUFFER_POOL:-1G}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPINDLE=${SPINDLE:-$ROOT/target/release/spindle}

. "$ROOT/benches/lib/oltp-server.sh"
need sysbench "apt install sysbench"
need perf "apt install linux-perf"
need python3 "apt install python3"
if [ -z "${VALGRIND:-}" ]; then
  if command -v valgrind >/dev/null; then VALGRIND=1; else VALGRIND=0; fi
fi
build_spindle
EVS=task-clock,user_time,system_time,context-switches,raw_syscalls:sys_enter
if perf stat -x, -e instructions:u,instructions:k -- true 2>&1 | grep -q "not supported"; then
  PMU=0
else
  PMU=1
  EVS=$EVS,instructions:u,instructions:k
fi

bench_work spindle-cpu
RAW=$WORK/raw.tsv
: >"$RAW"

queries() { grep -oP 'queries:\s+\K\d+' "$1"; }

# cachegrind EVENTS -- command...: "queries instructions" of one run under cachegrind.
cachegrind() {
  local ev=$1 out=$WORK/cg.out
  shift 2
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$@" --events="$ev" --time=0 run >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
  echo "$(queries "$out") $(grep -oP 'I\s+refs:\s+\K[\d,]+' "$out" | tr -d ,)"
}

# measure NAME WORKLOAD THREADS -- command...: one line to $RAW (the command without
# --events/--time/run, which are added here).
measure() {
  local name=$1 wl=$2 th=$3
  shift 4
  local ev=$((QUERIES / $(per_event "$wl"))) out=$WORK/out.txt cg="- - - -" r
  local cg_ev=$((CG_QUERIES / $(per_event "$wl")))
  if [ "$VALGRIND" = 1 ]; then
    cg="$(cachegrind "$cg_ev" -- "$@") $(cachegrind $((3 * cg_ev)) -- "$@")"
  fi
  : >"$WORK/perf.all"
  for r in $(seq "$REPS"); do
    perf stat -x, -o "$WORK/perf.txt" -e "$EVS" -- "$@" --events="$ev" --time=0 run >"$out" 2>&1 ||
      { cat "$out" >&2; exit 1; }
    sed "s/^/$(queries "$out"),/" "$WORK/perf.txt" >>"$WORK/perf.all"
  done
  python3 - "$name" "$wl" "$th" "$WORK/perf.all" $cg >>"$RAW" <<'EOF'
import statistics, sys
name, wl, th, perf, q1, i1, q3, i3 = sys.argv[1:9]
per = {}
for l in open(perf):
    f = l.strip().split(",")
    if len(f) > 3 and f[0].isdigit():
        try:
            v = float(f[1])
        except ValueError:
            continue
        ev = f[3].split(":")[-1] if "sys_enter" in f[3] else f[3]
        per.setdefault(ev, []).append(v / max(1, int(f[0])))
med = lambda k, scale=1: f"{statistics.median(per[k]) * scale:.2f}" if k in per else "-"
user_ins = "-"
if q1 != "-":
    user_ins = f"{(int(i3) - int(i1)) / max(1, int(q3) - int(q1)):.0f}"
# task-clock is in ms; user_time and system_time in ns.
print("\t".join([name, wl, th, user_ins, med("instructions:u"), med("instructions:k"),
                 med("task-clock", 1e3), med("user_time", 1e-3), med("system_time", 1e-3),
                 med("context-switches"), med("sys_enter")]))
EOF
  echo "$name $wl t=$th: $(tail -1 "$RAW" | cut -f4-)" >&2
}

start_server
echo "server: $("$SPINDLE" mysqld status --datadir "$DATADIR" | head -1)" >&2
"$SPINDLE" oltp read_write $(opts) --threads=4 prepare >/dev/null

for wl in $WORKLOADS; do
  for th in $THREADS; do
    for mode in $MODES; do
      measure "spindle $mode" "$wl" "$th" -- \
        "$SPINDLE" oltp "$wl" $(opts) --threads="$th" --client-io="$mode"
    done
    measure sysbench "$wl" "$th" -- sysbench "oltp_$wl" $(opts) --threads="$th"
  done
done

echo
echo "Client cost per query over fixed work: user instructions (cachegrind, marginal over" \
  "$CG_QUERIES -> $((3 * CG_QUERIES)) queries); perf stat medians of $REPS runs of $QUERIES queries" \
  "(start-up included)$([ "$PMU" = 0 ] && echo '; no CPU counters here: instructions:u/k -')"
echo
echo "| client | workload | threads | user instructions (cachegrind) | instructions:u | instructions:k | task-clock µs | user µs | sys µs | context switches | syscalls |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while IFS=$'\t' read -r -a f; do
  echo "| ${f[0]} | ${f[1]} | ${f[2]} | ${f[3]} | ${f[4]} | ${f[5]} | ${f[6]} | ${f[7]} | ${f[8]} | ${f[9]} | ${f[10]} |"
done <"$RAW"
